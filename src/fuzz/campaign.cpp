// The campaign: cases drawn from (seed, index), run in parallel batches, written in case order.
#include "ltsim/fuzz/campaign.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "fuzz/json_number.h"
#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/fuzz/witness.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr std::uint64_t kBatch = 64;  // cases computed in parallel between two writes

Json Number(double v) { return JsonNumber(v); }
Json Ratio(double v) { return JsonRatio(v); }

template <typename T>
const T& Pick(const std::vector<T>& items, FuzzEngine& engine) {
  LTSIM_CHECK(!items.empty());
  return items[boost::random::uniform_int_distribution<std::size_t>(0, items.size() - 1)(engine)];
}

int Between(int lo, int hi, FuzzEngine& engine) {
  return boost::random::uniform_int_distribution<int>(lo, std::max(lo, hi))(engine);
}

std::uint64_t Between64(std::uint64_t lo, std::uint64_t hi, FuzzEngine& engine) {
  return boost::random::uniform_int_distribution<std::uint64_t>(lo, std::max(lo, hi))(engine);
}

Attention ParseAttention(const std::string& name) {
  for (Attention a : {Attention::kSoftmax, Attention::kHardmax, Attention::kFinite})
    if (name == AttentionName(a)) return a;
  throw InputError("unknown attention mode '" + name + "' (known: softmax, hardmax, finite)");
}

ModelSpec DrawModelSpec(const CampaignOptions& o, PairKind pair, FuzzEngine& engine) {
  ModelSpec m;
  m.layers = Pick(o.layers, engine);
  m.alphabet = Between(2, o.max_alphabet, engine);
  m.width = Between(2, o.max_width, engine);
  m.period = Between(1, o.max_period, engine);
  m.locality = Between(0, o.max_locality, engine);
  m.heads = Between(pair == PairKind::kPrunedHead ? 2 : 1, o.max_heads, engine);
  m.attention = Pick(o.modes, engine);
  m.bias_scaling = boost::random::bernoulli_distribution<double>(0.25)(engine) ? BiasScaling::kLog
                                                                               : BiasScaling::kNone;
  m.precision_bits = Between(2, 8, engine);
  m.mlp = boost::random::bernoulli_distribution<double>(0.5)(engine);
  // Gaussian weights, or a grid of 1 (γ ≥ 1, so T_hard ≤ 2^p and finite-hardmax gets checked)
  // or of 1/2 (γ ≥ 1/8).
  m.grid = Pick(std::vector<double>{0.0, 1.0, 0.5}, engine);
  m.scale = 1.0;
  return m;
}

InputSpec DrawInput(const CampaignOptions& o, int alphabet, std::uint64_t index,
                    FuzzEngine& engine) {
  InputSpec in;
  in.kind = Pick(o.inputs, engine);
  in.length = Between64(o.min_length, o.max_length, engine);
  in.alphabet = alphabet;
  in.seed = StreamSeed(o.seed, "fuzz/input", index);
  in.alpha = Pick(std::vector<double>{0.3, 1.0, 3.0}, engine);
  in.parents = Between(1, 3, engine);
  in.noise = 0.1;
  in.pattern = Between(2, 8, engine);
  return in;
}

// Methods the case's models admit: `frequency` needs one-layer models.
std::string DrawMethod(const CampaignOptions& o, int layers, FuzzEngine& engine) {
  std::vector<std::string> usable;
  for (const std::string& m : o.methods)
    if (layers == 1 || m != "frequency") usable.push_back(m);
  if (usable.empty()) usable.push_back("frequency-agnostic");
  return Pick(usable, engine);
}

Json Cell(const CaseSpec& c) {
  return {{"layers", c.f.layers.size()},
          {"attention", AttentionName(c.f.layers[0].attention)},
          {"alphabet", c.f.alphabet},
          {"width", c.f.width},
          {"period", c.f.period},
          {"locality", c.f.locality},
          {"heads", c.f.layers[0].heads.size()},
          {"input", InputKindName(c.input.kind)}};
}

