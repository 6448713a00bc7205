// Two-layer evaluation: y¹_T from the type counts, then the second layer streamed over y¹_i
// (theory.md §5).
#include "ltsim/eval/two_layer.h"

#include <cmath>
#include <limits>

#include "eval/layer_math.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/first_layer.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/type_counts.h"

namespace ltsim {
namespace {

// Σ_i w_i y_i and Σ_i w_i with the weights taken relative to a shift that may rise:
// raising it rescales what is already summed. Terms go to a block of at most kBlock
// before joining the total, which keeps rounding near log(T)·ulp for T = 10^8.
class Accumulator {
 public:
  explicit Accumulator(int width) : sum_(Vector::Zero(width)), block_sum_(Vector::Zero(width)) {}

  double shift() const { return shift_; }
  void RaiseShift(double shift) {
    if (std::isfinite(shift_)) {
      const double factor = std::exp(shift_ - shift);
      sum_ *= factor;
      block_sum_ *= factor;
      total_ *= factor;
      block_total_ *= factor;
    }
    shift_ = shift;
  }
  /// Adds Σ_j w_j k_j over a block, where k_j is column j of `keys` (n columns) or, when
  /// `query` is given, [e_{q_j} ; column j] (one-hot in the entries before the keys' rows).
  void AddBlock(const Matrix& keys, int n, const Vector& w, const int* query) {
    const auto weights = w.head(n);
    if (query != nullptr) {
      for (int j = 0; j < n; ++j) block_sum_[query[j]] += weights[j];
      block_sum_.tail(keys.rows()).noalias() += keys.leftCols(n) * weights;
    } else {
      block_sum_.noalias() += keys.leftCols(n) * weights;
    }
    block_total_ += weights.sum();
    block_count_ += n;
    if (block_count_ >= kBlock) Flush();
  }
  /// Σ w_i y_i / Σ w_i.
  Vector Mean() {
    Flush();
    LTSIM_CHECK(total_ > 0.0);
    return sum_ / total_;
  }

 private:
  static constexpr int kBlock = 4096;
  void Flush() {
    sum_ += block_sum_;
    total_ += block_total_;
    block_sum_.setZero();
    block_total_ = 0.0;
    block_count_ = 0;
  }
  double shift_ = -std::numeric_limits<double>::infinity();
  Vector sum_, block_sum_;
  double total_ = 0.0, block_total_ = 0.0;
  int block_count_ = 0;
};

struct SecondHead {
  Vector mq;  // M₂ y¹_T (the keys are y¹_i), or the α part of Fᵀ M₂ y¹_T (keys are φ_i)
  Vector mq_query;  // the one-hot part of Fᵀ M₂ y¹_T (features only)
  double a_max = -std::numeric_limits<double>::infinity();
  Accumulator acc;
};

constexpr int kBlockTokens = 256;

// Calls visit(block, keys) for consecutive blocks of x's positions, where `keys` holds y¹ of
// the block's positions (d × size), or — when `features` (a first layer without MLP, y¹_i =
// F·φ_i, φ_i = [e_{q_i} ; α_i]) — is block.attention, the α part of φ.
template <typename Visit>
void StreamFirstLayer(const Transformer& model, const Source& x, bool features, Visit&& visit) {
  FirstLayerStream stream(model);
  FirstLayerBlock block;
  Matrix outputs;
  std::vector<Token> tokens(kBlockTokens);
  int filled = 0;
  auto flush = [&] {
    stream.PushBlock(tokens.data(), filled, block);
    if (features) {
      visit(block, block.attention);
    } else {
      stream.BlockOutputs(block, outputs);
      visit(block, outputs);
    }
    filled = 0;
  };
  auto reader = x.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    const std::uint64_t n = chunk.length();
    for (std::uint64_t k = 0; k < n; ++k) {
      tokens[filled++] = chunk.at(chunk.kind == Chunk::Kind::kRun ? 0 : k);
      if (filled == kBlockTokens) flush();
    }
  }
  if (filled > 0) flush();
}

}  // namespace

