// Picks the fastest exact evaluator for a model and a source.
#include "ltsim/eval/evaluate.h"

#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/reference.h"

namespace ltsim {

Vector Evaluate(const Transformer& model, const Source& x) {
  if (model.layers.size() == 1)
    return EvaluateOneLayer(model, CountTypes(x, model.alphabet, model.period, model.locality));
  CheckAlphabet(x, model.alphabet);
  return EvaluateReference(model, ReadAll(x, kReferenceLimit));
}

double SupDistance(const Vector& a, const Vector& b) { return (a - b).cwiseAbs().maxCoeff(); }

}  // namespace ltsim
