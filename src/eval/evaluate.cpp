// Picks the fastest exact evaluator for a model and a source.
#include "ltsim/eval/evaluate.h"

#include "ltsim/core/error.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/reference.h"
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

double SupDistance(const Vector& a, const Vector& b) {
  LTSIM_CHECK(a.size() == b.size());  // callers compare pairs checked by CheckPair
  return a.size() == 0 ? 0.0 : (a - b).cwiseAbs().maxCoeff();
}

}  // namespace ltsim
