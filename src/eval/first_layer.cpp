// The first layer's output at every position from running type counts and the τ-suffix
// (docs/theory.md §4.3).
#include "ltsim/eval/first_layer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "eval/compact_block.h"
#include "eval/first_layer_impl.h"
#include "eval/layer_math.h"
#include "eval/suffix_powers.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/two_layer.h"

namespace ltsim {
namespace {
// Largest exponent a batched softmax term may reach: e^600 times the window and the counts
// (< 2^64) stays far below the largest double, e^709.
constexpr double kSafeExponent = 600.0;
// Heads the batched softmax kernel takes at once (more go through the per-token path).
constexpr int kMaxKernelHeads = 8;

// Unnormalised softmax attention of every head at one position, with each row's present maximum M_q
// as the shift: a far type κ weighs far[κ]·e^(logit(q,κ) − M_q) (row q of `tables[h]`, head h's
// table) and the suffix key t back weighs e^(logit(q,κ_t) − M_q)·i^(b_{h,t}) (`powers[(h·window +
// t)·stride]`: i^(b_{h,t}), or e^(b_{h,t}) without log scaling). This is the reference's e^(a − a*)
// times the common factor e^(a* − M_q), which normalisation cancels. The caller guarantees no term
// exceeds e^kSafeExponent, and each total is ≥ 1 (the maximal present type has weight ≥ 1), so
// nothing overflows and underflow costs at most 1e-308 absolute against a total ≥ 1. The totals of
// all heads are formed before any division, so the heads' chains overlap. kD = D when it is known
// at compile time (the loops then unroll and vectorise), 0 for any D.
template <int kD>
void SoftmaxPosition(int types, int heads, const double* const* tables, int q,
                     const double* __restrict far, const int* newest, int suffix,
                     const double* powers, std::ptrdiff_t stride, int window,
                     double* __restrict column, double* __restrict totals) {
  const int d = kD > 0 ? kD : types;
  const std::ptrdiff_t head_stride = window * stride;
  for (int h = 0; h < heads; ++h) {
    const double* __restrict shifted = tables[h] + static_cast<std::ptrdiff_t>(q) * d;
    const double* power = powers + h * head_stride;
    double* __restrict weights = column + static_cast<std::ptrdiff_t>(h) * d;
    double even = 0.0, odd = 0.0;  // two partial sums, so the additions do not wait
    int k = 0;
    for (; k + 1 < d; k += 2) {
      weights[k] = far[k] * shifted[k];
      weights[k + 1] = far[k + 1] * shifted[k + 1];
      even += weights[k];
      odd += weights[k + 1];
    }
    if (k < d) {
      weights[k] = far[k] * shifted[k];
      even += weights[k];
    }
    for (int t = 0; t < suffix; ++t) {
      const double w = shifted[newest[t]] * power[t * stride];
      weights[newest[t]] += w;
      odd += w;
    }
    totals[h * stride] = even + odd;
  }
}

auto ChooseSoftmaxKernel(int types) -> decltype(&SoftmaxPosition<0>) {
  switch (types) {
    case 2:
      return &SoftmaxPosition<2>;
    case 3:
      return &SoftmaxPosition<3>;
    case 4:
      return &SoftmaxPosition<4>;
    case 6:
      return &SoftmaxPosition<6>;
    case 8:
      return &SoftmaxPosition<8>;
    case 9:
      return &SoftmaxPosition<9>;
    case 12:
      return &SoftmaxPosition<12>;
    case 16:
      return &SoftmaxPosition<16>;
    default:
      return &SoftmaxPosition<0>;
  }
}
}  // namespace

// Per head, everything that does not depend on the position: logits(q, κ) = y_κᵀ M y_q
// (computed exactly as the reference computes a far key's logit), and for softmax the
// row-wise shifted weights exp(logit − present_max[q]) of every type κ, refreshed lazily
// when a new far type raises a row's maximum.
struct FirstLayerStream::Impl::HeadTables {
  RowMatrix logits;  // D × D, row = query type
  std::vector<double> present_max;
  RowMatrix shifted;           // softmax only: exp(logits − present_max), per row
  Matrix by_column;            // softmax only: `shifted` again, column-major (compact blocks)
  std::vector<double> excess;  // softmax only: max_κ logits(q, κ) − present_max[q]
  std::vector<char> stale;     // rows of `shifted` to recompute
  Eigen::ArrayXd bias;         // the head's local bias b_0 … b_τ
};

FirstLayerStream::Impl::Impl(const Transformer& model)
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
      t.by_column = Matrix::Zero(types_, types_);
      t.excess.assign(types_, std::numeric_limits<double>::infinity());
      t.stale.assign(types_, 1);
    }
    t.bias = head.bias.array();
    heads_.push_back(std::move(t));
  }
  far_.assign(types_, 0.0);
  weights_ = Vector::Zero(values_.cols());
  newest_.assign(static_cast<std::size_t>(model.locality) + 1, 0);
  output_ = Vector::Zero(model.width);
  attended_ = Vector::Zero(model.width);
  suffix_logits_.assign(static_cast<std::size_t>(model.locality) + 1, 0.0);
  if (layer_.mlp) hidden_ = Vector::Zero(layer_.mlp->in.rows());
  inputs_matrix_.resize(model.width, types_);
  for (int k = 0; k < types_; ++k) inputs_matrix_.col(k) = inputs_[k];
  block_exponent_.assign(heads, 0.0);
  const int window = static_cast<int>(newest_.size());
  suffix_bias_.resize(static_cast<Eigen::Index>(heads) * window);
  for (int h = 0; h < heads; ++h) suffix_bias_.segment(h * window, window) = heads_[h].bias;
  power_series_ = std::make_unique<SuffixPowerSeries>(
      std::vector<double>(suffix_bias_.data(), suffix_bias_.data() + suffix_bias_.size()));
  softmax_kernel_ = ChooseSoftmaxKernel(types_);
  ready_.assign(types_, 0);
  scratch_ = std::make_unique<compact::Scratch>();
  for (const HeadTables& t : heads_) {
    shifted_tables_.push_back(t.shifted.data());
    column_tables_.push_back(t.by_column.data());
  }
}

