// Picks the fastest exact evaluator for a model and a source.
#include "ltsim/eval/evaluate.h"

#include <algorithm>
#include <limits>

#include "ltsim/core/error.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/precise.h"
#include "ltsim/eval/reference.h"
#include "ltsim/eval/rounding.h"
#include "ltsim/eval/two_layer.h"

namespace ltsim {

Vector Evaluate(const Transformer& model, const Source& x) {
  if (model.layers.size() == 1)
    return EvaluateOneLayer(model, CountTypes(x, model.alphabet, model.period, model.locality));
  if (model.layers.size() == 2 && model.types() <= kTwoLayerMaxTypes)
    return EvaluateTwoLayer(model, x);
  CheckAlphabet(x, model.alphabet);
  return EvaluateReference(model, ReadAll(x, kReferenceLimit));
}

CheckedOutput EvaluateChecked(const Transformer& model, const Source& x) {
  CheckedOutput out;
  if (model.layers.size() != 1) {
    out.output = Evaluate(model, x);
    out.error_bound = std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  const TypeCounts counts = CountTypes(x, model.alphabet, model.period, model.locality);
  out.output = EvaluateOneLayer(model, counts);
  const std::uint64_t terms =
      static_cast<std::uint64_t>(model.types()) + static_cast<std::uint64_t>(model.locality) + 1;
  out.error_bound = StatisticErrorBound(MakeOneLayerRounding(model, counts.length, terms), counts);
  const double scale = std::max(1.0, out.output.size() ? out.output.cwiseAbs().maxCoeff() : 0.0);
  if (out.error_bound <= kEvaluateTolerance * scale) return out;
  const std::vector<double> precise = ToDouble(EvaluatePreciseOneLayer(model, counts));
  out.output = Eigen::Map<const Vector>(precise.data(), static_cast<Eigen::Index>(precise.size()));
  out.precise = true;
  const OneLayerRounding rounding = MakeOneLayerRounding(model, counts.length, terms, kPreciseUnit);
  // The 50-digit bound, plus half an ulp of the rounding to doubles.
  const double ulp = std::max(1.0, out.output.cwiseAbs().maxCoeff()) * 0x1p-53;
  out.error_bound = OutputBound(rounding, counts.length) + ulp;  // its decisions are exact
  return out;
}

double SupDistance(const Vector& a, const Vector& b) {
  LTSIM_CHECK(a.size() == b.size());  // callers compare pairs checked by CheckPair
  return a.size() == 0 ? 0.0 : (a - b).cwiseAbs().maxCoeff();
}

}  // namespace ltsim
