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
  void Add(double w, const Vector& y) {
    block_sum_.noalias() += w * y;
    block_total_ += w;
    if (++block_count_ == kBlock) Flush();
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
  Vector mq;  // M₂ y¹_T, or Fᵀ M₂ y¹_T when the keys are φ_i
  double a_max = -std::numeric_limits<double>::infinity();
  Accumulator acc;
};

// Calls visit(key_i, i) for i = 1..T, where key_i is y¹_i, or φ_i when `features` (a first
// layer without MLP, y¹_i = F·φ_i: see FirstLayerStream::PushFeatures).
template <typename Visit>
void StreamFirstLayer(const Transformer& model, const Source& x, bool features, Visit&& visit) {
  FirstLayerStream stream(model);
  auto reader = x.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    const std::uint64_t n = chunk.length();
    for (std::uint64_t k = 0; k < n; ++k) {
      const Token token = chunk.at(chunk.kind == Chunk::Kind::kRun ? 0 : k);
      // Push first: the argument order of a call is unspecified, and position() must be
      // read after the push.
      const Vector& key = features ? stream.PushFeatures(token) : stream.Push(token);
      visit(key, stream.position());
    }
  }
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
  std::vector<SecondHead> heads;
  for (const Head& head : layer.heads) {
    const Vector mq = head.qk * last;
    heads.push_back({features ? Vector(back.transpose() * mq) : mq,
                     -std::numeric_limits<double>::infinity(), Accumulator(key_size)});
  }
  // The second layer's logit of key i for head h (local bias within τ of T).
  auto logit = [&](const Vector& y, std::uint64_t i, std::size_t h) {
    const std::uint64_t t = length - i;
    return Logit(y, heads[h].mq, layer.heads[h], beta,
                 t <= static_cast<std::uint64_t>(model.locality) ? static_cast<int>(t) : -1);
  };
  const bool softmax = layer.attention == Attention::kSoftmax;
  StreamFirstLayer(model, x, features, [&](const Vector& y, std::uint64_t i) {
    for (std::size_t h = 0; h < heads.size(); ++h) {
      const double a = logit(y, i, h);
      heads[h].a_max = std::max(heads[h].a_max, a);
      if (!softmax) continue;
      if (a > heads[h].acc.shift()) heads[h].acc.RaiseShift(a);
      heads[h].acc.Add(std::exp(a - heads[h].acc.shift()), y);
    }
  });
  if (!softmax && !heads.empty()) {
    const double position = static_cast<double>(length);
    StreamFirstLayer(model, x, features, [&](const Vector& y, std::uint64_t i) {
      for (std::size_t h = 0; h < heads.size(); ++h) {
        const double w =
            AttentionWeight(layer, model.tie_tolerance, logit(y, i, h), heads[h].a_max, position);
        if (w != 0.0) heads[h].acc.Add(w, y);
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
