// Hill climbing over one-layer hardmax pairs for a chosen objective, then greedy shrinking.
#include "ltsim/bounds/search.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <limits>
#include <set>

#include "ltsim/bounds/registry.h"
#include "ltsim/bounds/sweep.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/model/model_file.h"

namespace ltsim {
namespace {

constexpr double kInvalid = -std::numeric_limits<double>::infinity();
constexpr double kShrinkFactor = 0.9;
constexpr int kMaxScalings = 50;
constexpr std::uint64_t kMinLength = 10;
constexpr const char* kFormat = "ltsim-search-witness";

double NeededLengthRatio(const Transformer& f, const Transformer& g, const Source& x, double eps) {
  const std::uint64_t needed = NeededLength(f, g, x, eps, nullptr);
  ConstantMap c = PairConstants(ModelConstants(f), ModelConstants(g));
  c["eps"] = eps;
  // The floor τ + 2 is NeededLength's smallest grid n: no pair can need less.
  const double floor = c["tau"] + 2;
  const double bound = std::max(FindBound("frequency-length").value(c), floor);
  return static_cast<double>(needed) / bound;
}

double SimObjective(const std::string& objective, const Transformer& f, const Transformer& g,
                    const Source& x, double eps, std::uint64_t n) {
  SandwichOptions options;
  options.method = "frequency";
  options.length = n;
  SandwichResult s;
  try {
    s = RunSandwich(f, g, x, options);
  } catch (const InputError&) {
    return kInvalid;
  }
  if (objective == "sim-ratio") return std::max(s.f.sim, s.g.sim) / eps;
  // sim-over-eta: the Lipschitz bound sim ≤ L·η of theory.md §2, per model.
  double worst = 0.0;
  for (const ModelSide* side : {&s.f, &s.g}) {
    const double bound = side->lipschitz * side->eta_achieved;
    if (bound > 0 && std::isfinite(bound)) worst = std::max(worst, side->sim / bound);
  }
  return worst;
}

template <typename Visit>
void ForEachMatrix(Transformer& model, Visit visit) {
  visit(model.embedding);
  visit(model.positional);
  for (Layer& layer : model.layers) {
    for (Head& head : layer.heads) {
      visit(head.qk);
      visit(head.ov);
    }
    if (layer.mlp) {
      visit(layer.mlp->in);
      visit(layer.mlp->out);
    }
  }
  visit(model.readout_weight);
}

template <typename Visit>
void ForEachVector(Transformer& model, Visit visit) {
  for (Layer& layer : model.layers) {
    for (Head& head : layer.heads) visit(head.bias);
    if (layer.mlp) visit(layer.mlp->in_bias);
  }
  visit(model.readout_bias);
}

// model += σ·N(0, 1) on every weight, rounded to multiples of `grid` (when > 0), drawn in
// storage order (a fixed order: house style §9).
void GaussianStep(Transformer& model, double sigma, double grid, FuzzEngine& engine) {
  boost::random::normal_distribution<double> normal(0.0, 1.0);
  const auto step = [&](auto& m) {
    using Noise = std::decay_t<decltype(m)>;
    Noise noise(m.rows(), m.cols());
    for (Eigen::Index i = 0; i < noise.size(); ++i) {
      const double z = sigma * normal(engine);
      noise.data()[i] = grid > 0 ? grid * std::round(z / grid) : z;
    }
    m += noise;
  };
  ForEachMatrix(model, step);
  ForEachVector(model, step);
}

void Scale(Transformer& model, double factor) {
  ForEachMatrix(model, [&](Matrix& m) { m *= factor; });
  ForEachVector(model, [&](Vector& v) { v *= factor; });
}

double Evaluate(const SearchOptions& o, const SearchCandidate& c) {
  return EvaluateObjective(o.objective, c.f, c.g, c.input, o.eps, o.n);
}

void ValidateOptions(const SearchOptions& o) {
  const std::vector<std::string>& names = SearchObjectives();
  if (std::find(names.begin(), names.end(), o.objective) == names.end())
    throw InputError("--objective: unknown '" + o.objective +
                     "' (known: needed-length, sim-ratio, sim-over-eta)");
  if (!(o.eps > 0 && o.eps < 1)) throw InputError("--eps must be in (0, 1)");
  if (o.restarts < 1) throw InputError("--restarts must be at least 1");
  if (o.iterations < 0) throw InputError("--iterations must be at least 0");
  if (o.threads < 0) throw InputError("--threads must be at least 0");
  if (!(o.step >= 0) || !std::isfinite(o.step)) throw InputError("--step must be finite, ≥ 0");
  if (!(o.step_grid >= 0) || !std::isfinite(o.step_grid))
    throw InputError("--step-grid must be finite, ≥ 0");
  if (o.input.length < kMinLength) throw InputError("--x-length must be at least 10");
  if (o.objective != "needed-length" && (o.n < 1 || o.n > o.input.length))
    throw InputError("--n must be in [1, |x|]");
}

}  // namespace

const std::vector<std::string>& SearchObjectives() {
  static const std::vector<std::string> names = {"needed-length", "sim-ratio", "sim-over-eta"};
  return names;
}

double EvaluateObjective(const std::string& objective, const Transformer& f, const Transformer& g,
                         const InputSpec& input, double eps, std::uint64_t n) {
  const std::vector<std::string>& names = SearchObjectives();
  if (std::find(names.begin(), names.end(), objective) == names.end())
    throw InputError("objective: unknown '" + objective + "'");
  const auto x = MakeInput(input);
  if (objective == "needed-length") return NeededLengthRatio(f, g, *x, eps);
  return SimObjective(objective, f, g, *x, eps, n);
}

SearchRestart HillClimb(const SearchOptions& o, int restart) {
  SearchRestart r;
  r.index = restart;
  r.seed = StreamSeed(o.seed, "search", static_cast<std::uint64_t>(restart));
  FuzzEngine engine(r.seed);
  ModelSpec spec = o.base;
  spec.layers = 1;
  spec.attention = Attention::kHardmax;
  PairSpec pair;
  pair.kind = PairKind::kPerturbed;
  pair.delta = o.delta;
  std::tie(r.best.f, r.best.g) = GeneratePair(spec, pair, engine);
  r.best.input = o.input;
  r.best.input.alphabet = spec.alphabet;
  r.best.input.seed = engine();
  r.best.objective = Evaluate(o, r.best);
  r.trajectory.push_back(r.best.objective);
  for (int i = 0; i < o.iterations; ++i) {
    SearchCandidate proposal = r.best;
    GaussianStep(proposal.g, o.step, o.step_grid, engine);
    if (o.perturb_f) GaussianStep(proposal.f, o.step, o.step_grid, engine);
    proposal.objective = Evaluate(o, proposal);
    if (proposal.objective > r.best.objective) {
      r.best = std::move(proposal);
      ++r.accepted;
    }
    r.trajectory.push_back(r.best.objective);
  }
  return r;
}

ShrinkResult Shrink(const SearchOptions& o, const SearchCandidate& best) {
  ShrinkResult s;
  s.candidate = best;
  const double floor = best.objective;
  if (!std::isfinite(floor)) return s;  // nothing valid was found: no value to keep above
  SearchCandidate& c = s.candidate;
  // Try `change` on a copy; keep it when the objective stays at or above the reported value.
  const auto attempt = [&](auto change) {
    SearchCandidate trial = c;
    change(trial);
    trial.objective = Evaluate(o, trial);
    if (!(trial.objective >= floor)) return false;
    c = std::move(trial);
    return true;
  };
  // Heads: f and g of a perturbed pair have the same heads; remove head h from both.
  for (int h = static_cast<int>(c.f.layers[0].heads.size()) - 1; h >= 0; --h) {
    if (c.f.layers[0].heads.size() < 2 || c.g.layers[0].heads.size() < 2) break;
    if (h >= static_cast<int>(c.f.layers[0].heads.size())) continue;
    if (attempt([h](SearchCandidate& t) {
          t.f.layers[0].heads.erase(t.f.layers[0].heads.begin() + h);
          t.g.layers[0].heads.erase(t.g.layers[0].heads.begin() + h);
        }))
      ++s.heads_removed;
  }
  while (s.scalings < kMaxScalings && attempt([](SearchCandidate& t) {
           Scale(t.f, kShrinkFactor);
           Scale(t.g, kShrinkFactor);
         }))
    ++s.scalings;
  const std::uint64_t shortest = std::max(kMinLength, o.objective == "needed-length" ? 0 : o.n);
  while (c.input.length / 2 >= shortest && attempt([](SearchCandidate& t) { t.input.length /= 2; }))
    ++s.halvings;
  return s;
}

SearchResult RunSearch(const SearchOptions& options) {
  ValidateOptions(options);
  SearchResult r;
  r.options = options;
  r.restarts.resize(static_cast<std::size_t>(options.restarts));
  const int threads =
      options.threads > 0 ? options.threads : oneapi::tbb::this_task_arena::max_concurrency();
  oneapi::tbb::task_arena arena(threads);
  arena.execute([&] {
    oneapi::tbb::parallel_for(0, options.restarts,
                              [&](int i) { r.restarts[i] = HillClimb(options, i); });
  });
  // Reduced in index order: the first restart attaining the maximum wins.
  for (std::size_t i = 1; i < r.restarts.size(); ++i) {
    if (r.restarts[i].best.objective > r.restarts[r.best_restart].best.objective)
      r.best_restart = static_cast<int>(i);
  }
  r.shrunk = Shrink(options, r.restarts[r.best_restart].best);
  return r;
}

nlohmann::json SearchWitnessToJson(const SearchOptions& o, const SearchCandidate& w) {
  nlohmann::json doc;
  doc["format"] = kFormat;
  doc["version"] = 1;
  doc["objective"] = o.objective;
  doc["eps"] = o.eps;
  doc["n"] = o.n;
  doc["value"] = std::isfinite(w.objective) ? nlohmann::json(w.objective) : nlohmann::json();
  doc["f"] = nlohmann::json::parse(ModelToJson(w.f));
  doc["g"] = nlohmann::json::parse(ModelToJson(w.g));
  doc["input"] = InputSpecToJson(w.input);
  return doc;
}

SearchWitness SearchWitnessFromJson(const nlohmann::json& json, const std::string& where) {
  const std::set<std::string> keys = {"format", "version", "objective", "eps",  "n",
                                      "value",  "f",       "g",         "input"};
  if (!json.is_object()) throw InputError(where + ": a search witness must be a JSON object");
  for (const auto& [key, value] : json.items())
    if (!keys.count(key)) throw InputError(where + ": " + key + ": unknown key");
  for (const std::string& key : keys)
    if (!json.contains(key)) throw InputError(where + ": " + key + ": missing");
  if (json["format"] != kFormat || json["version"] != 1)
    throw InputError(where + ": format: expected " + kFormat + " version 1");
  SearchWitness w;
  if (!json["objective"].is_string() || !json["eps"].is_number() ||
      !json["n"].is_number_unsigned() || !json["value"].is_number())
    throw InputError(where +
                     ": objective, eps, n, value: wrong type (string, number, "
                     "unsigned integer, number)");
  w.objective = json["objective"].get<std::string>();
  const std::vector<std::string>& names = SearchObjectives();
  if (std::find(names.begin(), names.end(), w.objective) == names.end())
    throw InputError(where + ": objective: unknown '" + w.objective + "'");
  w.eps = json["eps"].get<double>();
  w.n = json["n"].get<std::uint64_t>();
  w.candidate.objective = json["value"].get<double>();
  w.candidate.f = ParseModel(json["f"].dump(), where + ": f");
  w.candidate.g = ParseModel(json["g"].dump(), where + ": g");
  w.candidate.input = InputSpecFromJson(json["input"], where + ": input");
  return w;
}

}  // namespace ltsim
