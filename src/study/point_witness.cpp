// Point witnesses of studies: write, read, recheck in 50 digits, replay (docs/tightness.md §4).
#include "ltsim/study/point_witness.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ltsim/check/needed_length.h"
#include "ltsim/check/threshold.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/precise.h"
#include "ltsim/io/json.h"
#include "ltsim/io/output_file.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kFormat = "ltsim-point";
constexpr int kVersion = 1;

// A temporary file renamed over `path` (io/output_file.h): never a half-written witness.
void WriteText(const std::string& path, const std::string& text) {
  io::WriteFileAtomically(path, text);
}

}  // namespace

void RecheckPoint(PointWitness& w) {
  w.gap_text.clear();
  w.recheck_exceeds = false;
  if (w.censored || w.x.empty() || w.f.layers.size() != 1 || w.g.layers.size() != 1) return;
  const auto x = MakeRunSource(w.x, "point witness");
  const PreciseVector f = EvaluatePrecise(w.f, *x), g = EvaluatePrecise(w.g, *x);
  w.f_x = ToDouble(f);
  w.g_x = ToDouble(g);
  const PreciseReal gap = PreciseSupDistance(f, g);
  w.gap_text = PreciseText(gap, kPreciseDigits);
  w.recheck_exceeds = gap > PreciseReal(w.eps);
}

std::string WritePointWitness(const PointWitness& w, const std::string& stem) {
  Json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["kind"] = w.kind;
  j["study"] = w.study;
  j["label"] = w.label;
  j["context"] = w.context;
  j["f"] = ModelToJsonValue(w.f);
  j["g"] = ModelToJsonValue(w.g);
  j["eps"] = w.eps;
  j["max_length"] = w.max_length;
  Json runs = Json::array();
  for (const Run& r : w.x) runs.push_back({r.token, r.count});
  j["x_runs"] = runs;
  j["value"] = w.value;
  j["censored"] = w.censored;
  j["recheck"] = {{"digits", kPreciseDigits},
                  {"f_x", w.f_x},
                  {"g_x", w.g_x},
                  {"gap", w.gap_text},
                  {"exceeds_eps", w.recheck_exceeds}};
  std::string replay = "ltsim tightness --replay " + stem + ".point.json";
  j["replay"] = replay;
  WriteText(stem + ".point.json", j.dump(1) + "\n");
  WriteModel(w.f, stem + ".f.json");
  WriteModel(w.g, stem + ".g.json");
  if (!w.x.empty()) WriteRunLengthText(*MakeRunSource(w.x, "x"), stem + ".x.txt");
  return stem + ".point.json";
}

PointWitness ReadPointWitness(const std::string& path) {
  // Bounded read, depth limit and file:line:col syntax errors, then every key strictly
  // (io/json.h): unknown or missing keys, integers that are not integers in range.
  const Json j = io::ReadJsonFile(path, "point witness");
  const io::JsonReader r(j, path);
  r.Keys({"format", "version", "kind", "study", "label", "context", "f", "g", "eps", "max_length",
          "x_runs", "value", "censored", "recheck", "replay"},
         {"format", "version", "kind", "study", "label", "f", "g", "eps", "max_length", "x_runs",
          "value", "censored", "recheck"});
  if (r.At("format").String() != kFormat) r.At("format").Fail("must be \"ltsim-point\"");
  r.At("version").Int(kVersion, kVersion);
  PointWitness w;
  w.kind = r.At("kind").String();
  if (w.kind != "first-disagreement" && w.kind != "needed-length")
    r.At("kind").Fail("must be first-disagreement or needed-length");
  w.study = r.At("study").String();
  w.label = r.At("label").String();
  if (r.Has("context")) {
    if (!r.At("context").json().is_object()) r.At("context").Fail("must be an object");
    w.context = r.At("context").json();
  }
  if (r.Has("replay")) r.At("replay").String();
  w.f = ModelFromJson(r.At("f").json(), path + ": f");
  w.g = ModelFromJson(r.At("g").json(), path + ": g");
  if (w.f.alphabet != w.g.alphabet)
    r.At("g").Fail("alphabet " + std::to_string(w.g.alphabet) + " differs from f's " +
                   std::to_string(w.f.alphabet) + " (the witness cannot run)");
  if (w.f.outputs() != w.g.outputs())
    r.At("g").Fail(std::to_string(w.g.outputs()) + " outputs, f has " +
                   std::to_string(w.f.outputs()) + " (the witness cannot run)");
  w.eps = r.At("eps").Number(0.0);
  w.max_length = r.At("max_length").UInt(0, kMaxPointLength);
  std::uint64_t length = 0;
  for (const io::JsonReader& run : r.At("x_runs").Array()) {
    const std::vector<io::JsonReader> pair = run.Array(2, 2);
    const auto token = pair[0].UInt(0, static_cast<std::uint64_t>(w.f.alphabet) - 1);
    const std::uint64_t count = pair[1].UInt(1, kMaxPointLength);
    if (count > kMaxPointLength - length)
      run.Fail("the string is longer than the limit of " + std::to_string(kMaxPointLength));
    length += count;
    AppendRun(w.x, static_cast<Token>(token), count);
  }
  w.value = r.At("value").UInt();
  w.censored = r.At("censored").Bool();
  const io::JsonReader recheck = r.At("recheck");
  recheck.Keys({"digits", "f_x", "g_x", "gap", "exceeds_eps"}, {"gap", "exceeds_eps"});
  w.gap_text = recheck.At("gap").String();
  w.recheck_exceeds = recheck.At("exceeds_eps").Bool();
  return w;
}

PointReplay ReplayPoint(const PointWitness& w) {
  PointReplay r;
  if (w.kind == "first-disagreement") {
    ThresholdOptions o;
    o.epsilon = w.eps;
    o.max_length = w.max_length;
    const ThresholdResult t = FindThreshold(w.f, w.g, o);
    r.censored = !t.first_disagreement.has_value();
    r.value = r.censored ? t.checked_up_to : *t.first_disagreement;
    r.reproduced = r.censored == w.censored && r.value == w.value;
    if (!w.censored) {
      PointWitness again = w;
      RecheckPoint(again);
      r.reproduced = r.reproduced && again.recheck_exceeds && again.gap_text == w.gap_text;
      r.detail = "50-digit gap on the recorded string " + again.gap_text;
    }
  } else {
    const auto x = MakeRunSource(w.x, "point witness");
    bool reached = false;
    r.value = NeededLength(w.f, w.g, *x, w.eps, &reached);
    r.censored = !reached;
    r.reproduced = r.value == w.value && r.censored == w.censored;
  }
  return r;
}

}  // namespace ltsim
