// Witness files: a refuted case with everything needed to re-run it, named by content hash.
#include "ltsim/fuzz/witness.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "fuzz/json_number.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/precise.h"
#include "ltsim/model/model_file.h"

namespace ltsim {
namespace {

using Json = nlohmann::ordered_json;

Json Number(double v) { return JsonNumber(v); }

Json Runs(const std::vector<Run>& runs) {
  Json out = Json::array();
  for (const Run& run : runs) out.push_back({run.token, run.count});
  return out;
}

const nlohmann::json& Get(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key)) throw InputError(where + ": missing key '" + key + "'");
  return j.at(key);
}

template <typename T>
T GetAs(const nlohmann::json& j, const char* key, const std::string& where) {
  try {
    return Get(j, key, where).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(where + ": key '" + key + "' has the wrong type");
  }
}

}  // namespace

Json WitnessJson(const CaseSpec& spec, const CaseResult& result, Property property,
                 std::uint64_t campaign_seed) {
  Json w;
  w["format"] = "ltsim-witness";
  w["version"] = 1;
  w["property"] = PropertyName(property);
  w["seed"] = campaign_seed;
  w["case"] = spec.index;
  w["replay"] = "ltsim replay THIS_FILE (exit 1: still refuted, 0: no longer)";
  Json c;
  c["f"] = Json::parse(ModelToJson(spec.f));
  c["g"] = Json::parse(ModelToJson(spec.g));
  c["input"] = InputSpecToJson(spec.input);
  c["method"] = spec.method;
  c["target_length"] = spec.target_length;
  c["block_length"] = spec.block_length;
  c["sim_seed"] = spec.sim_seed;
  c["function_seed"] = spec.function_seed;
  c["epsilon"] = spec.epsilon;
  c["lemma_constant"] = spec.lemma_constant;
  w["case_spec"] = c;
  const Outcome& o = result.outcome(property);
  w["observed"] = Number(o.observed);
  w["bound"] = Number(o.bound);
  w["ratio"] = JsonRatio(o.ratio);
  w["numbers"] = {{"x_length", result.x_length},   {"z_length", result.z_length},
                  {"sim_f", Number(result.sim_f)}, {"sim_g", Number(result.sim_g)},
                  {"gap_x", Number(result.gap_x)}, {"gap_z", Number(result.gap_z)},
                  {"eta", Number(result.eta)},     {"statistic", Number(result.statistic)}};
  w["recheck"] = RecheckJson(o.recheck);
  w["z"] = Runs(result.z);
  return w;
}

Json RecheckJson(const Recheck& r) {
  Json j;
  j["status"] = RecheckStatusName(r.status);
  if (r.status == RecheckStatus::kSkipped || r.status == RecheckStatus::kNone) {
    j["reason"] = r.reason;
    return j;
  }
  j["digits"] = kPreciseDigits;
  j["observed"] = r.observed;
  j["bound"] = r.bound;
  if (!r.reason.empty()) j["note"] = r.reason;
  if (!r.f_x.empty())
    j["values"] = {{"f_x", r.f_x}, {"g_x", r.g_x}, {"f_z", r.f_z}, {"g_z", r.g_z}};
  return j;
}

std::string RecheckLabel(const Recheck& r) {
  if (r.status == RecheckStatus::kSkipped) return "skipped (" + r.reason + ")";
  return RecheckStatusName(r.status);
}

std::string ContentHashFileName(const std::string& text, const std::string& suffix) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(Fnv1a(text)));
  return hex + suffix;
}

std::string WitnessFileName(const Json& witness) {
  return ContentHashFileName(witness.dump(), ".witness.json");
}

Witness ReadWitness(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open witness file");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json w;
  try {
    w = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": invalid JSON (" + std::string(e.what()) + ")");
  }
  if (GetAs<std::string>(w, "format", path) != "ltsim-witness" ||
      GetAs<int>(w, "version", path) != 1)
    throw InputError(path + ": format: expected ltsim-witness version 1");
  Witness out;
  out.property = ParseProperty(GetAs<std::string>(w, "property", path));
  const nlohmann::json& ratio = Get(w, "ratio", path);
  out.recorded_ratio = ratio.is_number() ? ratio.get<double>() : INFINITY;
  if (w.contains("recheck")) {
    const nlohmann::json& r = w["recheck"];
    out.recorded_recheck = GetAs<std::string>(r, "status", path + ": recheck");
    if (r.contains("reason")) out.recorded_recheck += " (" + r["reason"].dump() + ")";
  }
  const nlohmann::json& c = Get(w, "case_spec", path);
  const std::string where = path + ": case_spec";
  CaseSpec& s = out.spec;
  s.index = GetAs<std::uint64_t>(w, "case", path);
  s.f = ParseModel(Get(c, "f", where).dump(), where + ".f");
  s.g = ParseModel(Get(c, "g", where).dump(), where + ".g");
  s.input = InputSpecFromJson(Get(c, "input", where), where + ".input");
  s.method = GetAs<std::string>(c, "method", where);
  s.target_length = GetAs<std::uint64_t>(c, "target_length", where);
  s.block_length = GetAs<std::uint64_t>(c, "block_length", where);
  s.sim_seed = GetAs<std::uint64_t>(c, "sim_seed", where);
  s.function_seed = GetAs<std::uint64_t>(c, "function_seed", where);
  s.epsilon = GetAs<double>(c, "epsilon", where);
  s.lemma_constant = GetAs<double>(c, "lemma_constant", where);
  return out;
}

bool Reproduces(const Witness& witness, CaseResult& result) {
  result = RunCase(witness.spec);
  const Outcome& o = result.outcome(witness.property);
  return o.checked && !o.holds;
}

}  // namespace ltsim