Json CaseLine(const CaseSpec& c, const CaseResult& r, const std::vector<std::string>& witnesses) {
  Json line;
  line["case"] = c.index;
  line["cell"] = Cell(c);
  line["cell"]["pair"] = PairKindName(c.pair);
  line["method"] = c.method;
  line["n"] = c.target_length;
  line["x_length"] = r.x_length;
  line["z_length"] = r.z_length;
  line["f_x"] = r.f_x;
  line["g_x"] = r.g_x;
  line["sim_f"] = Number(r.sim_f);
  line["sim_g"] = Number(r.sim_g);
  line["gap_x"] = Number(r.gap_x);
  line["gap_z"] = Number(r.gap_z);
  line["eta"] = Number(r.eta);
  line["statistic"] = Number(r.statistic);
  Json props = Json::object();
  for (int k = 0; k < kPropertyCount; ++k) {
    const Outcome& o = r.outcomes[k];
    if (!o.checked) continue;
    Json& p = props[PropertyName(static_cast<Property>(k))];
    p = {{"holds", o.holds},
         {"observed", Number(o.observed)},
         {"bound", Number(o.bound)},
         {"ratio", Ratio(o.ratio)}};
    // Only refuted-in-double properties are rechecked (recheck.h).
    if (o.recheck.status != RecheckStatus::kNone) p["recheck"] = RecheckLabel(o.recheck);
  }
  line["properties"] = props;
  line["witnesses"] = witnesses;
  if (!r.error.empty()) line["error"] = r.error;
  return line;
}

// A case's bytes for the reducer: its witness files (name, text) and its line, exactly as the
// files will hold them.
std::string CaseBytes(const CaseSpec& spec, const CaseResult& result, std::uint64_t seed) {
  std::vector<std::pair<std::string, std::string>> witnesses;
  std::vector<std::string> names;
  for (int p = 0; p < kPropertyCount; ++p) {
    const Outcome& o = result.outcomes[p];
    if (!o.checked || o.holds) continue;
    const Json w = WitnessJson(spec, result, static_cast<Property>(p), seed);
    names.push_back(WitnessFileName(w));
    witnesses.emplace_back(names.back(), w.dump(1) + "\n");
  }
  ByteWriter out;
  out.Put<std::uint64_t>(witnesses.size());
  for (const auto& [name, text] : witnesses) {
    out.PutString(name);
    out.PutString(text);
  }
  out.PutString(CaseLine(spec, result, names).dump() + "\n");
  return out.Take();
}

// Cases already complete in cases.jsonl; a torn last line (a hard kill mid-write) is cut.
std::uint64_t CompleteCases(const fs::path& file) {
  if (!fs::exists(file)) return 0;
  std::ifstream in(file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t end = text.rfind('\n');
  const std::size_t keep = end == std::string::npos ? 0 : end + 1;
  if (keep != text.size()) fs::resize_file(file, keep);
  return static_cast<std::uint64_t>(std::count(text.begin(), text.begin() + keep, '\n'));
}

CampaignSummary Summarize(const fs::path& file, bool interrupted) {
  CampaignSummary s;
  s.interrupted = interrupted;
  s.properties.resize(kPropertyCount);
  for (int k = 0; k < kPropertyCount; ++k) s.properties[k].property = static_cast<Property>(k);
  double dirichlet_gap = 0.0, dirichlet_sim = 0.0;
  std::ifstream in(file);
  for (std::string text; std::getline(in, text);) {
    const nlohmann::json line = nlohmann::json::parse(text);
    ++s.cases;
    s.cases_with_input_errors += line.contains("error");
    for (const auto& [name, o] : line["properties"].items()) {
      PropertySummary& t = s.properties[static_cast<int>(ParseProperty(name))];
      ++t.cases;
      t.refutations += !o["holds"].get<bool>();
      if (o.contains("recheck")) {
        const std::string recheck = o["recheck"];
        t.confirmed += recheck == "confirmed";
        t.unconfirmed += recheck == "unconfirmed";
        t.recheck_skipped += recheck.starts_with("skipped");
      }
      const double ratio = o["ratio"].is_number() ? o["ratio"].get<double>() : INFINITY;
      if (!t.worst_ratio || ratio > *t.worst_ratio) {
        t.worst_ratio = ratio;
        t.worst_case = line["case"].get<std::uint64_t>();
      }
    }
    if (line["cell"]["input"] == "dirichlet" && line["gap_x"].is_number()) {
      ++s.dirichlet_cases;
      dirichlet_gap += line["gap_x"].get<double>();
      dirichlet_sim += line["sim_f"].get<double>();
    }
  }
  if (s.dirichlet_cases > 0) {
    s.dirichlet_mean_gap_x = dirichlet_gap / s.dirichlet_cases;
    s.dirichlet_mean_sim_f = dirichlet_sim / s.dirichlet_cases;
  }
  return s;
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw InputError(path.string() + ": cannot write");
}

}  // namespace

