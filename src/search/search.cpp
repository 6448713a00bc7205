// Hill climbing over one-layer hardmax pairs for a chosen objective, then greedy shrinking.
#include "ltsim/search/search.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <set>

#include "ltsim/bounds/registry.h"
#include "ltsim/check/needed_length.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/gen/margin_pair.h"
#include "ltsim/io/json.h"
#include "ltsim/model/model_bytes.h"
#include "ltsim/model/model_file.h"
#include "ltsim/search/proposals.h"
#include "ltsim/strings/sources.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim {

// A restart's dealt fields (core/bytes.h).
template <typename Visit, FieldsOf<SearchCandidate> Self>
static void ByteFields(Visit& visit, Self& c) {
  visit(c.f, c.g, c.input, c.x_runs, c.objective);
}
template <typename Visit, FieldsOf<SearchRestart> Self>
static void ByteFields(Visit& visit, Self& r) {
  visit(r.index, r.seed, r.trajectory, r.accepted, r.sideways, r.proposed_by_kind,
        r.accepted_by_kind, r.best);
}

namespace {

constexpr double kInvalid = -std::numeric_limits<double>::infinity();
constexpr std::uint64_t kMinLength = 10;
constexpr const char* kFormat = "ltsim-search-witness";

double NeededLengthRatio(const Transformer& f, const Transformer& g, const Source& x, double eps) {
  const std::uint64_t needed = NeededLength(f, g, x, eps, nullptr);
  ConstantMap c = PairConstants(f, g);
  c["eps"] = eps;
  // The floor τ + 2 is NeededLength's smallest grid n: no pair can need less.
  const double floor = c["tau"] + 2;
  const double bound = std::max(FindBound("frequency-length").value(c), floor);
  return static_cast<double>(needed) / bound;
}

// disagreement-length (search.h): T*(ε) over Thm 4.1's N at the pair's constants.
double DisagreementRatio(const Transformer& f, const Transformer& g, double eps,
                         std::uint64_t cap) {
  ThresholdOptions t;
  t.epsilon = eps;
  t.max_length = cap;
  ThresholdResult r;
  try {
    r = FindThreshold(f, g, t);
  } catch (const InputError&) {
    return kInvalid;
  }
  if (!r.first_disagreement) return 0.0;  // no evidence up to the cap
  ConstantMap c = PairConstants(f, g);
  c["eps"] = eps;
  // p = 0 (no finite layer): the pair is hardmax from the start, the first term is absent.
  const double hardmax = c["p"] > 0 ? FindBound("thm4.1-hardmax").value(c) : 1.0;
  const double bound = std::max({hardmax, FindBound("thm4.1-length").value(c), 1.0});
  return static_cast<double>(*r.first_disagreement) / bound;
}

double SimObjective(SearchObjective objective, const Transformer& f, const Transformer& g,
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
  if (objective == SearchObjective::kSimRatio) return std::max(s.f.sim, s.g.sim) / eps;
  // sim-over-eta: the Lipschitz bound sim ≤ L·η of docs/theory.md §2.3, per model.
  double worst = 0.0;
  for (const ModelSide* side : {&s.f, &s.g}) {
    const double bound = side->lipschitz * side->eta_achieved;
    if (bound > 0 && std::isfinite(bound)) worst = std::max(worst, side->sim / bound);
  }
  return worst;
}

// An improvement counts when it beats the best by more than rounding: 1e-12 relative.
bool Improves(double proposal, double best) {
  if (!std::isfinite(best)) return proposal > best;
  return proposal > best + 1e-12 * std::max(1.0, std::abs(best));
}

// [[token, count], …] with token < 65535 and count ≥ 1, non-empty (docs/design.md §3).
std::vector<Run> ParseRuns(const nlohmann::json& json, const std::string& where) {
  if (!json.is_array() || json.empty()) throw InputError(where + ": must be a non-empty array");
  std::vector<Run> runs;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const nlohmann::json& r = json[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!r.is_array() || r.size() != 2 || !r[0].is_number_unsigned() || !r[1].is_number_unsigned())
      throw InputError(at + ": expected [token, count] (unsigned integers)");
    const auto token = r[0].get<std::uint64_t>();
    const auto count = r[1].get<std::uint64_t>();
    if (token >= 65535 || count < 1) throw InputError(at + ": token < 65535 and count ≥ 1");
    runs.push_back({static_cast<Token>(token), count});
  }
  return runs;
}

