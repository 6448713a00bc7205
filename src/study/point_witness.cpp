// Point witnesses of studies: write, read, recheck in 50 digits, replay (docs/tightness.md §4,
// docs/witnesses.md §6).
#include "ltsim/study/point_witness.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ltsim/check/needed_length.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/precise.h"
#include "ltsim/fuzz/recorded.h"
#include "ltsim/io/json.h"
#include "ltsim/io/output_file.h"
#include "ltsim/model/model_file.h"
#include "ltsim/sim/simulator.h"
#include "ltsim/strings/sources.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kFormat = "ltsim-point";
constexpr int kVersion = 2;  // 2: needed-length with simulator and decisions; 1 still reads

// A temporary file renamed over `path` (io/output_file.h): never a half-written witness.
void WriteText(const std::string& path, const std::string& text) {
  io::WriteFileAtomically(path, text);
}

// A needed length of f alone over simulator seeds (SeededNeededLength), not frequency's
// NeededLength of (f, g).
bool Seeded(const PointWitness& w) { return SimulatorHas(w.method, &SimulatorTraits::block_rate); }

// The frequency simulator's z for (f, g) at n and max(sim_f, sim_g) in 50 digits; "" when no z
// can be built.
PointWitness::Decision Decide(const PointWitness& w, const Source& x, std::uint64_t n) {
  PointWitness::Decision d;
  d.n = n;
  SandwichOptions options;
  options.method = "frequency";
  options.length = n;
  SandwichResult s;
  try {
    s = RunSandwich(w.f, w.g, x, options);
  } catch (const InputError&) {
    return d;  // no z: the n does not meet ε
  }
  const auto z = MakeRunSource(s.simulation.z, "z");
  const PreciseReal sim_f = PreciseSupDistance(EvaluatePrecise(w.f, x), EvaluatePrecise(w.f, *z));
  const PreciseReal sim_g = PreciseSupDistance(EvaluatePrecise(w.g, x), EvaluatePrecise(w.g, *z));
  const PreciseReal worst = std::max(sim_f, sim_g);
  d.max_sim = PreciseText(worst);
  d.meets = worst <= PreciseReal(w.eps);
  return d;
}

// needed-length: n is decided by max sim ≤ ε at n (unless n = |x|, NeededLength's fallback)
// and > ε at the grid point below (docs/witnesses.md §6).
void RecheckNeeded(PointWitness& w) {
  w.decisions.clear();
  if (Seeded(w)) {
    w.recheck_status = RecheckStatus::kSkipped;
    w.recheck_note = "seeded " + w.method + " simulator: no 50-digit recheck (its z is random)";
    return;
  }
  if (w.f.layers.size() != 1 || w.g.layers.size() != 1) {
    w.recheck_status = RecheckStatus::kSkipped;
    w.recheck_note = "no 50-digit recheck for models that are not one-layer";
    return;
  }
  const auto x = MakeRunSource(w.x, "point witness");
  const auto tau = static_cast<std::uint64_t>(std::max(w.f.locality, w.g.locality));
  const std::vector<std::uint64_t> grid = NeededLengthGrid(tau + 2, x->length());
  const auto at = std::find(grid.begin(), grid.end(), w.value);
  if (at == grid.end()) {
    w.recheck_status = RecheckStatus::kDiffers;
    w.recheck_note = "n = " + std::to_string(w.value) + " is not on the grid";
    return;
  }
  bool agrees = true;
  if (w.value < x->length()) {
    w.decisions.push_back(Decide(w, *x, w.value));
    agrees = agrees && w.decisions.back().meets;
  }
  if (at != grid.begin()) {
    w.decisions.push_back(Decide(w, *x, *(at - 1)));
    agrees = agrees && !w.decisions.back().meets;
  }
  w.recheck_status = agrees ? RecheckStatus::kAgrees : RecheckStatus::kDiffers;
  w.recheck_note =
      "max(sim_f, sim_g) <= eps at n (unless n = |x|) and > eps at the grid point below, in 50 "
      "digits on the frequency simulator's z (built in double)";
}

}  // namespace

