// Runs one fuzzing case and checks the sandwich, the simulators' rates and finite == hardmax.
#include "ltsim/fuzz/case_runner.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ltsim/check/lemma53.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/fuzz/recheck.h"
#include "ltsim/model/constants.h"
#include "ltsim/sim/simulator.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

// observed ≤ bound with the verdict slack of LessOrClose; ratio = observed/bound.
Outcome Compare(double observed, double bound) {
  Outcome o;
  o.checked = true;
  o.observed = observed;
  o.bound = bound;
  o.holds = LessOrClose(observed, bound);
  o.ratio = bound > 0.0 ? observed / bound : (observed > 0.0 ? INFINITY : 0.0);
  return o;
}

// `finite` one-layer model against the same weights under hardmax, on x, for T_hard ≤ T <
// T_split.
Outcome FiniteEqualsHardmax(const Transformer& model, const Source& x, const Vector& on_x) {
  const double bound = FiniteHardmaxTolerance(model, x.length(), on_x.cwiseAbs().maxCoeff());
  if (std::isnan(bound)) return {};
  Transformer twin = model;
  twin.layers[0].attention = Attention::kHardmax;
  twin.layers[0].precision_bits = 0;
  return Compare(SupDistance(on_x, Evaluate(twin, x)), bound);
}

void CheckStatistic(const CaseSpec& spec, const Source& x, const Source& z, CaseResult& r) {
  if (!SimulatorHas(spec.method, &SimulatorTraits::block_rate)) return;
  const int locality = std::max(spec.f.locality, spec.g.locality);
  const RandomLipschitzFunction p(spec.function_seed, spec.f.alphabet, locality, 1.0);
  const Vector ax = AverageOverPositions(x, p);
  const Vector az = AverageOverPositions(z, p);
  r.statistic = (ax - az).cwiseAbs().maxCoeff();
  r.outcomes[static_cast<int>(Property::kLemma53)] =
      Compare(r.statistic, spec.lemma_constant * ReferenceRate(p, spec.target_length));
}

void CheckProperties(const CaseSpec& spec, const SandwichResult& s, const Source& x,
                     CaseResult& r) {
  auto& out = r.outcomes;
  // The verdicts are RunSandwich's (same comparison, LessOrClose); Compare adds the ratio.
  out[static_cast<int>(Property::kSandwich)] = Compare(s.gap_x, s.f.sim + s.gap_z + s.g.sim);
  out[static_cast<int>(Property::kSandwich)].holds = s.holds;
  if (s.gap_z <= spec.epsilon) {
    out[static_cast<int>(Property::kTransfer)] = Compare(s.gap_x, spec.epsilon + s.f.sim + s.g.sim);
  }
  // L(f) is defined for one-layer models only; a two-layer case has no rate to check.
  if (!std::isnan(s.simulation.eta) && std::isfinite(s.f.lipschitz) &&
      std::isfinite(s.g.lipschitz)) {
    const Outcome of = Compare(s.f.sim, s.f.lipschitz * s.simulation.eta);
    const Outcome og = Compare(s.g.sim, s.g.lipschitz * s.simulation.eta);
    out[static_cast<int>(Property::kFrequencyRate)] = of.ratio >= og.ratio ? of : og;
    out[static_cast<int>(Property::kFrequencyRate)].holds = s.rate_holds;
  }
  // Two layers: sim ≤ B(f, x, z) for every two-layer model whose bound applies; the worse side.
  Outcome& tb = out[static_cast<int>(Property::kTwoLayerBound)];
  for (const ModelSide* side : {&s.f, &s.g}) {
    if (std::isnan(side->two_layer.bound)) continue;
    const Outcome o = Compare(side->sim, side->two_layer.bound);
    if (!tb.checked || (tb.holds && !o.holds) || (tb.holds == o.holds && o.ratio > tb.ratio))
      tb = o;
  }
  const Outcome ff = FiniteEqualsHardmax(spec.f, x, s.f.on_x);
  const Outcome fg = FiniteEqualsHardmax(spec.g, x, s.g.on_x);
  Outcome& fh = out[static_cast<int>(Property::kFiniteHardmax)];
  fh = ff.ratio >= fg.ratio ? ff : fg;
  fh.checked = ff.checked || fg.checked;
  fh.holds = ff.holds && fg.holds;
}

}  // namespace

double FiniteHardmaxTolerance(const Transformer& model, std::uint64_t length, double output_scale) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (model.layers.size() != 1 || model.layers[0].attention != Attention::kFinite ||
      model.layers[0].bias_scaling != BiasScaling::kNone)
    return nan;
  const double distance = FiniteHardmaxDistance(model, static_cast<double>(length));
  if (!std::isfinite(distance)) return nan;  // outside [T_hard, T_split)
  const double slack = 1e-9 * (1.0 + output_scale);
  return distance == 0.0 ? slack : slack + LipschitzConstant(model) * distance;
}

const char* PropertyName(Property property) { return kPropertyNames.Name(property); }

Property ParseProperty(const std::string& name) { return kPropertyNames.Parse(name); }

bool IsTheoremProperty(Property property) { return property != Property::kSandwich; }

bool CaseResult::refuted() const {
  return std::any_of(std::begin(outcomes), std::end(outcomes),
                     [](const Outcome& o) { return o.checked && !o.holds; });
}

CaseResult RunCase(const CaseSpec& spec) {
  CaseResult r;
  const auto x = MakeInput(spec.input);
  SandwichOptions options;
  options.method = spec.method;
  options.length = spec.target_length;
  options.seed = spec.sim_seed;
  options.block_length = spec.block_length;
  try {
    r.sandwich = RunSandwich(spec.f, spec.g, *x, options);
    CheckProperties(spec, r.sandwich, *x, r);
    CheckStatistic(spec, *x, *MakeRunSource(r.sandwich.simulation.z, "z"), r);
    RecheckRefutations(spec, r);
  } catch (const InputError& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace ltsim
