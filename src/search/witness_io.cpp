// A search candidate's objective rechecked in 50 digits, saved under a content-hash name, replayed.
#include "ltsim/search/witness_io.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ltsim/bounds/registry.h"
#include "ltsim/check/needed_length.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/precise.h"
#include "ltsim/fuzz/recorded.h"
#include "ltsim/fuzz/witness.h"
#include "ltsim/io/json.h"
#include "ltsim/io/output_file.h"
#include "ltsim/strings/sources.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;
using Real = PreciseReal;

std::vector<std::string> Texts(const PreciseVector& v) {
  std::vector<std::string> out;
  for (const Real& r : v) out.push_back(PreciseText(r));
  return out;
}

// The precise sims of the frequency simulator's z at |z| = n, and η_achieved per model.
struct PreciseSims {
  bool built = false;
  std::string why;  // when not built
  Real sim_f, sim_g;
  double lipschitz_f = 0, lipschitz_g = 0;
  Real eta_f = -1, eta_g = -1;  // −1: not aligned (the double side has NaN)
  std::uint64_t z_length = 0;
  PreciseVector f_x, g_x, f_z, g_z;
};

// sandwich.cpp's Side: η_achieved only when z keeps x's τ*-suffix and |x| mod Δ*.
Real PreciseEta(const Transformer& model, const TypeCounts& x, const TypeCounts& z) {
  const bool aligned = x.suffix == z.suffix && x.length % x.period == z.length % z.period;
  if (!aligned) return -1;
  return PreciseAttentionDistance(model, Coarsen(x, model.period, model.locality),
                                  Coarsen(z, model.period, model.locality));
}

PreciseSims Sims(const Transformer& f, const Transformer& g, const Source& x, std::uint64_t n) {
  PreciseSims s;
  SandwichOptions options;
  options.method = "frequency";
  options.length = n;
  SandwichResult d;
  try {
    d = RunSandwich(f, g, x, options);
  } catch (const InputError& e) {
    s.why = std::string("the frequency simulator cannot build z: ") + e.what();
    return s;
  }
  s.built = true;
  const auto z = MakeRunSource(d.simulation.z, "z");
  s.f_x = EvaluatePrecise(f, x);
  s.g_x = EvaluatePrecise(g, x);
  s.f_z = EvaluatePrecise(f, *z);
  s.g_z = EvaluatePrecise(g, *z);
  s.sim_f = PreciseSupDistance(s.f_x, s.f_z);
  s.sim_g = PreciseSupDistance(s.g_x, s.g_z);
  s.lipschitz_f = d.f.lipschitz;
  s.lipschitz_g = d.g.lipschitz;
  s.z_length = d.z_length;
  if (f.layers.size() == 1 && g.layers.size() == 1) {
    const JointView view = JointViewOf({&f, &g});
    const TypeCounts xc = CountTypes(x, view.alphabet, view.period, view.locality);
    const TypeCounts zc = CountTypes(*z, view.alphabet, view.period, view.locality);
    s.eta_f = PreciseEta(f, xc, zc);
    s.eta_g = PreciseEta(g, xc, zc);
  }
  return s;
}

// search.cpp's sim-over-eta: max over models of sim / (L·η) where L·η is positive and finite.
Real SimOverEta(const PreciseSims& s) {
  Real worst = 0;
  const auto side = [&](const Real& sim, double lipschitz, const Real& eta) {
    if (eta < 0 || !std::isfinite(lipschitz)) return;
    const Real bound = Real(lipschitz) * eta;
    if (bound > 0) worst = std::max(worst, Real(sim / bound));
  };
  side(s.sim_f, s.lipschitz_f, s.eta_f);
  side(s.sim_g, s.lipschitz_g, s.eta_g);
  return worst;
}

// What the double objective's own rounding can move it by (search_witness_io.h): sim is a
// difference of outputs of size up to M, η of attention weights of size ≤ 1, each formed with
// an error of at most kRoundingUlps·2^−53 of that size. sim-ratio = sim/ε then errs by
// ≲ 2u·M/ε, and sim-over-eta = sim/(L·η) by ≲ |objective|·2u·(M/sim + 1/η), which a
// near-copy z (tiny sim and η) makes large.
double RoundingAllowance(SearchObjective objective, const PreciseSims& s, double value,
                         double eps) {
  constexpr double kRoundingUlps = 1024;
  const double u = kRoundingUlps * 0x1p-53;
  double m = 0.0;
  for (const PreciseVector* v : {&s.f_x, &s.g_x, &s.f_z, &s.g_z})
    for (const Real& e : *v) m = std::max(m, std::abs(e.convert_to<double>()));
  if (objective == SearchObjective::kSimRatio) return 2 * u * m / eps;
  double worst = 0.0;
  for (const auto& [sim, eta] : {std::pair{s.sim_f, s.eta_f}, std::pair{s.sim_g, s.eta_g}}) {
    const double sim_d = sim.convert_to<double>(), eta_d = eta.convert_to<double>();
    if (sim_d > 0 && eta_d > 0) worst = std::max(worst, m / sim_d + 1.0 / eta_d);
  }
  return std::abs(value) * 2 * u * worst;
}