// With a fixed margin, a model move is followed by SetLogitMargin on both models.
bool KeepMargin(const SearchOptions& o, ProposalKind kind, SearchCandidate& c) {
  if (o.margin <= 0 || static_cast<int>(kind) >= static_cast<int>(ProposalKind::kXModerate))
    return true;
  return SetLogitMargin(c.f, o.margin) && SetLogitMargin(c.g, o.margin);
}

// A restart as exact bytes for the dealer: the reducer sees what it would have computed.
std::string RestartBytes(const SearchRestart& r) {
  ByteWriter w;
  PutFields(w, r);
  return w.Take();
}

SearchRestart RestartFromBytes(const std::string& bytes) {
  ByteReader in(bytes);
  SearchRestart r;
  GetFields(in, r);
  LTSIM_CHECK(in.done());
  return r;
}

}  // namespace

void ValidateSearchOptions(const SearchOptions& o) {
  if (!(o.eps > 0 && o.eps < 1)) throw OptionError("eps", "must be in (0, 1)");
  if (o.restarts < 1) throw OptionError("restarts", "must be at least 1");
  if (o.iterations < 0) throw OptionError("iterations", "must be at least 0");
  if (o.threads < 0) throw OptionError("threads", "must be at least 0");
  if (!(o.step >= 0) || !std::isfinite(o.step)) throw OptionError("step", "must be finite, ≥ 0");
  if (!(o.step_grid >= 0) || !std::isfinite(o.step_grid))
    throw OptionError("step_grid", "must be finite, ≥ 0");
  if (o.input.length < kMinLength) throw OptionError("input.length", "must be at least 10");
  if (!(o.margin >= 0) || !std::isfinite(o.margin))
    throw OptionError("margin", "must be finite, ≥ 0");
  if (IsSimObjective(o.objective) && (o.n < 1 || o.n > o.input.length))
    throw OptionError("n", "must be in [1, |x|]");
  if (o.objective == SearchObjective::kDisagreementLength && (o.n < 1 || o.n > kThresholdMaxLength))
    throw OptionError("n", "the disagreement search's longest length must be in [1, " +
                               std::to_string(kThresholdMaxLength) + "]");
}

double EvaluateObjective(SearchObjective objective, const Transformer& f, const Transformer& g,
                         const InputSpec& input, double eps, std::uint64_t n) {
  return EvaluateObjective(objective, f, g, *MakeInput(input), eps, n);
}

double EvaluateObjective(SearchObjective objective, const Transformer& f, const Transformer& g,
                         const Source& x, double eps, std::uint64_t n) {
  switch (objective) {
    case SearchObjective::kNeededLength:
      return NeededLengthRatio(f, g, x, eps);
    case SearchObjective::kNeeded:
      return static_cast<double>(NeededLength(f, g, x, eps, nullptr));
    case SearchObjective::kDisagreementLength:
      return DisagreementRatio(f, g, eps, n);
    case SearchObjective::kSimRatio:
    case SearchObjective::kSimOverEta:
      return SimObjective(objective, f, g, x, eps, n);
  }
  LTSIM_CHECK(!"objective missing from EvaluateObjective");
}

std::unique_ptr<Source> CandidateInput(const SearchCandidate& c) {
  if (c.x_runs.empty()) return MakeInput(c.input);
  return MakeRunSource(c.x_runs, "search x (explicit runs)");
}

double EvaluateCandidate(const SearchOptions& o, const SearchCandidate& c) {
  return EvaluateObjective(o.objective, c.f, c.g, *CandidateInput(c), o.eps, o.n);
}