void RecheckPoint(PointWitness& w) {
  if (w.kind == "needed-length") return RecheckNeeded(w);
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

// The results a point file records: the string, the number, its censoring and the recheck.
Json PointResults(const PointWitness& w) {
  const bool needed = w.kind == "needed-length";
  Json j;
  Json runs = Json::array();
  for (const Run& r : w.x) runs.push_back({r.token, r.count});
  j["x_runs"] = runs;
  j["value"] = w.value;
  j["censored"] = w.censored;
  if (needed) {
    Json decisions = Json::array();
    for (const PointWitness::Decision& d : w.decisions)
      decisions.push_back({{"n", d.n}, {"max_sim", d.max_sim}, {"meets_eps", d.meets}});
    j["recheck"] = {{"digits", kPreciseDigits},
                    {"status", w.recheck_status == RecheckStatus::kNone  // not rechecked yet
                                   ? ""
                                   : kRecheckValueNames.Name(w.recheck_status)},
                    {"note", w.recheck_note},
                    {"decisions", decisions}};
  } else {
    j["recheck"] = {{"digits", kPreciseDigits},
                    {"f_x", w.f_x},
                    {"g_x", w.g_x},
                    {"gap", w.gap_text},
                    {"exceeds_eps", w.recheck_exceeds}};
  }
  return j;
}

std::string WritePointWitness(const PointWitness& w, const std::string& stem) {
  const bool needed = w.kind == "needed-length";
  const Json results = PointResults(w);
  Json j;
  j["format"] = kFormat;
  j["version"] = needed ? kVersion : 1;  // first-disagreement files are what version 1 was
  j["kind"] = w.kind;
  j["study"] = w.study;
  j["label"] = w.label;
  j["context"] = w.context;
  j["f"] = ModelToJsonValue(w.f);
  j["g"] = ModelToJsonValue(w.g);
  j["eps"] = w.eps;
  j["max_length"] = w.max_length;
  j["x_runs"] = results["x_runs"];
  j["value"] = results["value"];
  j["censored"] = results["censored"];
  if (needed) j["simulator"] = {{"method", w.method}, {"seeds", w.sim_seeds}, {"seed", w.sim_seed}};
  j["recheck"] = results["recheck"];
  // A witness names no directory: a study's outputs are the same bytes wherever they are
  // written (and under any number of ranks, docs/distributed.md).
  std::string replay = needed ? "ltsim replay THIS_FILE" : "ltsim tightness --replay THIS_FILE";
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
          "x_runs", "value", "censored", "simulator", "recheck", "replay"},
         {"format", "version", "kind", "study", "label", "f", "g", "eps", "max_length", "x_runs",
          "value", "censored", "recheck"});
  if (r.At("format").String() != kFormat) r.At("format").Fail("must be \"ltsim-point\"");
  const int version = static_cast<int>(r.At("version").Int(1, kVersion));
  PointWitness w;
  w.kind = r.At("kind").String();
  if (w.kind != "first-disagreement" && w.kind != "needed-length")
    r.At("kind").Fail("must be first-disagreement or needed-length");
  // Version 2 adds `simulator` and the needed-length recheck; a version-1 file has neither.
  const bool decisions = version >= 2 && w.kind == "needed-length";
  if (r.Has("simulator") && !decisions)
    r.At("simulator").Fail("is only read in a version-2 needed-length file");
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
  if (r.Has("simulator")) {
    const io::JsonReader sim = r.At("simulator");
    sim.Keys({"method", "seeds", "seed"}, {"method", "seeds", "seed"});
    w.method = sim.At("method").String();
    if (w.method != "frequency" && !Seeded(w))
      sim.At("method").Fail("must be frequency, " +
                            JoinNames(SimulatorNamesWith(&SimulatorTraits::block_rate)));
    w.sim_seeds = static_cast<int>(sim.At("seeds").Int(0, 1000));
    w.sim_seed = sim.At("seed").UInt();
    if (Seeded(w)) {
      if (w.sim_seeds < 1) sim.At("seeds").Fail("a seeded simulator needs at least 1 seed");
      if (ModelToJsonValue(w.f) != ModelToJsonValue(w.g))
        r.At("g").Fail("must equal f with a seeded simulator (its needed length is f's alone)");
    }
  }
  const io::JsonReader recheck = r.At("recheck");
  if (decisions) {
    recheck.Keys({"digits", "status", "note", "decisions"}, {"status", "decisions"});
    const std::optional<RecheckStatus> status =
        kRecheckValueNames.Find(recheck.At("status").String());
    if (!status) recheck.At("status").Fail("must be agrees, differs or skipped");
    w.recheck_status = *status;
    if (recheck.Has("note")) w.recheck_note = recheck.At("note").String();
    for (const io::JsonReader& d : recheck.At("decisions").Array(0, 2)) {
      d.Keys({"n", "max_sim", "meets_eps"}, {"n", "max_sim", "meets_eps"});
      w.decisions.push_back(
          {d.At("n").UInt(1, kMaxPointLength), d.At("max_sim").String(), d.At("meets_eps").Bool()});
    }
  } else {
    recheck.Keys({"digits", "f_x", "g_x", "gap", "exceeds_eps"}, {"gap", "exceeds_eps"});
    w.gap_text = recheck.At("gap").String();
    w.recheck_exceeds = recheck.At("exceeds_eps").Bool();
    // The 50-digit outputs rounded to doubles, compared by replay (ReplayPoint).
    for (const char* key : {"f_x", "g_x"}) {
      if (!recheck.Has(key)) continue;
      std::vector<double>& out = std::string(key) == "f_x" ? w.f_x : w.g_x;
      for (const io::JsonReader& v : recheck.At(key).Array(0, 1u << 20)) out.push_back(v.Number());
    }
  }
  return w;
}

