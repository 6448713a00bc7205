// Witness files: a refuted case with everything needed to re-run it, named by content hash.
#include "ltsim/fuzz/witness.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "fuzz/json_number.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/precise.h"
#include "ltsim/fuzz/campaign.h"
#include "ltsim/fuzz/recorded.h"
#include "ltsim/io/json.h"
#include "ltsim/model/model_file.h"
#include "ltsim/sim/simulator.h"

namespace ltsim {
namespace {

using Json = nlohmann::ordered_json;

Json Number(double v) { return JsonNumber(v); }

Json Runs(const std::vector<Run>& runs) {
  Json out = Json::array();
  for (const Run& run : runs) out.push_back({run.token, run.count});
  return out;
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
  w["replay"] = "ltsim replay THIS_FILE (exit 0: still refuted, 1: no longer)";
  Json c;
  c["f"] = ModelToJsonValue(spec.f);
  c["g"] = ModelToJsonValue(spec.g);
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
  const SandwichResult& s = result.sandwich;
  w["numbers"] = {{"x_length", s.x_length},          {"z_length", s.z_length},
                  {"sim_f", Number(s.f.sim)},        {"sim_g", Number(s.g.sim)},
                  {"gap_x", Number(s.gap_x)},        {"gap_z", Number(s.gap_z)},
                  {"eta", Number(s.simulation.eta)}, {"statistic", Number(result.statistic)}};
  w["recheck"] = RecheckJson(o.recheck);
  w["z"] = Runs(s.simulation.z);
  return w;
}

Json RecheckJson(const Recheck& r) {
  Json j;
  j["status"] = kRecheckClaimNames.Name(r.status);
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
  return kRecheckClaimNames.Name(r.status);
}

std::string ContentHashFileName(const std::string& text, const std::string& suffix) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(Fnv1a(text)));
  return hex + suffix;
}

std::string WitnessFileName(const Json& witness) {
  return ContentHashFileName(witness.dump(), ".witness.json");
}

Witness WitnessFromJson(const io::Json& doc, const std::string& source) {
  const io::JsonReader w(doc, source);
  w.Keys({"format", "version", "property", "seed", "case", "replay", "case_spec", "observed",
          "bound", "ratio", "numbers", "recheck", "z"},
         {"format", "version", "property", "case", "case_spec"});
  if (w.At("format").String() != "ltsim-witness") {
    w.At("format").Fail("expected \"ltsim-witness\", got " + io::Describe(w.At("format").json()));
  }
  w.At("version").UInt(1, 1);
  Witness out;
  out.property = w.At("property").Enum(kPropertyNames);
  if (w.Has("seed")) out.campaign_seed = w.At("seed").UInt();
  for (const char* key : {"observed", "bound", "ratio", "numbers", "recheck", "z"})
    if (w.Has(key)) out.recorded[key] = doc.at(key);
  if (w.Has("ratio")) {
    const io::JsonReader ratio = w.At("ratio");
    if (ratio.json().is_string()) {
      if (ratio.String() != "inf") ratio.Fail("expected a number, null or \"inf\"");
      out.recorded_ratio = INFINITY;
    } else {
      out.recorded_ratio = ratio.json().is_null() ? INFINITY : ratio.Number();
    }
  }
  if (w.Has("recheck")) {
    const io::JsonReader r = w.At("recheck");
    r.Keys({"status", "reason", "digits", "observed", "bound", "note", "values"}, {"status"});
    out.recorded_recheck = r.At("status").String();
    if (r.Has("reason")) out.recorded_recheck += " (" + r.At("reason").json().dump() + ")";
  }
  CaseSpec& s = out.spec;
  s.index = w.At("case").UInt();
  const io::JsonReader c = w.At("case_spec");
  c.Keys({"f", "g", "input", "method", "target_length", "block_length", "sim_seed", "function_seed",
          "epsilon", "lemma_constant"},
         {"f", "g", "input", "method", "target_length", "block_length", "sim_seed", "function_seed",
          "epsilon", "lemma_constant"});
  const std::string where = source + ": case_spec";
  s.f = ModelFromJson(c.At("f").json(), where + ".f");
  s.g = ModelFromJson(c.At("g").json(), where + ".g");
  // A witness that cannot run is bad input, never a verdict.
  CheckPair(s.f, s.g, where + ".f", "case_spec.g");
  s.input = InputSpecFromJson(c.At("input").json(), where + ".input");
  if (s.input.alphabet > s.f.alphabet) {
    c.At("input")
        .At("alphabet")
        .Fail("is " + std::to_string(s.input.alphabet) + ", larger than the models' alphabet " +
              std::to_string(s.f.alphabet));
  }
  if (s.input.length > kMaxCampaignLength) {
    c.At("input").At("length").Fail("is " + std::to_string(s.input.length) +
                                    ", over the limit of " + std::to_string(kMaxCampaignLength) +
                                    " for generated inputs (docs/formats.md §6.1)");
  }
  s.method = c.At("method").String();
  try {
    MakeSimulator(s.method);  // every registered simulator, listed or test-only
  } catch (const InputError& error) {
    c.At("method").Fail(error.what());
  }
  s.target_length = c.At("target_length").UInt(1, kMaxCampaignLength);
  s.block_length = c.At("block_length").UInt(0, kMaxCampaignLength);
  s.sim_seed = c.At("sim_seed").UInt();
  s.function_seed = c.At("function_seed").UInt();
  s.epsilon = c.At("epsilon").Positive();
  s.lemma_constant = c.At("lemma_constant").Positive();
  return out;
}

Witness ReadWitness(const std::string& path) {
  return WitnessFromJson(io::ReadJsonFile(path, "witness file"), path);
}

bool Reproduces(const Witness& witness, CaseResult& result) {
  result = RunCase(witness.spec);
  // A case that cannot run its method, or does not check the witness's property, has no
  // verdict: that is bad input, not "no longer refuted".
  if (!result.error.empty()) {
    throw InputError("witness: its case cannot run: " + result.error);
  }
  const Outcome& o = result.outcome(witness.property);
  if (!o.checked) {
    throw InputError(std::string("witness: its case does not check the property ") +
                     PropertyName(witness.property) + " (method " + witness.spec.method + ")");
  }
  return !o.holds;
}

std::vector<std::string> WitnessDifferences(const Witness& witness, const CaseResult& result) {
  const Json fresh = WitnessJson(witness.spec, result, witness.property, witness.campaign_seed);
  std::vector<std::string> differences;
  for (const auto& [key, value] : witness.recorded.items())
    CompareRecorded(value, fresh.at(key), key, differences);
  return differences;
}

}  // namespace ltsim
