// The first layer's output at every position from running type counts and the τ-suffix (theory.md
// §5).
#include "ltsim/eval/first_layer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "eval/layer_math.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/two_layer.h"

namespace ltsim {

// Per head, everything that does not depend on the position: logits(q, κ) = y_κᵀ M y_q
// (computed exactly as the reference computes a far key's logit), and
// for softmax the row-wise shifted weights exp(logit − present_max[q]), refreshed lazily
// when a new far type raises a row's maximum.
struct FirstLayerStream::HeadTables {
  RowMatrix logits;  // D × D, row = query type
  std::vector<double> present_max;
  RowMatrix shifted;        // softmax only: exp(logits − present_max), per row
  std::vector<bool> stale;  // rows of `shifted` to recompute
};

FirstLayerStream::FirstLayerStream(const Transformer& model)
    : model_(model), layer_(model.layers.at(0)), types_(model.types()) {
  if (types_ > kTwoLayerMaxTypes)
    throw InputError("streaming the first layer needs S·Δ ≤ " + std::to_string(kTwoLayerMaxTypes) +
                     " types (this model has " + std::to_string(types_) + ")");
  for (int r = 0; r < model.period; ++r)
    for (int s = 0; s < model.alphabet; ++s) inputs_.push_back(InputVector(model, s, r));
  const int heads = static_cast<int>(layer_.heads.size());
  values_.resize(model.width, static_cast<Eigen::Index>(heads) * types_);
  for (int h = 0; h < heads; ++h)
    for (int k = 0; k < types_; ++k) values_.col(h * types_ + k) = layer_.heads[h].ov * inputs_[k];
  for (const Head& head : layer_.heads) {
    HeadTables t;
    t.logits.resize(types_, types_);
    for (int q = 0; q < types_; ++q) {
      const Vector mq = head.qk * inputs_[q];
      for (int k = 0; k < types_; ++k) t.logits(q, k) = Logit(inputs_[k], mq, head, 1.0, -1);
    }
    t.present_max.assign(types_, -std::numeric_limits<double>::infinity());
    if (layer_.attention == Attention::kSoftmax) {
      t.shifted = RowMatrix::Zero(types_, types_);
      t.stale.assign(types_, false);
    }
    heads_.push_back(std::move(t));
  }
  far_.assign(types_, 0.0);
  weights_ = Vector::Zero(values_.cols());
  features_ = Vector::Zero(types_ + values_.cols());
  window_.assign(static_cast<std::size_t>(model.locality) + 1, 0);
  newest_.assign(window_.size(), 0);
  output_ = Vector::Zero(model.width);
  attended_ = Vector::Zero(model.width);
  suffix_logits_.assign(static_cast<std::size_t>(model.locality) + 1, 0.0);
  if (layer_.mlp) hidden_ = Vector::Zero(layer_.mlp->in.rows());
}

FirstLayerStream::~FirstLayerStream() = default;

void FirstLayerStream::AddFarType(int type) {
  if (far_[type]++ > 0) return;
  present_.push_back(type);
  for (HeadTables& t : heads_) {
    for (int q = 0; q < types_; ++q) {
      const double logit = t.logits(q, type);
      if (logit > t.present_max[q]) {
        t.present_max[q] = logit;
        if (!t.stale.empty()) t.stale[q] = true;
      } else if (!t.stale.empty() && !t.stale[q]) {
        t.shifted(q, type) = std::exp(logit - t.present_max[q]);
      }
    }
  }
}

// Writes head h's attention at the current position (query type q) into its segment of
// `weights_`: count × per-key weight for each far type plus the weight of each suffix key
// added to its type, normalised. One product with the stacked values O·y⁰ of every head
// then gives Σ_h Σ_j α_ij O_h y_j.
void FirstLayerStream::SetHeadWeights(int h, int q, double log_i) {
  HeadTables& t = heads_[h];
  const Head& head = layer_.heads[h];
  const double position = static_cast<double>(position_);
  const double beta = layer_.bias_scaling == BiasScaling::kLog ? log_i : 1.0;
  const double* logits = t.logits.data() + static_cast<std::ptrdiff_t>(q) * types_;
  // Suffix logits, newest (t = 0, the query) first, exactly as the reference forms them.
  const int m = window_size_;
  double a_max = t.present_max[q];
  for (int k = 0; k < m; ++k) {
    suffix_logits_[k] = logits[newest_[k]] + beta * head.bias[k];
    a_max = std::max(a_max, suffix_logits_[k]);
  }
  double* weights = weights_.data() + static_cast<std::ptrdiff_t>(h) * types_;
  std::fill(weights, weights + types_, 0.0);
  double total = 0.0;
  if (layer_.attention == Attention::kSoftmax && !present_.empty()) {
    if (t.stale[q]) {
      for (int type : present_) t.shifted(q, type) = std::exp(logits[type] - t.present_max[q]);
      t.stale[q] = false;
    }
    const double* shifted = t.shifted.data() + static_cast<std::ptrdiff_t>(q) * types_;
    const double scale = a_max == t.present_max[q] ? 1.0 : std::exp(t.present_max[q] - a_max);
    for (int type : present_) total += weights[type] = far_[type] * shifted[type] * scale;
  } else {
    for (int type : present_) {
      total += weights[type] =
          far_[type] * AttentionWeight(layer_, model_.tie_tolerance, logits[type], a_max, position);
    }
  }
  for (int k = 0; k < m; ++k) {
    const double w =
        AttentionWeight(layer_, model_.tie_tolerance, suffix_logits_[k], a_max, position);
    weights[newest_[k]] += w;
    total += w;
  }
  const double inverse = 1.0 / total;
  for (int k = 0; k < types_; ++k) weights[k] *= inverse;
}

int FirstLayerStream::Advance(Token token) {
  LTSIM_CHECK(token < model_.alphabet);
  ++position_;
  const int q = static_cast<int>(position_ % model_.period) * model_.alphabet + token;
  // The window is a ring of τ+1 types; the one it drops becomes a far key.
  const int capacity = static_cast<int>(window_.size());
  if (window_size_ == capacity) AddFarType(window_[window_start_]);
  window_[window_start_] = q;
  window_start_ = (window_start_ + 1) % capacity;
  window_size_ = std::min(window_size_ + 1, capacity);
  for (int k = 0, slot = window_start_; k < window_size_; ++k) {  // newest first
    slot = slot == 0 ? capacity - 1 : slot - 1;
    newest_[k] = window_[slot];
  }
  const double log_i = std::log(static_cast<double>(position_));
  for (std::size_t h = 0; h < heads_.size(); ++h) SetHeadWeights(static_cast<int>(h), q, log_i);
  return q;
}

const Vector& FirstLayerStream::Push(Token token) {
  const int q = Advance(token);
  attended_ = inputs_[q];
  attended_.noalias() += values_ * weights_;
  if (!layer_.mlp) return attended_;
  const Mlp& mlp = *layer_.mlp;
  hidden_.noalias() = mlp.in * attended_;
  hidden_ = (hidden_ + mlp.in_bias).cwiseMax(0.0);
  output_ = attended_;
  output_.noalias() += mlp.out * hidden_;
  return output_;
}

const Vector& FirstLayerStream::PushFeatures(Token token) {
  LTSIM_CHECK(!layer_.mlp);
  const int q = Advance(token);
  features_.head(types_).setZero();
  features_[q] = 1.0;
  features_.tail(weights_.size()) = weights_;
  return features_;
}

Matrix FirstLayerStream::FeatureMatrix() const {
  Matrix f(model_.width, types_ + values_.cols());
  for (int k = 0; k < types_; ++k) f.col(k) = inputs_[k];
  f.rightCols(values_.cols()) = values_;
  return f;
}

}  // namespace ltsim