SearchCandidate StartingPoint(const SearchOptions& o, int restart) {
  FuzzEngine engine(StreamSeed(o.seed, "search", static_cast<std::uint64_t>(restart)));
  ModelSpec spec = o.base;
  spec.layers = 1;
  PairSpec pair;
  pair.kind = PairKind::kPerturbed;
  pair.delta = o.delta;
  SearchCandidate c;
  std::tie(c.f, c.g) = GenerateMarginPair(spec, pair, o.margin, engine);
  c.input = o.input;
  c.input.alphabet = spec.alphabet;
  c.input.seed = engine();
  c.objective = EvaluateCandidate(o, c);
  return c;
}

SearchRestart HillClimb(const SearchOptions& o, int restart) {
  const std::uint64_t seed = StreamSeed(o.seed, "search", static_cast<std::uint64_t>(restart));
  SearchRestart r = HillClimbFrom(o, StartingPoint(o, restart), seed);
  r.index = restart;
  return r;
}

SearchRestart HillClimbFrom(const SearchOptions& o, SearchCandidate start, std::uint64_t seed) {
  SearchRestart r;
  r.seed = seed;
  r.best = std::move(start);
  // The climb's own stream, independent of how many draws the start used.
  FuzzEngine engine(StreamSeed(r.seed, "climb"));
  const std::vector<double> weights = ProposalWeights(o.proposals, o.search_x);
  r.proposed_by_kind.assign(kProposalKinds, 0);
  r.accepted_by_kind.assign(kProposalKinds, 0);
  r.trajectory.push_back(r.best.objective);
  for (int i = 0; i < o.iterations; ++i) {
    const ProposalKind kind = DrawProposal(weights, engine);
    ++r.proposed_by_kind[static_cast<int>(kind)];
    SearchCandidate proposal = r.best;
    if (ApplyProposal(kind, o, proposal, engine) && KeepMargin(o, kind, proposal)) {
      proposal.objective = EvaluateCandidate(o, proposal);
      // Sideways moves (not worse) are kept too, so a climb can cross plateaus such as sim = 0;
      // only a gain beyond rounding counts as accepted.
      if (Improves(proposal.objective, r.best.objective)) {
        ++r.accepted;
        ++r.accepted_by_kind[static_cast<int>(kind)];
        r.best = std::move(proposal);
      } else if (proposal.objective >= r.best.objective) {
        ++r.sideways;
        r.best = std::move(proposal);
      }
    }
    r.trajectory.push_back(r.best.objective);
  }
  return r;
}

SearchResult RunSearch(const SearchOptions& options) {
  ValidateSearchOptions(options);
  SearchResult r;
  r.options = options;
  r.restarts.resize(static_cast<std::size_t>(options.restarts));
  const int threads =
      options.threads > 0 ? options.threads : oneapi::tbb::this_task_arena::max_concurrency();
  oneapi::tbb::task_arena arena(threads);
  // The restarts are the dealer's items (core/work.h): alone one chunk of all of them (oneTBB
  // balances), over ranks or shards chunks of a rank's thread count.
  ItemDealer& dealer = options.dealer ? *options.dealer : LocalDealer();
  const auto restarts = static_cast<std::uint64_t>(options.restarts);
  const std::uint64_t chunk =
      dealer.Processes() > 1 ? static_cast<std::uint64_t>(threads) : restarts;
  std::atomic<std::uint64_t> finished{0};
  dealer.Deal(
      0, restarts, chunk,
      [&](std::uint64_t begin, std::uint64_t end) {
        std::vector<std::string> items(end - begin);
        arena.execute([&] {
          oneapi::tbb::parallel_for(begin, end, [&](std::uint64_t i) {
            items[i - begin] = RestartBytes(HillClimb(options, static_cast<int>(i)));
            if (options.progress) options.progress(++finished, restarts);
          });
        });
        return items;
      },
      [&](std::uint64_t i, std::string&& bytes) {
        r.restarts[i] = RestartFromBytes(bytes);
        return true;
      });
  if (!dealer.Reduces()) return r;  // an MPI worker or a shard: the reducer has the restarts
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
  doc["version"] = w.x_runs.empty() ? 1 : 2;
  doc["objective"] = kSearchObjectiveNames.Name(o.objective);
  doc["eps"] = o.eps;
  doc["n"] = o.n;
  doc["value"] = std::isfinite(w.objective) ? nlohmann::json(w.objective) : nlohmann::json();
  doc["f"] = ModelToJsonValue(w.f);
  doc["g"] = ModelToJsonValue(w.g);
  doc["input"] = InputSpecToJson(w.input);
  if (!w.x_runs.empty()) {
    doc["x_runs"] = nlohmann::json::array();
    for (const Run& r : w.x_runs) doc["x_runs"].push_back({r.token, r.count});
  }
  return doc;
}

