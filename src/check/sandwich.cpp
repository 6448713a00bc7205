// Measures |f(x) − f(z)|, |g(x) − g(z)|, |f(z) − g(z)| and the sandwich inequality
// (docs/theory.md §1).
#include "ltsim/check/sandwich.h"

#include <cmath>

#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/model/constants.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

// f on a string whose joint-view counts are known: the counting pass is shared.
Vector EvaluateWithCounts(const Transformer& model, const TypeCounts& joint, const Source& s) {
  if (model.layers.size() == 1)
    return EvaluateOneLayer(model, Coarsen(joint, model.period, model.locality));
  return Evaluate(model, s);
}

// z keeps x's τ*-suffix and |z| ≡ |x| (mod Δ*): then the slots of x and z are the same keys.
bool SlotsAligned(const TypeCounts& x, const TypeCounts& z) {
  return x.suffix == z.suffix && x.length % x.period == z.length % z.period;
}

ModelSide Side(const Transformer& model, const TypeCounts& x_counts, const Source& x,
               const TypeCounts& z_counts, const Source& z, const SandwichOptions& options,
               double eta) {
  ModelSide side;
  side.on_x = EvaluateWithCounts(model, x_counts, x);
  side.on_z = EvaluateWithCounts(model, z_counts, z);
  side.sim = SupDistance(side.on_x, side.on_z);
  const bool one_layer = model.layers.size() == 1;
  side.lipschitz = LipschitzConstant(model);
  side.logit_margin = one_layer ? LogitMargin(model) : std::nan("");
  side.log2_hardmax_length = one_layer ? Log2HardmaxLength(model) : std::nan("");
  if (one_layer && SlotsAligned(x_counts, z_counts)) {
    side.eta_achieved = AttentionDistance(model, Coarsen(x_counts, model.period, model.locality),
                                          Coarsen(z_counts, model.period, model.locality));
  }
  if (one_layer) {
    side.certified_sim = side.lipschitz * eta;
  } else if (model.layers.size() == 2 && options.certify_two_layer) {
    side.two_layer = CertifyTwoLayerSimulation(model, x, z);
    side.certified_sim = side.two_layer.bound;
  }
  return side;
}

void CheckTargetLength(const SandwichOptions& options) {
  if (options.length == 0) throw InputError("the target length n must be at least 1");
}

}  // namespace

bool LessOrClose(double a, double b) { return a <= b + 1e-12 * (1.0 + std::abs(a) + std::abs(b)); }

Simulation RunSimulation(const std::vector<const Transformer*>& models, const Source& x,
                         const SandwichOptions& options) {
  CheckTargetLength(options);
  const JointView view = JointViewOf(models);
  const TypeCounts counts = CountTypes(x, view.alphabet, view.period, view.locality);
  const auto simulator = MakeSimulator(options.method);
  return simulator->Simulate(
      {x, counts, models, options.length, options.seed, options.block_length});
}

void CheckPair(const Transformer& f, const Transformer& g, const std::string& f_name,
               const std::string& g_name) {
  if (f.alphabet != g.alphabet) {
    throw InputError(f_name + " has alphabet " + std::to_string(f.alphabet) + " and " + g_name +
                     " has alphabet " + std::to_string(g.alphabet) +
                     ": a pair must read the same tokens");
  }
  if (f.outputs() != g.outputs()) {
    throw InputError(f_name + " has " + std::to_string(f.outputs()) + " outputs and " + g_name +
                     " has " + std::to_string(g.outputs()) +
                     ": a pair is compared output by output, so the counts must match");
  }
}

SandwichResult RunSandwich(const Transformer& f, const Transformer& g, const Source& x,
                           const SandwichOptions& options) {
  CheckPair(f, g);
  CheckTargetLength(options);
  const std::vector<const Transformer*> models = {&f, &g};
  const JointView view = JointViewOf(models);
  const auto simulator = MakeSimulator(options.method);
  const TypeCounts x_counts = CountTypes(x, view.alphabet, view.period, view.locality);
  SandwichResult result;
  result.method = options.method;
  result.simulation = simulator->Simulate(
      {x, x_counts, models, options.length, options.seed, options.block_length});
  const auto z = MakeRunSource(result.simulation.z, "z");
  const TypeCounts z_counts = CountTypes(*z, view.alphabet, view.period, view.locality);
  result.f = Side(f, x_counts, x, z_counts, *z, options, result.simulation.eta);
  result.g = Side(g, x_counts, x, z_counts, *z, options, result.simulation.eta);
  result.x_length = x_counts.length;
  result.z_length = z_counts.length;
  result.gap_x = SupDistance(result.f.on_x, result.g.on_x);
  result.gap_z = SupDistance(result.f.on_z, result.g.on_z);
  result.holds = LessOrClose(result.gap_x, result.f.sim + result.gap_z + result.g.sim);
  result.rate_holds = !std::isnan(result.f.certified_sim) && !std::isnan(result.g.certified_sim) &&
                      LessOrClose(result.f.sim, result.f.certified_sim) &&
                      LessOrClose(result.g.sim, result.g.certified_sim);
  return result;
}

}  // namespace ltsim
