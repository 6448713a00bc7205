// The campaign: cases drawn from (seed, index), run in parallel batches, written in case order.
#include "ltsim/fuzz/campaign.h"

#include <fcntl.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "fuzz/json_number.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/core/version.h"
#include "ltsim/fuzz/witness.h"
#include "ltsim/io/json.h"
#include "ltsim/io/output_dir.h"
#include "ltsim/io/output_file.h"
#include "ltsim/model/model_file.h"
#include "ltsim/sim/simulator.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr std::uint64_t kBatch = 64;           // cases computed in parallel between two writes
constexpr const char* kUserPairName = "user";  // a case line's cell.pair for a user's pair

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

// Methods the case's models admit: some need one-layer models (`frequency`).
std::string DrawMethod(const CampaignOptions& o, int layers, FuzzEngine& engine) {
  std::vector<std::string> usable;
  for (const std::string& m : o.methods)
    if (layers == 1 || !SimulatorHas(m, &SimulatorTraits::one_layer_only)) usable.push_back(m);
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
  line["cell"]["pair"] = c.user_pair ? kUserPairName : PairKindName(c.pair);
  line["method"] = c.method;
  line["n"] = c.target_length;
  const SandwichResult& s = r.sandwich;
  const auto values = [](const Vector& v) {
    return std::vector<double>(v.data(), v.data() + v.size());
  };
  line["x_length"] = s.x_length;
  line["z_length"] = s.z_length;
  line["f_x"] = values(s.f.on_x);
  line["g_x"] = values(s.g.on_x);
  line["sim_f"] = Number(s.f.sim);
  line["sim_g"] = Number(s.g.sim);
  line["gap_x"] = Number(s.gap_x);
  line["gap_z"] = Number(s.gap_z);
  line["eta"] = Number(s.simulation.eta);
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
  FieldWriter{out}(witnesses, CaseLine(spec, result, names).dump() + "\n");
  return out.Take();
}