Vector EvaluateTwoLayer(const Transformer& model, const Source& x) {
  LTSIM_CHECK(model.layers.size() == 2);
  const TypeCounts counts = CountTypes(x, model.alphabet, model.period, model.locality);
  const std::uint64_t length = counts.length;
  const Vector last = FirstLayerOutput(model, counts);
  const Layer& layer = model.layers[1];
  const double beta = BiasScale(layer.bias_scaling, static_cast<double>(length));
  // Without a first-layer MLP the second layer works on φ_i (D + H·D entries) instead of
  // y¹_i = F·φ_i: logits y¹ᵀ(M y¹_T) = φᵀ(Fᵀ M y¹_T), and Σ w y¹ = F Σ w φ. This skips the
  // d × H·D product per token.
  const FirstLayerStream probe(model);
  const bool features = probe.linear();
  const Matrix back = features ? probe.FeatureMatrix() : Matrix();
  const int key_size = features ? static_cast<int>(back.cols()) : model.width;
  const int types = model.types();
  std::vector<SecondHead> heads;
  for (const Head& head : layer.heads) {
    const Vector mq = head.qk * last;
    SecondHead h{mq, Vector(), -std::numeric_limits<double>::infinity(), Accumulator(key_size)};
    if (features) {
      const Vector u = back.transpose() * mq;
      h.mq_query = u.head(types);
      h.mq = u.tail(u.size() - types);
    }
    heads.push_back(std::move(h));
  }
  // The second layer's logits of a block's keys for head h, with the local bias within τ
  // of T.
  Vector logits(kBlockTokens), weights(kBlockTokens);
  auto block_logits = [&](const FirstLayerBlock& block, const Matrix& keys, std::size_t h) {
    const int n = block.size;
    auto a = logits.head(n);
    a.noalias() = keys.leftCols(n).transpose() * heads[h].mq;
    if (features)
      for (int j = 0; j < n; ++j) a[j] += heads[h].mq_query[block.query[j]];
    const std::uint64_t end = block.first + static_cast<std::uint64_t>(n) - 1;
    const std::uint64_t tau = static_cast<std::uint64_t>(model.locality);
    for (std::uint64_t i = std::max(block.first, length > tau ? length - tau : 1); i <= end; ++i)
      a[static_cast<Eigen::Index>(i - block.first)] += beta * layer.heads[h].bias[length - i];
    return a;
  };
  auto add = [&](const FirstLayerBlock& block, const Matrix& keys, std::size_t h) {
    heads[h].acc.AddBlock(keys, block.size, weights, features ? block.query.data() : nullptr);
  };
  const bool softmax = layer.attention == Attention::kSoftmax;
  StreamFirstLayer(model, x, features, [&](const FirstLayerBlock& block, const Matrix& keys) {
    for (std::size_t h = 0; h < heads.size(); ++h) {
      const auto a = block_logits(block, keys, h);
      const double block_max = a.maxCoeff();
      heads[h].a_max = std::max(heads[h].a_max, block_max);
      if (!softmax) continue;
      if (block_max > heads[h].acc.shift()) heads[h].acc.RaiseShift(block_max);
      // glibc's exp (an FMA variant chosen at run time) is both more accurate than Eigen's
      // SSE2 packet exp and, measured in bench_two_layer, no slower.
      for (int j = 0; j < block.size; ++j) weights[j] = std::exp(a[j] - heads[h].acc.shift());
      add(block, keys, h);
    }
  });
  if (!softmax && !heads.empty()) {
    const double position = static_cast<double>(length);
    StreamFirstLayer(model, x, features, [&](const FirstLayerBlock& block, const Matrix& keys) {
      for (std::size_t h = 0; h < heads.size(); ++h) {
        const auto a = block_logits(block, keys, h);
        for (int j = 0; j < block.size; ++j)
          weights[j] = AttentionWeight(layer, model.tie_tolerance, a[j], heads[h].a_max, position);
        add(block, keys, h);
      }
    });
  }
  Vector u = last;
  for (std::size_t h = 0; h < heads.size(); ++h) {
    const Vector mean = heads[h].acc.Mean();
    u += layer.heads[h].ov * (features ? Vector(back * mean) : mean);
  }
  return model.readout_weight * ApplyMlp(layer, u) + model.readout_bias;
}

}  // namespace ltsim
