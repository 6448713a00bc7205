// Two-layer evaluation: y¹_T from the type counts, then the second layer streamed over y¹_i
// (docs/theory.md §4.3, §8.1).
#include "ltsim/eval/two_layer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/layer_math.h"
#include "eval/vector_exp.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/first_layer.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/type_counts.h"

namespace ltsim {
namespace {

// Σ_i w_i y_i and Σ_i w_i with the weights taken relative to a shift that may rise:
// raising it rescales what is already summed. Blocks' sums go to a partial sum of at most
// kBlock terms before joining the total, which keeps rounding near log(T)·ulp for T = 10^8.
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
  /// Adds a block of n terms: Σ_j w_j y_j (`sum`) and Σ_j w_j (`total`).
  template <typename Sum>
  void Add(const Sum& sum, double total, int n) {
    block_sum_ += sum;
    block_total_ += total;
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

constexpr int kBlockTokens = 256;

// The second layer's keys at x's positions, a block at a time: y¹_i, or — for a first layer
// without MLP (y¹_i = F·φ_i, φ_i = [e_{q_i} ; α_i]) — φ_i, never formed: FirstLayerStream works
// on its block directly. Each visit gets the block's logits against every head's query (a
// column of `queries`, key_size × G) and a function that adds Σ_j W(j, g)·key_j into sums.col(g).
class SecondLayerKeys {
 public:
  SecondLayerKeys(const Transformer& model, const Matrix& queries, bool features)
      : model_(model), queries_(queries), features_(features) {
    if (features_) {
      const int types = model.types();
      query_types_ = queries.topRows(types);
      query_attention_ = queries.bottomRows(queries.rows() - types);
    }
  }

  /// visit(block, logits, accumulate) for consecutive blocks of x; accumulate(W, sums).
  template <typename Visit>
  void Stream(const Source& x, Visit&& visit) {
    FirstLayerStream stream(model_);
    FirstLayerBlock block;
    Matrix outputs, logits;
    std::vector<Token> tokens(kBlockTokens);
    int filled = 0;
    auto accumulate = [&](const Matrix& weights, Matrix& sums) {
      if (features_)
        stream.BlockAccumulate(block, weights, sums);
      else
        sums.noalias() += outputs * weights.topRows(block.size);
    };
    auto flush = [&] {
      stream.PushBlock(tokens.data(), filled, block);
      if (features_) {
        stream.BlockLogits(block, query_types_, query_attention_, logits);
      } else {
        stream.BlockOutputs(block, outputs);
        logits.noalias() = outputs.transpose() * queries_;
      }
      visit(static_cast<const FirstLayerBlock&>(block), logits, accumulate);
      filled = 0;
    };
    auto reader = x.Open();
    Chunk chunk;
    while (reader->Next(chunk)) {
      const std::uint64_t n = chunk.length();
      for (std::uint64_t k = 0; k < n;) {
        const int take = static_cast<int>(
            std::min<std::uint64_t>(n - k, static_cast<std::uint64_t>(kBlockTokens - filled)));
        Token* to = tokens.data() + filled;
        if (chunk.kind == Chunk::Kind::kBytes)
          std::copy(chunk.bytes + k, chunk.bytes + k + take, to);
        else if (chunk.kind == Chunk::Kind::kWords)
          std::copy(chunk.words + k, chunk.words + k + take, to);
        else
          std::fill(to, to + take, chunk.run.token);
        filled += take;
        k += static_cast<std::uint64_t>(take);
        if (filled == kBlockTokens) flush();
      }
    }
    if (filled > 0) flush();
  }

 private:
  const Transformer& model_;
  const Matrix& queries_;
  bool features_;
  Matrix query_types_, query_attention_;
};

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
  const int g_count = static_cast<int>(layer.heads.size());
  Matrix queries(key_size, g_count);
  std::vector<Accumulator> sums;
  for (int g = 0; g < g_count; ++g) {
    const Vector mq = layer.heads[g].qk * last;
    queries.col(g) = features ? Vector(back.transpose() * mq) : mq;
    sums.emplace_back(key_size);
  }
  std::vector<double> a_max(g_count, -std::numeric_limits<double>::infinity());
  // The local bias of the positions within τ of T, added to a block's logits.
  auto add_local_bias = [&](const FirstLayerBlock& block, Matrix& logits) {
    const std::uint64_t end = block.first + static_cast<std::uint64_t>(block.size) - 1;
    const std::uint64_t tau = static_cast<std::uint64_t>(model.locality);
    for (std::uint64_t i = std::max(block.first, length > tau ? length - tau : 1); i <= end; ++i)
      for (int g = 0; g < g_count; ++g)
        logits(static_cast<Eigen::Index>(i - block.first), g) +=
            beta * layer.heads[g].bias[length - i];
  };
  Matrix weights(kBlockTokens, g_count), block_sums(key_size, g_count);
  SecondLayerKeys keys(model, queries, features);
  const bool softmax = layer.attention == Attention::kSoftmax;
  keys.Stream(x, [&](const FirstLayerBlock& block, Matrix& logits, auto& accumulate) {
    add_local_bias(block, logits);
    const int n = block.size;
    for (int g = 0; g < g_count; ++g) {
      const double block_max = logits.col(g).maxCoeff();
      a_max[g] = std::max(a_max[g], block_max);
      if (!softmax) continue;
      if (block_max > sums[g].shift()) sums[g].RaiseShift(block_max);
      // glibc's vector exp where the CPU has it (bench_two_layer: 16% of the time at T = 10^6
      // with AVX-512 against its scalar exp).
      ExpShifted(&logits(0, g), sums[g].shift(), &weights(0, g), n);
    }
    if (!softmax) return;
    block_sums.setZero();
    accumulate(weights, block_sums);
    for (int g = 0; g < g_count; ++g)
      sums[g].Add(block_sums.col(g), weights.col(g).head(n).sum(), n);
  });
  if (!softmax && g_count > 0) {
    const double position = static_cast<double>(length);
    keys.Stream(x, [&](const FirstLayerBlock& block, Matrix& logits, auto& accumulate) {
      add_local_bias(block, logits);
      const int n = block.size;
      for (int g = 0; g < g_count; ++g)
        for (int j = 0; j < n; ++j)
          weights(j, g) =
              AttentionWeight(layer, model.tie_tolerance, logits(j, g), a_max[g], position);
      block_sums.setZero();
      accumulate(weights, block_sums);
      for (int g = 0; g < g_count; ++g)
        sums[g].Add(block_sums.col(g), weights.col(g).head(n).sum(), n);
    });
  }
  Vector u = last;
  for (int g = 0; g < g_count; ++g) {
    const Vector mean = sums[g].Mean();
    u += layer.heads[g].ov * (features ? Vector(back * mean) : mean);
  }
  return model.readout_weight * ApplyMlp(layer, u) + model.readout_bias;
}

}  // namespace ltsim