PointReplay ReplayPoint(const PointWitness& w) {
  PointReplay r;
  PointWitness again = w;  // the point recomputed: every recorded result is compared with it
  if (w.kind == "first-disagreement") {
    ThresholdOptions o;
    o.epsilon = w.eps;
    o.max_length = w.max_length;
    const ThresholdResult t = FindThreshold(w.f, w.g, o);
    r.censored = !t.first_disagreement.has_value();
    r.value = r.censored ? t.checked_up_to : *t.first_disagreement;
    r.reproduced = r.censored == w.censored && r.value == w.value;
    again.value = r.value;
    again.censored = r.censored;
    if (!r.censored) again.x = t.witness;
    RecheckPoint(again);
    // Outputs a file does not record (they are optional) are not compared.
    if (w.f_x.empty()) again.f_x.clear();
    if (w.g_x.empty()) again.g_x.clear();
    if (!w.censored) {
      r.reproduced = r.reproduced && again.recheck_exceeds;
      r.detail = "50-digit gap on the string at T* " + again.gap_text;
    }
  } else {
    const auto x = MakeRunSource(w.x, "point witness");
    bool reached = false;
    r.value = Seeded(w)
                  ? SeededNeededLength(w.f, *x, w.eps, w.method, w.sim_seeds, w.sim_seed, &reached)
                  : NeededLength(w.f, w.g, *x, w.eps, &reached);
    r.censored = !reached;
    r.reproduced = r.value == w.value && r.censored == w.censored;
    again.value = r.value;
    again.censored = r.censored;
    // A version-2 file's recheck must come out the same (a version-1 file recorded none).
    if (w.recheck_status != RecheckStatus::kNone) {
      RecheckPoint(again);
      r.reproduced = r.reproduced && again.recheck_status == w.recheck_status;
      r.detail = std::string("50-digit recheck ") + kRecheckValueNames.Name(again.recheck_status) +
                 " (recorded " + kRecheckValueNames.Name(w.recheck_status) + ")";
      for (const PointWitness::Decision& d : again.decisions)
        r.detail += "; n = " + std::to_string(d.n) + ": max sim " +
                    (d.max_sim.empty() ? std::string("(no z)") : d.max_sim) +
                    (d.meets ? " <= eps" : " > eps");
    } else {
      again.decisions = w.decisions;  // a version-1 file: nothing recorded to compare
    }
  }
  CompareRecorded(PointResults(w), PointResults(again), "", r.differences);
  r.reproduced = r.reproduced && r.differences.empty();
  return r;
}

}  // namespace ltsim