void Record(const PreciseSims& s, SearchRecheck& r) {
  r.z_length = s.z_length;
  r.f_x = Texts(s.f_x);
  r.g_x = Texts(s.g_x);
  r.f_z = Texts(s.f_z);
  r.g_z = Texts(s.g_z);
}

void NeededLengthRecheck(const SearchOptions& o, const SearchCandidate& c, const Source& x,
                         SearchRecheck& r) {
  // needed-length divides by max(frequency-length, τ + 2); `needed` is the length itself.
  double bound = 1.0;
  if (o.objective == SearchObjective::kNeededLength) {
    ConstantMap constants = PairConstants(c.f, c.g);
    constants["eps"] = o.eps;
    bound = std::max(FindBound("frequency-length").value(constants), constants["tau"] + 2);
  }
  const std::uint64_t needed = static_cast<std::uint64_t>(std::llround(r.value * bound));
  const auto tau = static_cast<std::uint64_t>(std::max(c.f.locality, c.g.locality));
  const std::vector<std::uint64_t> grid = NeededLengthGrid(tau + 2, x.length());
  const auto at = std::find(grid.begin(), grid.end(), needed);
  if (at == grid.end()) {
    r.status = RecheckStatus::kDiffers;
    r.note = "the needed length " + std::to_string(needed) + " is not on the grid";
    return;
  }
  const Real eps = o.eps;
  bool decisions_agree = true;
  std::string note = "needed n = " + std::to_string(needed);
  if (needed < x.length()) {  // n = |x| is the search's fallback, not a decision
    const PreciseSims s = Sims(c.f, c.g, x, needed);
    const bool meets = s.built && std::max(s.sim_f, s.sim_g) <= eps;
    decisions_agree = decisions_agree && meets;
    note += meets ? ": max sim <= eps" : ": max sim > eps in high precision";
    if (s.built) Record(s, r);
  }
  if (at != grid.begin()) {
    const std::uint64_t below = *(at - 1);
    const PreciseSims s = Sims(c.f, c.g, x, below);
    const bool fails = !s.built || std::max(s.sim_f, s.sim_g) > eps;
    decisions_agree = decisions_agree && fails;
    note += "; at n = " + std::to_string(below) +
            (fails ? ": max sim > eps" : ": max sim <= eps in high precision");
  }
  r.note = note + " (frequency-length taken from double)";
  r.status = decisions_agree ? RecheckStatus::kAgrees : RecheckStatus::kDiffers;
  const Real precise = Real(needed) / Real(bound);
  r.precise_text = PreciseText(precise);
  r.precise = precise.convert_to<double>();
}

// disagreement-length: the double search's first disagreement is confirmed when the precise
// gap on its witness string exceeds ε. That no shorter string disagrees rests on the double
// enumeration (every sufficient statistic), which the note says.
void DisagreementRecheck(const SearchOptions& o, const SearchCandidate& c, SearchRecheck& r) {
  r.precise = r.value;
  r.precise_text = PreciseText(Real(r.value));
  if (!(r.value > 0)) {
    r.status = RecheckStatus::kAgrees;
    r.note = "no disagreement up to n = " + std::to_string(o.n) + ": nothing to confirm";
    return;
  }
  ThresholdOptions t;
  t.epsilon = o.eps;
  t.max_length = o.n;
  const ThresholdResult d = FindThreshold(c.f, c.g, t);
  const auto x = MakeRunSource(d.witness, "disagreement witness");
  const PreciseVector fx = EvaluatePrecise(c.f, *x), gx = EvaluatePrecise(c.g, *x);
  r.f_x = Texts(fx);
  r.g_x = Texts(gx);
  r.z_length = x->length();
  const Real gap = PreciseSupDistance(fx, gx);
  r.status = gap > Real(o.eps) ? RecheckStatus::kAgrees : RecheckStatus::kDiffers;
  r.note = "first disagreement T* = " + std::to_string(x->length()) + ", precise gap " +
           PreciseText(gap) + " on its witness (z_length: T*); shorter strings and N from double";
}

}  // namespace

SearchRecheck RecheckSearchCandidate(const SearchOptions& o, const SearchCandidate& c) {
  SearchRecheck r;
  r.objective = o.objective;
  const auto x = CandidateInput(c);
  r.value = EvaluateCandidate(o, c);
  if (o.objective == SearchObjective::kNeededLength || o.objective == SearchObjective::kNeeded) {
    NeededLengthRecheck(o, c, *x, r);
    return r;
  }
  if (o.objective == SearchObjective::kDisagreementLength) {
    DisagreementRecheck(o, c, r);
    return r;
  }
  const PreciseSims s = Sims(c.f, c.g, *x, o.n);
  if (!s.built) {
    r.status = RecheckStatus::kSkipped;
    r.note = s.why;
    return r;
  }
  Record(s, r);
  const Real precise = o.objective == SearchObjective::kSimRatio
                           ? Real(std::max(s.sim_f, s.sim_g) / Real(o.eps))
                           : SimOverEta(s);
  r.precise_text = PreciseText(precise);
  r.precise = precise.convert_to<double>();
  r.tolerance = std::max(kSearchRecheckTolerance * std::max(1.0, std::abs(r.precise)),
                         RoundingAllowance(o.objective, s, r.precise, o.eps));
  const bool close = std::abs(r.value - r.precise) <= r.tolerance;
  r.status = close ? RecheckStatus::kAgrees : RecheckStatus::kDiffers;
  r.note = "L(f), L(g) from double (spectral norms); z built by the frequency simulator";
  return r;
}