std::uint64_t CampaignSummary::TheoremRefutations() const {
  std::uint64_t n = 0;
  for (const PropertySummary& p : properties) n += IsTheoremProperty(p.property) ? p.refutations : 0;
  return n;
}

std::uint64_t CampaignSummary::AllRefutations() const {
  std::uint64_t n = 0;
  for (const PropertySummary& p : properties) n += p.refutations;
  return n;
}

Json CampaignSummaryToJson(const CampaignOptions& options, const CampaignSummary& summary,
                           int threads) {
  Json s;
  s["context"] = {{"version", "0.1.0"},
                  {"seed", options.seed},
                  {"threads", threads},
                  {"options", CampaignOptionsToJson(options)}};
  s["cases"] = summary.cases;
  s["interrupted"] = summary.interrupted;
  s["cases_with_input_errors"] = summary.cases_with_input_errors;
  // By name, as before (the JSON object's keys are sorted by name).
  std::map<std::string, const PropertySummary*> by_name;
  for (const PropertySummary& p : summary.properties) by_name[PropertyName(p.property)] = &p;
  Json props = Json::object();
  for (const auto& [name, p] : by_name) {
    props[name] = {{"cases", p->cases},
                   {"refutations", p->refutations},
                   {"confirmed", p->confirmed},
                   {"unconfirmed", p->unconfirmed},
                   {"recheck_skipped", p->recheck_skipped},
                   {"worst_ratio", p->worst_ratio ? Ratio(*p->worst_ratio) : Json(nullptr)},
                   {"worst_case", p->worst_case ? Json(*p->worst_case) : Json(nullptr)},
                   {"kind", IsTheoremProperty(p->property) ? "theorem" : "sanity check"}};
  }
  s["properties"] = props;
  const bool any = summary.dirichlet_cases > 0;
  s["dirichlet_average"] = {
      {"cases", summary.dirichlet_cases},
      {"mean_gap_x", any ? Number(summary.dirichlet_mean_gap_x) : Json(nullptr)},
      {"mean_sim_f", any ? Number(summary.dirichlet_mean_sim_f) : Json(nullptr)}};
  return s;
}

void ValidateCampaignOptions(const CampaignOptions& o) {
  auto fail = [](const std::string& key, const std::string& rule) {
    throw OptionError(key, rule);
  };
  if (o.layers.empty()) fail("layers", "must not be empty");
  for (int l : o.layers)
    if (l != 1 && l != 2) fail("layers", "1 or 2, not " + std::to_string(l));
  if (o.modes.empty()) fail("modes", "must not be empty");
  if (o.pairs.empty()) fail("pairs", "must not be empty");
  if (o.inputs.empty()) fail("inputs", "must not be empty");
  if (o.methods.empty()) fail("methods", "must not be empty");
  for (const std::string& m : o.methods) {
    try {
      MakeSimulator(m);
    } catch (const OptionError& e) {
      fail("methods", e.rule());
    }
  }
  if (o.min_length < 1 || o.min_length > o.max_length)
    fail("min_length", "must be at least 1 and at most max_length");
  if (o.min_target < 1 || o.min_target > o.max_target)
    fail("min_target", "must be at least 1 and at most max_target");
  for (const auto& [key, value] : {std::pair<const char*, int>{"max_alphabet", o.max_alphabet},
                                   {"max_width", o.max_width},
                                   {"max_period", o.max_period},
                                   {"max_heads", o.max_heads}})
    if (value < 1) fail(key, "must be at least 1");
  if (o.max_locality < 0) fail("max_locality", "must be at least 0");
  if (!(std::isfinite(o.epsilon) && o.epsilon > 0)) fail("epsilon", "must be finite and > 0");
  if (!(std::isfinite(o.lemma_constant) && o.lemma_constant > 0))
    fail("lemma_constant", "must be finite and > 0");
  if (!(o.delta >= 0 && o.delta <= 1)) fail("delta", "must be in [0, 1]");
  if (!(o.time_budget >= 0) || !std::isfinite(o.time_budget))
    fail("time_budget", "must be finite and >= 0");
}

