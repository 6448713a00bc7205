// Point witnesses of studies: write, read, recheck in 50 digits, replay (docs/tightness.md §4).
#include "ltsim/study/point_witness.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ltsim/check/needed_length.h"
#include "ltsim/check/threshold.h"
#include "ltsim/core/error.h"
#include "ltsim/io/json.h"
#include "ltsim/eval/precise.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kFormat = "ltsim-point";
constexpr int kVersion = 1;

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw InputError(path + ": cannot write the point witness");
}

template <typename T>
T Get(const Json& j, const char* key, const std::string& path) {
  if (!j.contains(key)) throw InputError(path + ": missing key '" + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(path + ": key '" + key + "' has the wrong type");
  }
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
  j["context"] = Json::parse(w.context.empty() ? "{}" : w.context);
  j["f"] = Json::parse(ModelToJson(w.f));
  j["g"] = Json::parse(ModelToJson(w.g));
  j["eps"] = w.eps;
  j["max_length"] = w.max_length;
  Json runs = Json::array();
  for (const Run& r : w.x) runs.push_back({r.token, r.count});
  j["x_runs"] = runs;
  j["value"] = w.value;
  j["censored"] = w.censored;
  j["recheck"] = {{"digits", kPreciseDigits}, {"f_x", w.f_x}, {"g_x", w.g_x},
                  {"gap", w.gap_text}, {"exceeds_eps", w.recheck_exceeds}};
  std::string replay = "ltsim tightness --replay " + stem + ".point.json";
  j["replay"] = replay;
  WriteText(stem + ".point.json", j.dump(1) + "\n");
  WriteModel(w.f, stem + ".f.json");
  WriteModel(w.g, stem + ".g.json");
  if (!w.x.empty()) WriteRunLengthText(*MakeRunSource(w.x, "x"), stem + ".x.txt");
  return stem + ".point.json";
}

PointWitness ReadPointWitness(const std::string& path) {
  // Bounded read, depth limit and file:line:col syntax errors (io/json.h).
  const Json j = io::ReadJsonFile(path, "point witness");
  if (!j.is_object() || Get<std::string>(j, "format", path) != kFormat)
    throw InputError(path + ": key 'format' must be \"ltsim-point\"");
  if (Get<int>(j, "version", path) != kVersion) throw InputError(path + ": key 'version' must be 1");
  PointWitness w;
  w.kind = Get<std::string>(j, "kind", path);
  if (w.kind != "first-disagreement" && w.kind != "needed-length")
    throw InputError(path + ": key 'kind' must be first-disagreement or needed-length");
  w.study = Get<std::string>(j, "study", path);
  w.label = Get<std::string>(j, "label", path);
  w.context = j.contains("context") ? j["context"].dump() : "{}";
  w.f = ModelFromJson(Get<Json>(j, "f", path), path + ": f");
  w.g = ModelFromJson(Get<Json>(j, "g", path), path + ": g");
  w.eps = Get<double>(j, "eps", path);
  if (!(w.eps >= 0) || !std::isfinite(w.eps)) throw InputError(path + ": key 'eps' must be ≥ 0");
  w.max_length = Get<std::uint64_t>(j, "max_length", path);
  for (const Json& r : Get<Json>(j, "x_runs", path)) {
    if (!r.is_array() || r.size() != 2 || !r[0].is_number_unsigned() || !r[1].is_number_unsigned())
      throw InputError(path + ": key 'x_runs' must hold [token, count] pairs");
    const auto token = r[0].get<std::uint64_t>();
    if (token >= static_cast<std::uint64_t>(w.f.alphabet))
      throw InputError(path + ": key 'x_runs': token " + std::to_string(token) +
                       " outside the alphabet");
    AppendRun(w.x, static_cast<Token>(token), r[1].get<std::uint64_t>());
  }
  w.value = Get<std::uint64_t>(j, "value", path);
  w.censored = Get<bool>(j, "censored", path);
  const Json recheck = Get<Json>(j, "recheck", path);
  w.gap_text = Get<std::string>(recheck, "gap", path);
  w.recheck_exceeds = Get<bool>(recheck, "exceeds_eps", path);
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