nlohmann::json SearchRecheckToJson(const SearchRecheck& r) {
  nlohmann::json j;
  j["objective"] = kSearchObjectiveNames.Name(r.objective);
  j["status"] = kRecheckValueNames.Name(r.status);
  j["value"] = std::isfinite(r.value) ? nlohmann::json(r.value) : nlohmann::json();
  j["precise"] = r.precise_text;
  j["digits"] = kPreciseDigits;
  j["tolerance"] = r.tolerance;
  j["z_length"] = r.z_length;
  j["values"] = {{"f_x", r.f_x}, {"g_x", r.g_x}, {"f_z", r.f_z}, {"g_z", r.g_z}};
  j["note"] = r.note;
  return j;
}

std::string SearchWitnessFileName(const nlohmann::json& witness) {
  return ContentHashFileName(witness.dump(), ".search.json");
}

namespace {

// The witness document with the recheck already computed (SaveSearchWitness reports it).
nlohmann::json WitnessDocument(const SearchOptions& o, const SearchCandidate& c,
                               const SearchRecheck& recheck) {
  nlohmann::json doc = SearchWitnessToJson(o, c);
  doc["recheck"] = SearchRecheckToJson(recheck);
  return doc;
}

void RequireFinite(const SearchCandidate& c) {
  if (!std::isfinite(c.objective))
    throw InputError("search witness: the objective is not finite, nothing to save");
}

}  // namespace

nlohmann::json SearchWitnessWithRecheck(const SearchOptions& o, const SearchCandidate& c) {
  RequireFinite(c);
  return WitnessDocument(o, c, RecheckSearchCandidate(o, c));
}

SavedSearchWitness SaveSearchWitness(const std::string& dir_or_path, const SearchOptions& o,
                                     const SearchCandidate& c) {
  RequireFinite(c);
  SavedSearchWitness saved;
  saved.recheck = RecheckSearchCandidate(o, c);
  const nlohmann::json doc = WitnessDocument(o, c, saved.recheck);
  const fs::path target = fs::is_directory(dir_or_path)
                              ? fs::path(dir_or_path) / SearchWitnessFileName(doc)
                              : fs::path(dir_or_path);
  io::WriteFileAtomically(target.string(), doc.dump(2) + "\n");
  saved.path = target.string();
  return saved;
}

SearchWitness SearchWitnessFromText(const std::string& text, const std::string& source,
                                    RecheckStatus* recheck_status, nlohmann::json* recheck) {
  io::Json parsed = io::ParseJson(text, source);
  nlohmann::json doc(parsed);
  if (recheck_status) *recheck_status = RecheckStatus::kNone;
  if (recheck) *recheck = nullptr;
  if (recheck && doc.is_object() && doc.contains("recheck")) *recheck = doc.at("recheck");
  if (doc.is_object() && doc.contains("recheck")) {
    const io::JsonReader r(parsed.at("recheck"), source, "recheck");
    r.Keys({"objective", "status", "value", "precise", "digits", "tolerance", "z_length", "values",
            "note"},
           {"status"});
    const RecheckStatus status = r.At("status").Enum(kRecheckValueNames);
    if (recheck_status) *recheck_status = status;
    doc.erase("recheck");
  }
  return SearchWitnessFromJson(doc, source);
}

SearchWitness ReadSearchWitness(const std::string& path, RecheckStatus* recheck_status,
                                nlohmann::json* recheck) {
  return SearchWitnessFromText(io::ReadFile(path, "search witness", io::kMaxJsonBytes), path,
                               recheck_status, recheck);
}

SearchReplay ReplaySearchWitness(const std::string& path) {
  SearchReplay r;
  nlohmann::json recorded;
  r.witness = ReadSearchWitness(path, &r.recorded_recheck_status, &recorded);
  const SearchCandidate& c = r.witness.candidate;
  SearchOptions o;
  o.objective = r.witness.objective;
  o.eps = r.witness.eps;
  o.n = r.witness.n;
  r.stored = c.objective;
  r.recheck = RecheckSearchCandidate(o, c);
  r.value = r.recheck.value;
  r.same_value =
      std::abs(r.value - r.stored) <= kSearchReplayTolerance * std::max(1.0, std::abs(r.stored));
  const RecheckStatus expected = r.recorded_recheck_status == RecheckStatus::kNone
                                     ? RecheckStatus::kAgrees
                                     : r.recorded_recheck_status;
  if (!recorded.is_null())
    CompareRecorded(recorded, SearchRecheckToJson(r.recheck), "recheck", r.differences);
  r.reproduced = r.same_value && r.recheck.status == expected && r.differences.empty();
  return r;
}

}  // namespace ltsim