Json CampaignOptionsToJson(const CampaignOptions& o) {
  Json modes = Json::array(), pairs = Json::array(), inputs = Json::array();
  for (Attention a : o.modes) modes.push_back(AttentionName(a));
  for (PairKind p : o.pairs) pairs.push_back(PairKindName(p));
  for (InputKind k : o.inputs) inputs.push_back(InputKindName(k));
  return {{"seed", o.seed},
          {"cases", o.cases},
          {"layers", o.layers},
          {"modes", modes},
          {"pairs", pairs},
          {"inputs", inputs},
          {"methods", o.methods},
          {"min_length", o.min_length},
          {"max_length", o.max_length},
          {"min_target", o.min_target},
          {"max_target", o.max_target},
          {"max_alphabet", o.max_alphabet},
          {"max_width", o.max_width},
          {"max_period", o.max_period},
          {"max_locality", o.max_locality},
          {"max_heads", o.max_heads},
          {"epsilon", o.epsilon},
          {"lemma_constant", o.lemma_constant},
          {"delta", o.delta}};
}

CampaignOptions CampaignOptionsFromJson(const nlohmann::json& j, const std::string& where) {
  CampaignOptions o;
  try {
    o.seed = j.at("seed");
    o.cases = j.at("cases");
    o.layers = j.at("layers").get<std::vector<int>>();
    o.modes.clear();
    for (const auto& m : j.at("modes")) o.modes.push_back(ParseAttention(m));
    o.pairs.clear();
    for (const auto& p : j.at("pairs")) o.pairs.push_back(ParsePairKind(p));
    o.inputs.clear();
    for (const auto& k : j.at("inputs")) o.inputs.push_back(ParseInputKind(k));
    o.methods = j.at("methods").get<std::vector<std::string>>();
    o.min_length = j.at("min_length");
    o.max_length = j.at("max_length");
    o.min_target = j.at("min_target");
    o.max_target = j.at("max_target");
    o.max_alphabet = j.at("max_alphabet");
    o.max_width = j.at("max_width");
    o.max_period = j.at("max_period");
    o.max_locality = j.at("max_locality");
    o.max_heads = j.at("max_heads");
    o.epsilon = j.at("epsilon");
    o.lemma_constant = j.at("lemma_constant");
    o.delta = j.at("delta");
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": " + e.what());
  }
  return o;
}

CaseSpec DrawCase(const CampaignOptions& o, std::uint64_t index) {
  FuzzEngine engine(StreamSeed(o.seed, "fuzz/case", index));
  PairSpec pair;
  pair.kind = Pick(o.pairs, engine);
  pair.delta = o.delta;
  const ModelSpec spec = DrawModelSpec(o, pair.kind, engine);
  std::vector<Attention> others;
  for (Attention a : {Attention::kSoftmax, Attention::kHardmax, Attention::kFinite})
    if (a != spec.attention) others.push_back(a);
  pair.other_mode = Pick(others, engine);
  CaseSpec c;
  c.index = index;
  c.pair = pair.kind;
  c.input = DrawInput(o, spec.alphabet, index, engine);
  c.method = DrawMethod(o, spec.layers, engine);
  c.target_length = Between64(o.min_target, o.max_target, engine);
  c.sim_seed = StreamSeed(o.seed, "fuzz/sim", index);
  c.function_seed = StreamSeed(o.seed, "fuzz/function", index);
  c.epsilon = o.epsilon;
  c.lemma_constant = o.lemma_constant;
  FuzzEngine model_engine(StreamSeed(o.seed, "fuzz/models", index));
  std::tie(c.f, c.g) = GeneratePair(spec, pair, model_engine);
  return c;
}

