// Size limits and the a-priori magnitude bound that keeps every evaluator finite.
#include "ltsim/model/limits.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

constexpr double kLogPositionBound = 45.0;  // ≥ ln 2^64: β(i) = ln i for any position

// Frobenius norms without overflow in the squares (Eigen's stableNorm rescales): ∞ only when
// the norm itself is beyond a double.
template <typename M>
double Norm(const M& m) {
  return m.size() == 0 ? 0.0 : m.stableNorm();
}

double MaxRowNorm(const Matrix& m) {
  double norm = 0.0;
  for (Eigen::Index r = 0; r < m.rows(); ++r) norm = std::max(norm, Norm(m.row(r)));
  return norm;
}

double MaxAbs(const Vector& v) { return v.size() == 0 ? 0.0 : v.cwiseAbs().maxCoeff(); }

[[noreturn]] void Fail(const std::string& source, const std::string& path,
                       const std::string& rule) {
  throw InputError(source + ": " + path + ": " + rule);
}

void AtMost(long long value, long long max, const std::string& source, const std::string& path) {
  if (value > max) {
    Fail(source, path,
         "is " + std::to_string(value) + ", over the limit of " + std::to_string(max) +
             " (docs/formats.md §6.1)");
  }
}

std::string Short(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

}  // namespace

double MagnitudeBound(const Transformer& model) {
  // A norm that overflows, or 0 × ∞ (zero inputs times an overflowing norm), makes the
  // bound +∞: std::max would silently drop the NaN, and the model would pass with a
  // Lipschitz constant L(f) that is not finite.
  bool overflow = false;
  double worst = 0.0;
  const auto note = [&](double value) {
    if (!(value <= std::numeric_limits<double>::max()))
      overflow = true;
    else
      worst = std::max(worst, value);
  };
  double radius = MaxRowNorm(model.embedding) + MaxRowNorm(model.positional);
  note(radius);
  for (const Layer& layer : model.layers) {
    const double beta = layer.bias_scaling == BiasScaling::kLog ? kLogPositionBound : 1.0;
    double value_gain = 1.0;
    for (const Head& head : layer.heads) {
      note(Norm(head.qk) * radius * radius + beta * MaxAbs(head.bias));
      value_gain += Norm(head.ov);
    }
    double next = radius * value_gain;
    if (layer.mlp) {
      const double hidden = Norm(layer.mlp->in) * next + Norm(layer.mlp->in_bias);
      note(hidden);  // the MLP's pre-activations
      next += Norm(layer.mlp->out) * hidden;
    }
    radius = next;
    note(radius);
  }
  note(Norm(model.readout_weight) * radius + Norm(model.readout_bias));
  return overflow ? std::numeric_limits<double>::infinity() : worst;
}

void CheckModelLimits(const Transformer& model, const std::string& source) {
  AtMost(model.width, kMaxWidth, source, "width");
  AtMost(model.period, kMaxPeriod, source, "period");
  AtMost(model.locality, kMaxLocality, source, "locality");
  if (static_cast<long long>(model.alphabet) * model.period > kMaxTypes) {
    Fail(source, "period",
         "alphabet × period = " +
             std::to_string(static_cast<long long>(model.alphabet) * model.period) +
             " types, over the limit of " + std::to_string(kMaxTypes) + " (docs/formats.md §6.1)");
  }
  AtMost(static_cast<long long>(model.layers.size()), kMaxLayers, source, "layers");
  AtMost(model.readout_weight.rows(), kMaxOutputs, source, "readout.weight");
  long long parameters = model.embedding.size() + model.positional.size() +
                         model.readout_weight.size() + model.readout_bias.size();
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const Layer& layer = model.layers[l];
    const std::string path = "layers[" + std::to_string(l) + "]";
    AtMost(static_cast<long long>(layer.heads.size()), kMaxHeads, source, path + ".heads");
    AtMost(layer.precision_bits, kMaxPrecisionBits, source, path + ".precision_bits");
    for (const Head& head : layer.heads)
      parameters += head.qk.size() + head.ov.size() + head.bias.size();
    if (layer.mlp) {
      AtMost(layer.mlp->in.rows(), kMaxMlpWidth, source, path + ".mlp.in");
      parameters += layer.mlp->in.size() + layer.mlp->in_bias.size() + layer.mlp->out.size();
    }
  }
  if (parameters > kMaxParameters) {
    Fail(source, "layers",
         std::to_string(parameters) + " numbers in the model, over the limit of " +
             std::to_string(kMaxParameters) + " (docs/formats.md §6.1)");
  }
  const double bound = MagnitudeBound(model);
  if (!(bound <= kMaxMagnitude)) {
    Fail(source, "weights",
         "too large: intermediate values may reach " + Short(bound) +
             " (from the norms of E, P, M, O, the MLP and W), over the limit of 1e100 that "
             "keeps every evaluation finite (docs/formats.md §6.1)");
  }
}

}  // namespace ltsim
