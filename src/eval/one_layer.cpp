// Exact one-layer evaluation from type counts (docs/theory.md §2.2): far keys are seen only by
// type.
#include "ltsim/eval/one_layer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/layer_math.h"
#include "ltsim/core/error.h"

namespace ltsim {
namespace {

// The keys the last position attends to, grouped: present far types and the suffix.
struct KeySet {
  std::vector<int> far_types;       // indices κ with a positive far count
  std::vector<Vector> far_keys;     // y⁰ of each present type
  std::vector<Vector> suffix_keys;  // y⁰ of x_{T−t}, t = 0 … m−1
  Vector query;
};

KeySet CollectKeys(const Transformer& model, const TypeCounts& counts) {
  LTSIM_CHECK(counts.alphabet == model.alphabet && counts.period == model.period &&
              counts.locality == model.locality && !counts.suffix.empty());
  KeySet keys;
  for (int r = 0; r < counts.period; ++r) {
    for (int s = 0; s < counts.alphabet; ++s) {
      if (counts.count(s, r) == 0) continue;
      keys.far_types.push_back(counts.TypeIndex(s, r));
      keys.far_keys.push_back(InputVector(model, s, r));
    }
  }
  const std::size_t m = counts.suffix.size();
  for (std::size_t t = 0; t < m; ++t) {
    const Token s = counts.suffix[m - 1 - t];
    keys.suffix_keys.push_back(InputVector(model, s, counts.Residue(counts.length - t)));
  }
  keys.query = keys.suffix_keys.front();
  return keys;
}

HeadAttention AttendHead(const Transformer& model, const Layer& layer, const Head& head,
                         const TypeCounts& counts, const KeySet& keys) {
  const double position = static_cast<double>(counts.length);
  const double beta = BiasScale(layer.bias_scaling, position);
  const Vector mq = head.qk * keys.query;
  std::vector<double> far_logits(keys.far_keys.size());
  std::vector<double> suffix_logits(keys.suffix_keys.size());
  double a_max = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < far_logits.size(); ++k) {
    far_logits[k] = Logit(keys.far_keys[k], mq, head, beta, -1);
    a_max = std::max(a_max, far_logits[k]);
  }
  for (std::size_t t = 0; t < suffix_logits.size(); ++t) {
    suffix_logits[t] = Logit(keys.suffix_keys[t], mq, head, beta, static_cast<int>(t));
    a_max = std::max(a_max, suffix_logits[t]);
  }
  HeadAttention attention;
  attention.far.assign(counts.far.size(), 0.0);
  attention.suffix.assign(suffix_logits.size(), 0.0);
  double total = 0.0;
  for (std::size_t k = 0; k < far_logits.size(); ++k) {
    const double w = AttentionWeight(layer, model.tie_tolerance, far_logits[k], a_max, position);
    const double mass = w * static_cast<double>(counts.far[keys.far_types[k]]);
    attention.far[keys.far_types[k]] = mass;
    total += mass;
  }
  for (std::size_t t = 0; t < suffix_logits.size(); ++t) {
    attention.suffix[t] =
        AttentionWeight(layer, model.tie_tolerance, suffix_logits[t], a_max, position);
    total += attention.suffix[t];
  }
  LTSIM_CHECK(total > 0.0);
  for (double& w : attention.far) w /= total;
  for (double& w : attention.suffix) w /= total;
  return attention;
}

std::vector<HeadAttention> AttendAll(const Transformer& model, const TypeCounts& counts,
                                     const KeySet& keys) {
  const Layer& layer = model.layers.front();
  std::vector<HeadAttention> heads;
  for (const Head& head : layer.heads)
    heads.push_back(AttendHead(model, layer, head, counts, keys));
  return heads;
}

double L1Distance(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t k = 0; k < std::max(a.size(), b.size()); ++k)
    sum += std::abs((k < a.size() ? a[k] : 0.0) - (k < b.size() ? b[k] : 0.0));
  return sum;
}

}  // namespace

std::vector<HeadAttention> OneLayerAttention(const Transformer& model, const TypeCounts& counts) {
  return AttendAll(model, counts, CollectKeys(model, counts));
}

Vector EvaluateOneLayer(const Transformer& model, const TypeCounts& counts) {
  LTSIM_CHECK(model.layers.size() == 1);
  return model.readout_weight * FirstLayerOutput(model, counts) + model.readout_bias;
}

Vector FirstLayerOutput(const Transformer& model, const TypeCounts& counts) {
  const KeySet keys = CollectKeys(model, counts);
  const std::vector<HeadAttention> heads = AttendAll(model, counts, keys);
  const Layer& layer = model.layers.front();
  Vector u = keys.query;
  for (std::size_t h = 0; h < heads.size(); ++h) {
    Vector acc = Vector::Zero(model.width);
    for (std::size_t k = 0; k < keys.far_keys.size(); ++k)
      acc += heads[h].far[keys.far_types[k]] * keys.far_keys[k];
    for (std::size_t t = 0; t < keys.suffix_keys.size(); ++t)
      acc += heads[h].suffix[t] * keys.suffix_keys[t];
    u += layer.heads[h].ov * acc;
  }
  return ApplyMlp(layer, u);
}

double AttentionDistance(const Transformer& model, const TypeCounts& x, const TypeCounts& z) {
  const std::vector<HeadAttention> ax = OneLayerAttention(model, x);
  const std::vector<HeadAttention> az = OneLayerAttention(model, z);
  double eta = 0.0;
  for (std::size_t h = 0; h < ax.size(); ++h)
    eta = std::max(eta, L1Distance(ax[h].far, az[h].far) + L1Distance(ax[h].suffix, az[h].suffix));
  return eta;
}

}  // namespace ltsim
