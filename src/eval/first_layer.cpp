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
// (computed exactly as the reference computes a far key's logit), the values O·y_κ, and
// for softmax the row-wise shifted weights exp(logit − present_max[q]), refreshed lazily
// when a new far type raises a row's maximum.
struct FirstLayerStream::HeadTables {
  RowMatrix logits;  // D × D, row = query type
  Matrix values;     // d × D
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
  for (const Head& head : layer_.heads) {
    HeadTables t;
    t.logits.resize(types_, types_);
    t.values.resize(model.width, types_);
    for (int q = 0; q < types_; ++q) {
      const Vector mq = head.qk * inputs_[q];
      for (int k = 0; k < types_; ++k) t.logits(q, k) = Logit(inputs_[k], mq, head, 1.0, -1);
    }
    for (int k = 0; k < types_; ++k) t.values.col(k) = head.ov * inputs_[k];
    t.present_max.assign(types_, -std::numeric_limits<double>::infinity());
    if (layer_.attention == Attention::kSoftmax) {
      t.shifted = RowMatrix::Zero(types_, types_);
      t.stale.assign(types_, false);
    }
    heads_.push_back(std::move(t));
  }
  far_.assign(types_, 0.0);
  weights_.assign(types_, 0.0);
  window_.assign(static_cast<std::size_t>(model.locality) + 1, 0);
  output_ = Vector::Zero(model.width);
  attended_ = Vector::Zero(model.width);
  scratch_ = Vector::Zero(model.width);
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

// acc[0..d) += w · column, the inner loop of every attention sum (kept as a plain loop: at
// d ≈ 16 it is faster than an Eigen expression with its size dispatch).
inline void Axpy(double w, const double* column, double* acc, int d) {
  for (int k = 0; k < d; ++k) acc[k] += w * column[k];
}

// Adds Σ_j α_ij O y_j of head h at the current position, query type q, to `attended_`.
void FirstLayerStream::AddHeadOutput(int h, int q, double log_i) {
  HeadTables& t = heads_[h];
  const Head& head = layer_.heads[h];
  const int d = model_.width;
  const double position = static_cast<double>(position_);
  const double beta = layer_.bias_scaling == BiasScaling::kLog ? log_i : 1.0;
  const double* logits = t.logits.data() + static_cast<std::ptrdiff_t>(q) * types_;
  // Suffix logits, newest (t = 0, the query) first, exactly as the reference forms them.
  const int m = window_size_;
  double a_max = t.present_max[q];
  for (int k = 0; k < m; ++k) {
    suffix_logits_[k] = logits[WindowType(k)] + beta * head.bias[k];
    a_max = std::max(a_max, suffix_logits_[k]);
  }
  // Far keys: one weight per present type (count × per-key weight), one product with O·y.
  std::fill(weights_.begin(), weights_.end(), 0.0);
  if (layer_.attention == Attention::kSoftmax && !present_.empty()) {
    if (t.stale[q]) {
      for (int type : present_) t.shifted(q, type) = std::exp(logits[type] - t.present_max[q]);
      t.stale[q] = false;
    }
    const double* shifted = t.shifted.data() + static_cast<std::ptrdiff_t>(q) * types_;
    const double scale = a_max == t.present_max[q] ? 1.0 : std::exp(t.present_max[q] - a_max);
    for (int type : present_) weights_[type] = far_[type] * shifted[type] * scale;
  } else {
    for (int type : present_)
      weights_[type] =
          far_[type] * AttentionWeight(layer_, model_.tie_tolerance, logits[type], a_max, position);
  }
  const Eigen::Map<const Vector> weights(weights_.data(), types_);
  double total = weights.sum();
  scratch_.noalias() = t.values * weights;
  double* acc = scratch_.data();
  for (int k = 0; k < m; ++k) {
    const double w =
        AttentionWeight(layer_, model_.tie_tolerance, suffix_logits_[k], a_max, position);
    Axpy(w, t.values.col(WindowType(k)).data(), acc, d);
    total += w;
  }
  Axpy(1.0 / total, acc, attended_.data(), d);
}

const Vector& FirstLayerStream::Push(Token token) {
  LTSIM_CHECK(token < model_.alphabet);
  ++position_;
  const int q = static_cast<int>(position_ % model_.period) * model_.alphabet + token;
  // The window is a ring of τ+1 types; the one it drops becomes a far key.
  const int capacity = static_cast<int>(window_.size());
  if (window_size_ == capacity) AddFarType(window_[window_start_]);
  window_[window_start_] = q;
  window_start_ = (window_start_ + 1) % capacity;
  window_size_ = std::min(window_size_ + 1, capacity);
  const double log_i = std::log(static_cast<double>(position_));
  attended_ = inputs_[q];
  for (std::size_t h = 0; h < heads_.size(); ++h) AddHeadOutput(static_cast<int>(h), q, log_i);
  if (!layer_.mlp) return attended_;
  const Mlp& mlp = *layer_.mlp;
  hidden_.noalias() = mlp.in * attended_;
  hidden_ = (hidden_ + mlp.in_bias).cwiseMax(0.0);
  output_ = attended_;
  output_.noalias() += mlp.out * hidden_;
  return output_;
}

}  // namespace ltsim