FirstLayerStream::Impl::~Impl() = default;

void FirstLayerStream::Impl::AddFarType(int type) {
  if (far_[type]++ > 0) return;
  present_.push_back(type);
  for (HeadTables& t : heads_) {
    for (int q = 0; q < types_; ++q) {
      const double logit = t.logits(q, type);
      if (logit > t.present_max[q]) {
        t.present_max[q] = logit;
        if (!t.stale.empty()) t.stale[q] = 1;
        ready_[q] = 0;
      }
    }
  }
}

void FirstLayerStream::Impl::RefreshRow(HeadTables& t, int q) {
  double excess = -std::numeric_limits<double>::infinity();
  for (int k = 0; k < types_; ++k) {
    const double a = t.logits(q, k) - t.present_max[q];
    t.shifted(q, k) = std::exp(a);
    excess = std::max(excess, a);
  }
  t.by_column.row(q) = t.shifted.row(q);
  t.excess[q] = excess;
  t.stale[q] = 0;
}

// Writes head h's attention at the current position (query type q) into `weights` (D
// entries): count × per-key weight for each far type plus the weight of each suffix key
// added to its type, normalised. One product with the stacked values O·y⁰ of every head
// then gives Σ_h Σ_j α_ij O_h y_j.
void FirstLayerStream::Impl::SetHeadWeights(int h, int q, double log_i, double* weights) {
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
  std::fill(weights, weights + types_, 0.0);
  double total = 0.0;
  if (layer_.attention == Attention::kSoftmax && !present_.empty()) {
    if (t.stale[q]) RefreshRow(t, q);
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

int FirstLayerStream::Impl::AdvanceState(Token token) {
  LTSIM_CHECK(token < model_.alphabet);
  ++position_;
  if (++residue_ == model_.period) residue_ = 0;
  const int q = residue_ * model_.alphabet + token;
  // The window holds the last τ+1 types newest first; the one it drops becomes a far key.
  const int capacity = static_cast<int>(newest_.size());
  if (window_size_ == capacity)
    AddFarType(newest_[capacity - 1]);
  else
    ++window_size_;
  for (int k = window_size_ - 1; k > 0; --k) newest_[k] = newest_[k - 1];
  newest_[0] = q;
  return q;
}

int FirstLayerStream::Impl::Advance(Token token) {
  const int q = AdvanceState(token);
  const double log_i = std::log(static_cast<double>(position_));
  for (std::size_t h = 0; h < heads_.size(); ++h)
    SetHeadWeights(static_cast<int>(h), q, log_i, weights_.data() + h * types_);
  return q;
}

// i^(b_{h,t}) for the next n positions into block_powers_ (n × H·(τ+1), column h·(τ+1) + t;
// SuffixPowerSeries without an exp per position, or e^(b_{h,t}) without log scaling), and per
// head the largest exponent b_{h,t}·log i over the block (attained at its first or last
// position).
void FirstLayerStream::Impl::SuffixPowers(int n) {
  const int window = static_cast<int>(newest_.size());
  const double first = static_cast<double>(position_ + 1);
  const double last = static_cast<double>(position_ + n);
  const bool log_scaling = layer_.bias_scaling == BiasScaling::kLog;
  for (std::size_t h = 0; h < heads_.size(); ++h) {
    const auto bias = suffix_bias_.segment(static_cast<Eigen::Index>(h) * window, window);
    block_exponent_[h] = log_scaling ? std::max((bias * std::log(first)).maxCoeff(),
                                                (bias * std::log(last)).maxCoeff())
                                     : bias.maxCoeff();
  }
  block_powers_.resize(n, suffix_bias_.size());
  if (log_scaling)
    power_series_->Fill(position_ + 1, n, block_powers_.data());
  else
    block_powers_.rowwise() = suffix_bias_.exp().transpose();
}

void FirstLayerStream::Impl::PushBlock(const Token* tokens, int n, FirstLayerBlock& block) {
  const int heads = static_cast<int>(heads_.size());
  block.compact = false;  // until PushCompactBlock has filled it, even if a token throws
  block.first = position_ + 1;
  block.size = n;
  if (static_cast<int>(block.query.size()) < n) block.query.resize(n);
  if (block.attention.rows() != values_.cols() || block.attention.cols() < n)
    block.attention.resize(values_.cols(), n);
  const bool softmax = layer_.attention == Attention::kSoftmax;
  if (softmax && n > 0) SuffixPowers(n);
  const int window = static_cast<int>(newest_.size());
  const bool batched = softmax && heads <= kMaxKernelHeads;
  // Compact blocks carry D-vectors per head (and per second-layer head), which pays off while
  // D is small against the block.
  block.compact = batched && types_ <= compact::kMaxTypes && PushCompactBlock(tokens, n, block);
  if (block.compact) return;
  if (batched) block_totals_.resize(n, heads);
  // Whether a query type's rows are fresh and safe for the batched kernel is decided once per
  // block (block_exponent_ changes per block) and again only when AddFarType raises a row's
  // maximum: ready_[q] is 0 (undecided), 1 (batched) or 2 (per-token path).
  std::fill(ready_.begin(), ready_.end(), 0);
  for (int j = 0; j < n; ++j) {
    const int q = AdvanceState(tokens[j]);
    block.query[j] = q;
    double* column = block.attention.col(j).data();
    if (batched && ready_[q] == 0) {
      bool safe = !present_.empty();
      for (int h = 0; h < heads && safe; ++h) {
        HeadTables& t = heads_[h];
        if (t.stale[q]) RefreshRow(t, q);
        // Both factors of a suffix term, e^(excess) and i^b, must be finite on their own,
        // not only their product (a type absent from the far keys can have a huge excess).
        safe = t.excess[q] <= kSafeExponent && t.excess[q] + block_exponent_[h] <= kSafeExponent;
      }
      ready_[q] = safe ? 1 : 2;
    }
    if (batched && ready_[q] == 1) {
      softmax_kernel_(types_, heads, shifted_tables_.data(), q, far_.data(), newest_.data(),
                      window_size_, &block_powers_(j, 0), n, window, column, &block_totals_(j, 0));
      continue;
    }
    const double log_i = std::log(static_cast<double>(position_));
    for (int h = 0; h < heads; ++h) {
      SetHeadWeights(h, q, log_i, column + static_cast<std::ptrdiff_t>(h) * types_);
      if (batched) block_totals_(j, h) = 1.0;  // already normalised
    }
  }
  if (!batched) return;
  // Normalise: α = weights / total, a whole block per head in vectorised passes.
  auto inverse = block_totals_.topRows(n);
  inverse = inverse.inverse();
  for (int h = 0; h < heads; ++h)
    block.attention.middleRows(static_cast<Eigen::Index>(h) * types_, types_)
        .leftCols(n)
        .array()
        .rowwise() *= inverse.col(h).transpose();
}

// The compact layout (first_layer.h) for a block in which no table row changes: the window is
// full, every type leaving it is already a far type (so no row's present maximum rises), and
// every query type's rows pass PushBlock's overflow check for the block. Otherwise returns false
// having changed nothing but refreshing stale rows. F_i ⊙ E_h[q_i] is never formed: the far part
// of Z_{i,h}, Σ_κ F_i[κ]·E_h[q, κ], is kept for every q at once as a D-vector, computed from the
// counts at the block's start and then raised by the column E_h[·, κ] when a κ leaves the
// window — a sum of at most D + n positive terms, so within (D + n)·2^−53 relative.
bool FirstLayerStream::Impl::PushCompactBlock(const Token* tokens, int n, FirstLayerBlock& block) {
  const int window = static_cast<int>(newest_.size());
  if (n == 0 || window_size_ < window) return false;
  std::vector<int>& types = block.types;
  types.resize(static_cast<std::size_t>(n + window));
  for (int t = 0; t < window; ++t) types[t] = newest_[window - 1 - t];
  int residue = residue_;
  for (int j = 0; j < n; ++j) {
    LTSIM_CHECK(tokens[j] < model_.alphabet);
    if (++residue == model_.period) residue = 0;
    types[window + j] = residue * model_.alphabet + tokens[j];
  }
  for (int j = 0; j < n; ++j)
    if (far_[types[j]] == 0) return false;
  const int heads = static_cast<int>(heads_.size());
  std::fill(ready_.begin(), ready_.end(), 0);
  block.distinct.clear();
  for (int j = 0; j < n; ++j) {
    const int q = types[window + j];
    if (ready_[q] != 0) continue;
    ready_[q] = 1;
    block.distinct.push_back(q);
    for (int h = 0; h < heads; ++h) {
      HeadTables& t = heads_[h];
      if (t.stale[q]) RefreshRow(t, q);
      if (!(t.excess[q] <= kSafeExponent && t.excess[q] + block_exponent_[h] <= kSafeExponent))
        return false;
    }
  }
  block.far = far_;
  block.suffix.resize(n, static_cast<Eigen::Index>(heads) * window);
  block.inverse_total.resize(n, heads);
  compact::Totals(View(block), block_powers_.data(), block.suffix.data(),
                  block.inverse_total.data(), *scratch_);
  for (int j = 0; j < n; ++j) far_[types[j]] += 1.0;
  block.query.assign(types.begin() + window, types.end());
  for (int t = 0; t < window; ++t) newest_[t] = types[n + window - 1 - t];
  position_ += static_cast<std::uint64_t>(n);
  residue_ = residue;
  return true;
}

compact::View FirstLayerStream::Impl::View(const FirstLayerBlock& block) const {
  compact::View v;
  v.n = block.size;
  v.d = types_;
  v.heads = static_cast<int>(heads_.size());
  v.window = static_cast<int>(newest_.size());
  v.types = block.types.data();
  v.rows = shifted_tables_.data();
  v.columns = column_tables_.data();
  v.far = block.far.data();
  v.distinct = block.distinct.data();
  v.distinct_count = static_cast<int>(block.distinct.size());
  return v;
}

// A compact block reads the stream's tables, which may change once the stream advances.
void FirstLayerStream::Impl::CheckCurrent(const FirstLayerBlock& block) const {
  LTSIM_CHECK(block.first + static_cast<std::uint64_t>(block.size) == position_ + 1);
}

void FirstLayerStream::Impl::BlockAttention(const FirstLayerBlock& block, Matrix& alpha) const {
  const int n = block.size;
  if (!block.compact) {
    alpha = block.attention.leftCols(n);
    return;
  }
  CheckCurrent(block);
  const int heads = static_cast<int>(heads_.size());
  const int window = static_cast<int>(newest_.size());
  alpha.resize(static_cast<Eigen::Index>(heads) * types_, n);
  Eigen::ArrayXd far = Eigen::Map<const Eigen::ArrayXd>(block.far.data(), types_);
  for (int j = 0; j < n; ++j) {
    far[block.types[j]] += 1.0;
    const int q = block.types[window + j];
    for (int h = 0; h < heads; ++h) {
      const double inverse = block.inverse_total(j, h);
      auto column = alpha.col(j).segment(static_cast<Eigen::Index>(h) * types_, types_);
      column = (far * heads_[h].shifted.row(q).transpose().array()).matrix() * inverse;
      for (int s = 0; s < window; ++s)
        column[block.types[window + j - s]] += block.suffix(j, h * window + s) * inverse;
    }
  }
}

// On a compact block, the far part of head h's logit for second-layer head g,
// Σ_κ F_i[κ]·E_h[q, κ]·u_(g,h)[κ], is kept for every q as a D-vector like PushCompactBlock's
// totals (raised by u_(g,h)[κ]·E_h[·, κ] when κ leaves the window), so a position costs
// O(H·G·(D + τ)) and no horizontal sum over D.
void FirstLayerStream::Impl::BlockLogits(const FirstLayerBlock& block, const Matrix& u_query,
                                         const Matrix& u_attention, Matrix& logits) {
  const int n = block.size;
  const int g_count = static_cast<int>(u_query.cols());
  logits.resize(n, g_count);
  if (!block.compact) {
    logits.noalias() = block.attention.leftCols(n).transpose() * u_attention;
    for (int j = 0; j < n; ++j) logits.row(j) += u_query.row(block.query[j]);
    return;
  }
  CheckCurrent(block);
  compact::Logits(View(block), block.suffix.data(), block.inverse_total.data(), u_query.data(),
                  u_attention.data(), g_count, logits.data(), *scratch_);
}

// On a compact block, Σ_i c_i·F_i ⊙ E_h[q_i] (c_i = w_i / Z_{i,h}) is Σ_q E_h[q] ⊙ A_q with
// A_q = Σ_{i: q_i = q} c_i·F_i: one D-vector update per position and head pair, and the
// products with E_h once per block.
void FirstLayerStream::Impl::BlockAccumulate(const FirstLayerBlock& block, const Matrix& weights,
                                             Matrix& sums) {
  const int n = block.size;
  const int g_count = static_cast<int>(weights.cols());
  const int d = types_;
  if (!block.compact) {
    sums.bottomRows(sums.rows() - d).noalias() += block.attention.leftCols(n) * weights.topRows(n);
    for (int j = 0; j < n; ++j) sums.row(block.query[j]) += weights.row(j);
    return;
  }
  CheckCurrent(block);
  compact::Accumulate(View(block), block.suffix.data(), block.inverse_total.data(), weights.data(),
                      weights.outerStride(), g_count, sums.data(), sums.outerStride(), *scratch_);
}

void FirstLayerStream::Impl::BlockOutputs(const FirstLayerBlock& block, Matrix& y) {
  const int n = block.size;
  y.resize(model_.width, n);
  if (block.compact) {
    BlockAttention(block, block_attention_);
    y.noalias() = values_ * block_attention_;
  } else {
    y.noalias() = values_ * block.attention.leftCols(n);
  }
  for (int j = 0; j < n; ++j) y.col(j) += inputs_matrix_.col(block.query[j]);
  if (!layer_.mlp) return;
  const Mlp& mlp = *layer_.mlp;
  block_hidden_.resize(mlp.in.rows(), n);
  block_hidden_.noalias() = mlp.in * y;
  block_hidden_ = (block_hidden_.colwise() + mlp.in_bias).cwiseMax(0.0);
  y.noalias() += mlp.out * block_hidden_;
}

const Vector& FirstLayerStream::Impl::Push(Token token) {
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

Matrix FirstLayerStream::Impl::FeatureMatrix() const {
  Matrix f(model_.width, types_ + values_.cols());
  for (int k = 0; k < types_; ++k) f.col(k) = inputs_[k];
  f.rightCols(values_.cols()) = values_;
  return f;
}

FirstLayerStream::FirstLayerStream(const Transformer& model)
    : impl_(std::make_unique<Impl>(model)) {}
FirstLayerStream::~FirstLayerStream() = default;
const Vector& FirstLayerStream::Push(Token token) { return impl_->Push(token); }
void FirstLayerStream::PushBlock(const Token* tokens, int n, FirstLayerBlock& block) {
  impl_->PushBlock(tokens, n, block);
}
void FirstLayerStream::BlockAttention(const FirstLayerBlock& block, Matrix& alpha) const {
  impl_->BlockAttention(block, alpha);
}
void FirstLayerStream::BlockLogits(const FirstLayerBlock& block, const Matrix& u_query,
                                   const Matrix& u_attention, Matrix& logits) {
  impl_->BlockLogits(block, u_query, u_attention, logits);
}
void FirstLayerStream::BlockAccumulate(const FirstLayerBlock& block, const Matrix& weights,
                                       Matrix& sums) {
  impl_->BlockAccumulate(block, weights, sums);
}
void FirstLayerStream::BlockOutputs(const FirstLayerBlock& block, Matrix& y) {
  impl_->BlockOutputs(block, y);
}
Matrix FirstLayerStream::FeatureMatrix() const { return impl_->FeatureMatrix(); }
bool FirstLayerStream::linear() const { return impl_->linear(); }
std::uint64_t FirstLayerStream::position() const { return impl_->position(); }

}  // namespace ltsim