SearchWitness SearchWitnessFromJson(const nlohmann::json& json, const std::string& where) {
  const io::Json doc(json);
  const io::JsonReader r(doc, where);
  if (!doc.is_object()) r.Fail("a search witness must be a JSON object");
  if (!doc.contains("format") || doc["format"] != kFormat) {
    r.Fail(std::string("format: expected \"") + kFormat + "\"");
  }
  const bool explicit_x = r.At("version").UInt(1, 2) == 2;
  if (explicit_x) {
    r.Keys({"format", "version", "objective", "eps", "n", "value", "f", "g", "input", "x_runs"},
           {"format", "version", "objective", "eps", "n", "value", "f", "g", "input", "x_runs"});
  } else {
    r.Keys({"format", "version", "objective", "eps", "n", "value", "f", "g", "input"},
           {"format", "version", "objective", "eps", "n", "value", "f", "g", "input"});
  }
  SearchWitness w;
  w.objective = r.At("objective").Enum(kSearchObjectiveNames);
  w.eps = r.At("eps").Number();
  if (!(w.eps > 0 && w.eps < 1)) r.At("eps").Fail("must be in (0, 1)");
  w.n = r.At("n").UInt(1, kMaxSearchWitnessLength);
  w.candidate.objective = r.At("value").Number();
  w.candidate.f = ModelFromJson(doc["f"], where + ": f");
  w.candidate.g = ModelFromJson(doc["g"], where + ": g");
  // A pair or an input that cannot run together is bad input, never a replay verdict.
  CheckPair(w.candidate.f, w.candidate.g, where + ": f", "g");
  w.candidate.input = InputSpecFromJson(json["input"], where + ": input");
  if (w.candidate.input.alphabet > w.candidate.f.alphabet) {
    r.At("input")
        .At("alphabet")
        .Fail("is " + std::to_string(w.candidate.input.alphabet) +
              ", larger than the models' alphabet " + std::to_string(w.candidate.f.alphabet));
  }
  if (w.candidate.input.length > kMaxSearchWitnessLength) {
    r.At("input").At("length").Fail("over the limit of " + std::to_string(kMaxSearchWitnessLength) +
                                    " (docs/formats.md §6.1)");
  }
  if (explicit_x) {
    w.candidate.x_runs = ParseRuns(json["x_runs"], where + ": x_runs");
    std::uint64_t length = 0;
    for (const Run& run : w.candidate.x_runs) {
      if (static_cast<int>(run.token) >= w.candidate.f.alphabet) {
        r.At("x_runs").Fail("token " + std::to_string(run.token) +
                            " is outside the models' alphabet " +
                            std::to_string(w.candidate.f.alphabet));
      }
      if (run.count > kMaxSearchWitnessLength - length) {
        r.At("x_runs").Fail("x is longer than the limit of " +
                            std::to_string(kMaxSearchWitnessLength) + " (docs/formats.md §6.1)");
      }
      length += run.count;
    }
  }
  return w;
}

io::Json SearchOptionsToJson(const SearchOptions& o) {
  return io::Json{{"objective", kSearchObjectiveNames.Name(o.objective)},
                  {"eps", o.eps},
                  {"n", o.n},
                  {"restarts", o.restarts},
                  {"iterations", o.iterations},
                  {"step", o.step},
                  {"step_grid", o.step_grid},
                  {"perturb_f", o.perturb_f},
                  {"proposals", kProposalSetNames.Name(o.proposals)},
                  {"search_x", o.search_x},
                  {"input", InputKindName(o.input.kind)},
                  {"x_length", o.input.length},
                  {"method", "frequency"}};
}

}  // namespace ltsim