// cases.jsonl, opened once without following a symbolic link (a link could make the
// campaign cut or append to a file outside its directory), for reading, cutting a torn line
// and appending, all through this one descriptor.
class CasesFile {
 public:
  CasesFile(const fs::path& path, bool fresh) : path_(path.string()) {
    fd_ =
        ::open(path_.c_str(),
               O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | (fresh ? O_TRUNC : 0), 0666);
    if (fd_ < 0 && errno == ELOOP)
      throw InputError(path_ + ": is a symbolic link; a campaign writes only its own files");
    if (fd_ < 0) throw InputError(path_ + ": cannot open (" + std::strerror(errno) + ")");
    struct stat info {};
    if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
      ::close(fd_);
      throw InputError(path_ + ": not a regular file");
    }
  }
  ~CasesFile() { ::close(fd_); }
  CasesFile(const CasesFile&) = delete;
  CasesFile& operator=(const CasesFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  void Append(const std::string& text) {
    for (std::size_t at = 0; at < text.size();) {
      const ssize_t wrote = ::write(fd_, text.data() + at, text.size() - at);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) throw InputError(path_ + ": cannot write (" + std::strerror(errno) + ")");
      at += static_cast<std::size_t>(wrote);
    }
  }

  // Cases already complete; a torn last line (a hard kill mid-write) is cut. Every complete
  // line must be the case record of its index (ReadCaseLine), else the file is bad input
  // naming its line.
  std::uint64_t CompleteCases() {
    std::uint64_t lines = 0, keep = 0;
    bool torn = false;
    io::ForEachLine(fd_, path_, "cases file", kMaxCaseLineBytes,
                    [&](std::string_view text, std::uint64_t number, bool terminated) {
                      if (!terminated) {
                        torn = true;
                        return;
                      }
                      ReadCaseLine(text, path_, number);
                      keep += text.size() + 1;
                      ++lines;
                    });
    if (torn && ::ftruncate(fd_, static_cast<off_t>(keep)) != 0)
      throw InputError(path_ + ": cannot cut its torn last line");
    return lines;
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// A witness file name as a case writes it (16 hex digits of its content hash): a name read
// from a shard can never reach outside the witnesses directory.
bool IsWitnessFileName(const std::string& name) {
  constexpr std::string_view kSuffix = ".witness.json";
  if (name.size() != 16 + kSuffix.size() || !name.ends_with(kSuffix)) return false;
  return std::all_of(name.begin(), name.begin() + 16,
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

CampaignSummary Summarize(const CasesFile& file, bool interrupted) {
  CampaignSummary s;
  s.interrupted = interrupted;
  s.properties.resize(kPropertyCount);
  for (int k = 0; k < kPropertyCount; ++k) s.properties[k].property = static_cast<Property>(k);
  double dirichlet_gap = 0.0, dirichlet_sim = 0.0;
  io::ForEachLine(file.fd(), file.path(), "cases file", kMaxCaseLineBytes,
                  [&](std::string_view text, std::uint64_t number, bool) {
                    const CaseRecord line = ReadCaseLine(text, file.path(), number);
                    ++s.cases;
                    s.cases_with_input_errors += line.error;
                    for (const CaseRecord::Check& o : line.checks) {
                      PropertySummary& t = s.properties[static_cast<int>(o.property)];
                      ++t.cases;
                      t.refutations += !o.holds;
                      t.confirmed += o.recheck == RecheckStatus::kAgrees;
                      t.unconfirmed += o.recheck == RecheckStatus::kDiffers;
                      t.recheck_skipped += o.recheck == RecheckStatus::kSkipped;
                      if (!t.worst_ratio || o.ratio > *t.worst_ratio) {
                        t.worst_ratio = o.ratio;
                        t.worst_case = line.index;
                      }
                    }
                    if (line.dirichlet && std::isfinite(line.gap_x) && std::isfinite(line.sim_f)) {
                      ++s.dirichlet_cases;
                      dirichlet_gap += line.gap_x;
                      dirichlet_sim += line.sim_f;
                    }
                  });
  if (s.dirichlet_cases > 0) {
    s.dirichlet_mean_gap_x = dirichlet_gap / s.dirichlet_cases;
    s.dirichlet_mean_sim_f = dirichlet_sim / s.dirichlet_cases;
  }
  return s;
}

void WriteText(const fs::path& path, const std::string& text) {
  io::WriteFileAtomically(path.string(), text);
}

}  // namespace

std::uint64_t CampaignSummary::TheoremRefutations() const {
  std::uint64_t n = 0;
  for (const PropertySummary& p : properties)
    n += IsTheoremProperty(p.property) ? p.refutations : 0;
  return n;
}

std::uint64_t CampaignSummary::AllRefutations() const {
  std::uint64_t n = 0;
  for (const PropertySummary& p : properties) n += p.refutations;
  return n;
}

Json CampaignSummaryToJson(const CampaignOptions& options, const CampaignSummary& summary) {
  Json s;
  // No thread count here: the files are byte-identical for any --threads (README).
  s["context"] = {{"version", kVersion},
                  {"seed", options.seed},
                  {"options", CampaignOptionsToJson(options, /*with_models=*/false)}};
  s["cases"] = summary.cases;
  s["interrupted"] = summary.interrupted;
  s["cases_with_input_errors"] = summary.cases_with_input_errors;
  // By name (the JSON object's keys are sorted by name).
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

CaseRecord ReadCaseLine(std::string_view text, const std::string& file, std::uint64_t number) {
  const std::string where = file + ":" + std::to_string(number + 1);
  const io::Json json =
      io::ParseJson(text, file, {kMaxCaseLineBytes, io::kMaxJsonDepth}, number + 1);
  const io::JsonReader line(json, where);
  line.Keys({"case", "cell", "method", "n", "x_length", "z_length", "f_x", "g_x", "sim_f", "sim_g",
             "gap_x", "gap_z", "eta", "statistic", "properties", "witnesses", "error"},
            {"case", "cell", "method", "n", "x_length", "z_length", "f_x", "g_x", "sim_f", "sim_g",
             "gap_x", "gap_z", "eta", "statistic", "properties", "witnesses"});
  CaseRecord record;
  record.index = line.At("case").UInt();
  if (record.index != number) {
    line.At("case").Fail("is " + std::to_string(record.index) + " on line " +
                         std::to_string(number + 1) + ", expected case " + std::to_string(number) +
                         " (cases are written in order)");
  }
  const io::JsonReader cell = line.At("cell");
  cell.Keys(
      {"layers", "attention", "alphabet", "width", "period", "locality", "heads", "input", "pair"},
      {"layers", "attention", "alphabet", "width", "period", "locality", "heads", "input", "pair"});
  for (const char* key : {"layers", "alphabet", "width", "period", "locality", "heads"})
    cell.At(key).UInt();
  cell.At("attention").Enum(kAttentionNames);
  if (!(cell.At("pair").json().is_string() && cell.At("pair").String() == kUserPairName))
    cell.At("pair").Enum(kPairKindNames);
  record.dirichlet = cell.At("input").Enum(kInputKindNames) == InputKind::kDirichlet;
  line.At("method").String();
  for (const char* key : {"n", "x_length", "z_length"}) line.At(key).UInt();
  // Numbers that may be "not applicable" (null).
  const auto optional_number = [](const io::JsonReader& value) {
    return value.json().is_null() ? std::numeric_limits<double>::quiet_NaN() : value.Number();
  };
  for (const char* key : {"f_x", "g_x"})
    for (const io::JsonReader& v : line.At(key).Array()) optional_number(v);
  record.sim_f = optional_number(line.At("sim_f"));
  record.gap_x = optional_number(line.At("gap_x"));
  for (const char* key : {"sim_g", "gap_z", "eta", "statistic"}) optional_number(line.At(key));
  const io::JsonReader properties = line.At("properties");
  if (!properties.json().is_object())
    properties.Fail("expected an object, got " + io::Describe(properties.json()));
  for (const auto& item : properties.json().items()) {
    const io::JsonReader p(item.value(), where, io::Child("properties", item.key()));
    CaseRecord::Check check;
    const std::optional<Property> property = kPropertyNames.Find(item.key());
    if (!property) p.Fail("unknown property (known: " + kPropertyNames.Known() + ")");
    check.property = *property;
    p.Keys({"holds", "observed", "bound", "ratio", "recheck"},
           {"holds", "observed", "bound", "ratio"});
    check.holds = p.At("holds").Bool();
    optional_number(p.At("observed"));
    optional_number(p.At("bound"));
    const io::JsonReader ratio = p.At("ratio");
    // As the summary has always read it: "inf" and null (NaN) rank as +∞.
    if (ratio.json().is_string()) {
      if (ratio.String() != "inf") ratio.Fail("expected a number, null or \"inf\"");
      check.ratio = INFINITY;
    } else {
      const double value = optional_number(ratio);
      check.ratio = std::isnan(value) ? INFINITY : value;
    }
    if (p.Has("recheck")) {  // RecheckLabel's text: the status, then " (reason)" when skipped
      const std::string label = p.At("recheck").String();
      check.recheck =
          kRecheckClaimNames.Find(label.substr(0, label.find(" ("))).value_or(RecheckStatus::kNone);
    }
    record.checks.push_back(check);
  }
  for (const io::JsonReader& w : line.At("witnesses").Array()) w.String();
  if (line.Has("error")) {
    line.At("error").String();
    record.error = true;
  }
  return record;
}

Json CampaignOptionsToJson(const CampaignOptions& o, bool with_models) {
  Json modes = Json::array(), pairs = Json::array(), inputs = Json::array();
  for (Attention a : o.modes) modes.push_back(AttentionName(a));
  for (PairKind p : o.pairs) pairs.push_back(PairKindName(p));
  for (InputKind k : o.inputs) inputs.push_back(InputKindName(k));
  Json json = {{"seed", o.seed},
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
  if (o.pair) {
    Json& pair = json["pair"];
    pair = {{"f_file", o.pair->f_file}, {"g_file", o.pair->g_file}};
    if (with_models) {
      pair["f"] = ModelToJsonValue(o.pair->f);
      pair["g"] = ModelToJsonValue(o.pair->g);
    }
  }
  return json;
}

CampaignOptions CampaignOptionsFromJson(const io::Json& json, const std::string& source) {
  const io::JsonReader j(json, source);
  j.Keys({"seed",       "cases",        "layers",         "modes",      "pairs",
          "inputs",     "methods",      "min_length",     "max_length", "min_target",
          "max_target", "max_alphabet", "max_width",      "max_period", "max_locality",
          "max_heads",  "epsilon",      "lemma_constant", "delta",      "pair"},
         {"seed", "cases", "layers", "modes", "pairs", "inputs", "methods", "min_length",
          "max_length", "min_target", "max_target", "max_alphabet", "max_width", "max_period",
          "max_locality", "max_heads", "epsilon", "lemma_constant", "delta"});
  CampaignOptions o;
  o.seed = j.At("seed").UInt();
  o.cases = j.At("cases").UInt();
  o.layers.clear();
  for (const io::JsonReader& l : j.At("layers").Array())
    o.layers.push_back(static_cast<int>(l.Int(1, 2)));
  o.modes.clear();
  for (const io::JsonReader& m : j.At("modes").Array()) o.modes.push_back(m.Enum(kAttentionNames));
  o.pairs.clear();
  for (const io::JsonReader& p : j.At("pairs").Array()) o.pairs.push_back(p.Enum(kPairKindNames));
  o.inputs.clear();
  for (const io::JsonReader& k : j.At("inputs").Array())
    o.inputs.push_back(k.Enum(kInputKindNames));
  o.methods.clear();
  for (const io::JsonReader& m : j.At("methods").Array()) o.methods.push_back(m.String());
  const auto narrow = [](const io::JsonReader& value) {
    return static_cast<int>(
        value.Int(std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
  };
  o.min_length = j.At("min_length").UInt();
  o.max_length = j.At("max_length").UInt();
  o.min_target = j.At("min_target").UInt();
  o.max_target = j.At("max_target").UInt();
  o.max_alphabet = narrow(j.At("max_alphabet"));
  o.max_width = narrow(j.At("max_width"));
  o.max_period = narrow(j.At("max_period"));
  o.max_locality = narrow(j.At("max_locality"));
  o.max_heads = narrow(j.At("max_heads"));
  o.epsilon = j.At("epsilon").Number();
  o.lemma_constant = j.At("lemma_constant").Number();
  o.delta = j.At("delta").Number();
  if (j.Has("pair")) {
    const io::JsonReader pair = j.At("pair");
    pair.Keys({"f_file", "g_file", "f", "g"}, {"f_file", "g_file", "f", "g"});
    auto user = std::make_shared<UserPair>();
    user->f_file = pair.At("f_file").String();
    user->g_file = pair.At("g_file").String();
    user->f = ModelFromJson(pair.At("f").json(), source + ": pair.f");
    user->g = ModelFromJson(pair.At("g").json(), source + ": pair.g");
    o.pair = std::move(user);
  }
  try {
    ValidateCampaignOptions(o);
  } catch (const OptionError& e) {
    throw InputError(source + ": " + e.option() + ": " + e.rule());
  }
  return o;
}

void ValidateCampaignOptions(const CampaignOptions& o) {
  const auto fail = [&](const std::string& key, const std::string& rule) {
    throw OptionError(key, rule);
  };
  const auto range = [&](const std::string& key, long double value, long double lo,
                         long double hi) {
    if (!(value >= lo && value <= hi)) {
      std::ostringstream text;
      text << "must be between " << static_cast<double>(lo) << " and " << static_cast<double>(hi)
           << ", got " << static_cast<double>(value);
      fail(key, text.str());
    }
  };
  range("cases", static_cast<long double>(o.cases), 1, kMaxCampaignCases);
  if (!(std::isfinite(o.time_budget) && o.time_budget >= 0))
    fail("time_budget", "must be a finite number of seconds ≥ 0 (0: none)");
  range("threads", o.threads, 0, kMaxCampaignThreads);
  if (o.layers.empty()) fail("layers", "must name at least one depth (1, 2)");
  for (int l : o.layers)
    if (l != 1 && l != 2) fail("layers", "1 or 2, not " + std::to_string(l));
  if (o.modes.empty())
    fail("modes", "must name at least one mode (" + kAttentionNames.Known() + ")");
  if (o.pairs.empty())
    fail("pairs", "must name at least one pair kind (" + kPairKindNames.Known() + ")");
  if (o.inputs.empty())
    fail("inputs", "must name at least one input kind (" + kInputKindNames.Known() + ")");
  if (o.methods.empty()) fail("methods", "must name at least one method");
  for (const std::string& m : o.methods) {
    try {
      MakeSimulator(m);  // every registered simulator, listed or test-only
    } catch (const OptionError& error) {
      fail("methods", error.rule());
    }
  }
  range("min_length", static_cast<long double>(o.min_length), 1, kMaxCampaignLength);
  range("max_length", static_cast<long double>(o.max_length), 1, kMaxCampaignLength);
  if (o.min_length > o.max_length) fail("min_length", "must be at most max_length");
  range("min_target", static_cast<long double>(o.min_target), 1, kMaxCampaignLength);
  range("max_target", static_cast<long double>(o.max_target), 1, kMaxCampaignLength);
  if (o.min_target > o.max_target) fail("min_target", "must be at most max_target");
  range("max_alphabet", o.max_alphabet, 2, kMaxCampaignAlphabet);
  range("max_width", o.max_width, 2, kMaxCampaignWidth);
  range("max_period", o.max_period, 1, kMaxCampaignPeriod);
  range("max_locality", o.max_locality, 0, kMaxCampaignLocality);
  const bool pruned =
      std::find(o.pairs.begin(), o.pairs.end(), PairKind::kPrunedHead) != o.pairs.end();
  range("max_heads", o.max_heads, pruned ? 2 : 1, kMaxCampaignHeads);
  const auto positive = [&](const std::string& key, double value, double max) {
    if (!(std::isfinite(value) && value > 0 && value <= max)) {
      std::ostringstream text;
      text << "must be a finite number in (0, " << max << "], got " << value;
      fail(key, text.str());
    }
  };
  positive("epsilon", o.epsilon, 1e6);
  positive("lemma_constant", o.lemma_constant, 1e12);
  positive("delta", o.delta, 10.0);
  if (o.pair) CheckPair(o.pair->f, o.pair->g, o.pair->f_file, o.pair->g_file);
}

namespace {

// Case i of a campaign over a user's pair (DrawCase): the draws of `ltsim.fuzz` in Python.
CaseSpec DrawUserPairCase(const CampaignOptions& o, std::uint64_t index) {
  FuzzEngine engine(StreamSeed(o.seed, "fuzz/pair-case", index));
  const auto between = [&engine](std::uint64_t lo, std::uint64_t hi) {
    return boost::random::uniform_int_distribution<std::uint64_t>(lo, hi)(engine);
  };
  CaseSpec c;
  c.index = index;
  c.f = o.pair->f;
  c.g = o.pair->g;
  c.user_pair = true;
  c.input.kind = Pick(o.inputs, engine);
  c.input.length = between(o.min_length, o.max_length);
  c.input.alphabet = c.f.alphabet;
  c.input.seed = StreamSeed(o.seed, "fuzz/input", index);
  c.input.alpha = Pick(std::vector<double>{0.3, 1.0, 3.0}, engine);
  c.input.parents = static_cast<int>(between(1, 3));
  c.input.noise = 0.1;
  c.input.pattern = static_cast<int>(between(2, 8));
  const bool one_layer = c.f.layers.size() == 1 && c.g.layers.size() == 1;
  c.method = DrawMethod(o, one_layer ? 1 : 2, engine);
  c.target_length = between(o.min_target, o.max_target);
  c.sim_seed = StreamSeed(o.seed, "fuzz/sim", index);
  c.function_seed = StreamSeed(o.seed, "fuzz/function", index);
  c.epsilon = o.epsilon;
  c.lemma_constant = o.lemma_constant;
  return c;
}

}  // namespace

CaseSpec DrawCase(const CampaignOptions& o, std::uint64_t index) {
  if (o.pair) return DrawUserPairCase(o, index);
  FuzzEngine engine(StreamSeed(o.seed, "fuzz/case", index));
  PairSpec pair;
  pair.kind = Pick(o.pairs, engine);
  pair.delta = o.delta;
  ModelSpec spec = DrawModelSpec(o, pair.kind, engine);
  // A quarter of the cases draw a large tie tolerance θ = 10^U(−2, 0), so that hardmax treats
  // real logit gaps as ties and `finite` has near-ties (docs/theory.md §2.6); from a stream of
  // its own, so the other draws of a case do not depend on it.
  FuzzEngine theta_engine(StreamSeed(o.seed, "fuzz/theta", index));
  if (boost::random::bernoulli_distribution<double>(0.25)(theta_engine))
    spec.tie_tolerance =
        std::pow(10.0, boost::random::uniform_real_distribution<double>(-2.0, 0.0)(theta_engine));
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
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    throw InputError(dir + ": not a directory (a campaign directory was expected)");
  }
  if (!fs::exists(path, error)) {
    throw InputError(path.string() + ": missing (is " + dir + " a campaign directory?)");
  }
  io::JsonLimits limits;
  limits.max_bytes = kMaxCampaignFileBytes;
  CampaignOptions o = CampaignOptionsFromJson(
      io::ReadJsonFile(path.string(), "campaign file", limits), path.string());
  o.out = dir;
  return o;
}

namespace {

// A case read from a file (a shard's item in `ltsim merge`) before anything of it is written:
// witness names as a case makes them, its line the case record of index `i` ending in one
// newline, and — when it claims a refutation, which the merge would report — the very bytes
// this process computes for case `i` (docs/distributed.md §4.1). InputError naming `where`.
void CheckRecordedCase(const CampaignOptions& options, std::uint64_t i, const std::string& bytes,
                       const std::vector<std::pair<std::string, std::string>>& witnesses,
                       const std::string& line, const std::string& where) {
  for (const auto& [name, text] : witnesses)
    if (!IsWitnessFileName(name) || text.find('\0') != std::string::npos)
      throw InputError(where + ": malformed case (a witness name or text)");
  if (line.size() < 2 || line.back() != '\n' ||
      line.find_first_of(std::string("\n\0", 2)) != line.size() - 1)
    throw InputError(where + ": malformed case (its line)");
  const CaseRecord record =
      ReadCaseLine(std::string_view(line).substr(0, line.size() - 1), where, i);
  const bool refutes =
      !witnesses.empty() || std::any_of(record.checks.begin(), record.checks.end(),
                                        [](const CaseRecord::Check& c) { return !c.holds; });
  if (!refutes) return;
  const CaseSpec spec = DrawCase(options, i);
  if (CaseBytes(spec, RunCase(spec), options.seed) != bytes)
    throw InputError(where +
                     ": the recorded refutation is not what this case computes (a forged or "
                     "corrupted shard; run the shard again)");
}

}  // namespace

CampaignReport RunCampaign(const CampaignOptions& options, bool resume,
                           const std::atomic<bool>& stop, const ProgressFn& progress,
                           ItemDealer& dealer, const std::function<void(std::uint64_t)>& started) {
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
        // After a stop the rest of the batch is left empty (never a real item, which holds at
        // least its witness count): an MPI rank 0 must not spend the seconds mpirun gives it
        // before SIGKILL finishing cases nobody will write.
        if (halt()) return;
        const CaseSpec spec = DrawCase(options, i);
        items[i - begin] = CaseBytes(spec, RunCase(spec), options.seed);
      });
    });
    return items;
  };
  CampaignReport report;
  if (!dealer.Reduces()) {  // an MPI worker or a shard: compute, write nothing
    if (started) started(0);
    report.interrupted = dealer.Deal(0, options.cases, kBatch, compute, nullptr, halt).stopped;
    return report;
  }
  const fs::path dir(options.out);
  // One run at a time in a campaign directory (a second one is refused while this one runs);
  // a symbolic link in place of the directory, of cases.jsonl or of witnesses/ is refused, so
  // nothing outside the directory is ever written (docs/formats.md §7).
  io::DirectoryLock lock(options.out);
  if (!resume && fs::exists(dir / "campaign.json"))
    throw OptionError("out", dir.string() +
                                 " already holds a campaign (resume it, or choose another "
                                 "directory)");
  const fs::path witness_dir = dir / "witnesses";
  std::error_code error;
  const fs::file_status witness_status = fs::symlink_status(witness_dir, error);
  if (fs::exists(witness_status) && !fs::is_directory(witness_status))
    throw InputError(witness_dir.string() + ": not a directory (is it a symbolic link?)");
  fs::create_directories(witness_dir, error);
  if (error) throw InputError(witness_dir.string() + ": cannot create (" + error.message() + ")");
  if (!resume) WriteText(dir / "campaign.json", CampaignOptionsToJson(options).dump(2) + "\n");
  CasesFile lines(dir / "cases.jsonl", !resume);
  std::uint64_t done = lines.CompleteCases();
  if (started) started(done);
  std::string pending;  // lines of this batch, appended once its cases are all consumed
  // Cases arrive in index order: witnesses first, then the line naming them, written per batch.
  const ItemConsume consume = [&](std::uint64_t i, std::string&& bytes) {
    if (bytes.empty()) return false;  // left undone after a stop: the campaign ends before it
    ByteReader r(bytes);
    std::vector<std::pair<std::string, std::string>> witnesses;  // (file name, text)
    std::string line;
    FieldReader{r}(witnesses, line);
    r.Require(witnesses.size() <= static_cast<std::size_t>(kPropertyCount),
              "malformed case (witness count)");
    r.Require(r.done(), "malformed case (trailing bytes)");
    if (r.from_file()) CheckRecordedCase(options, i, bytes, witnesses, line, r.where());
    for (const auto& [name, text] : witnesses) {
      WriteText(witness_dir / name, text);
      ++report.refutations;
    }
    pending += line;
    done = i + 1;
    if (done % kBatch == 0 || done == options.cases) {
      lines.Append(pending);
      pending.clear();
      if (progress) progress(done, options.cases, report.refutations, elapsed());
    }
    return true;
  };
  dealer.Deal(done, options.cases, kBatch, compute, consume, halt);
  lines.Append(pending);
  report.interrupted = done < options.cases;
  report.cases_done = done;
  report.summary = Summarize(lines, report.interrupted);
  WriteText(dir / "summary.json", CampaignSummaryToJson(options, report.summary).dump(2) + "\n");
  return report;
}

}  // namespace ltsim