CampaignOptions ReadCampaignOptions(const std::string& dir) {
  const fs::path path = fs::path(dir) / "campaign.json";
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open (is this a campaign directory?)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path.string() + ": invalid JSON");
  }
  CampaignOptions o = CampaignOptionsFromJson(j, path.string());
  o.out = dir;
  try {
    ValidateCampaignOptions(o);
  } catch (const InputError& e) {
    throw InputError(path.string() + ": " + e.what());
  }
  return o;
}

CampaignReport RunCampaign(const CampaignOptions& options, bool resume,
                           const std::atomic<bool>& stop, const ProgressFn& progress,
                           ItemDealer& dealer) {
  ValidateCampaignOptions(options);
  const int threads =
      options.threads > 0 ? options.threads : oneapi::tbb::this_task_arena::max_concurrency();
  oneapi::tbb::task_arena arena(threads);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Stops between batches (docs/design.md §4: the files never hold half a batch's lines out of
  // order): on a signal or once the time budget is spent.
  const StopFn halt = [&] {
    return stop.load() || (options.time_budget > 0 && elapsed() >= options.time_budget);
  };
  // A batch of cases in parallel; each case's bytes are its witnesses and its line, made
  // wherever it ran (every rank draws the same case from (seed, index)).
  const ChunkCompute compute = [&](std::uint64_t begin, std::uint64_t end) {
    std::vector<std::string> items(end - begin);
    arena.execute([&] {
      oneapi::tbb::parallel_for(begin, end, [&](std::uint64_t i) {
        const CaseSpec spec = DrawCase(options, i);
        items[i - begin] = CaseBytes(spec, RunCase(spec), options.seed);
      });
    });
    return items;
  };
  CampaignReport report;
  if (!dealer.Reduces()) {  // an MPI worker or a shard: compute, write nothing
    report.interrupted = dealer.Deal(0, options.cases, kBatch, compute, nullptr, halt).stopped;
    return report;
  }
  const fs::path dir(options.out);
  const fs::path lines = dir / "cases.jsonl";
  if (!resume && fs::exists(dir / "campaign.json"))
    throw OptionError("out", dir.string() +
                     " already holds a campaign (continue it with --resume, or choose another "
                     "directory)");
  fs::create_directories(dir / "witnesses");
  if (!resume) {
    WriteText(dir / "campaign.json", CampaignOptionsToJson(options).dump(2) + "\n");
    WriteText(lines, "");
  }
  std::uint64_t done = CompleteCases(lines);
  std::ofstream out(lines, std::ios::binary | std::ios::app);
  // Cases arrive in index order: witnesses first, then the line naming them, flushed per batch.
  const ItemConsume consume = [&](std::uint64_t i, std::string&& bytes) {
    ByteReader r(bytes);
    const auto witnesses = r.Get<std::uint64_t>();
    for (std::uint64_t k = 0; k < witnesses; ++k) {
      const std::string name = r.GetString();
      WriteText(dir / "witnesses" / name, r.GetString());
      ++report.refutations;
    }
    out << r.GetString();
    done = i + 1;
    if (done % kBatch == 0 || done == options.cases) {
      out.flush();
      if (!out) throw InputError(lines.string() + ": cannot write");
      if (progress) progress(done, options.cases, report.refutations, elapsed());
    }
    return true;
  };
  dealer.Deal(done, options.cases, kBatch, compute, consume, halt);
  out.close();
  report.interrupted = done < options.cases;
  report.cases_done = done;
  report.summary = Summarize(lines, report.interrupted);
  WriteText(dir / "summary.json",
            CampaignSummaryToJson(options, report.summary, options.threads).dump(2) + "\n");
  return report;
}

}  // namespace ltsim
