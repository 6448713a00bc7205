// Differential properties of the streaming first layer and the two-layer evaluator against the
// reference.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>

#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/first_layer.h"
#include "ltsim/eval/reference.h"
#include "ltsim/eval/two_layer.h"
#include "ltsim/strings/sources.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// The agreement of docs/model.md §3: 1e-9 relative to the output's magnitude (1e-9 absolute
// near zero).
// The evaluators sum the same terms in different orders, so they differ by ~T·1e-16.
bool Close(const Vector& a, const Vector& b) {
  return SupDistance(a, b) <= 1e-9 * (1.0 + b.cwiseAbs().maxCoeff());
}

RC_GTEST_PROP(TwoLayerProperty, FastEqualsReferenceInEveryMode, ()) {
  const test::ModelShape shape = *test::GenTwoLayerShape();
  const Transformer model = test::MakeRandomModel(shape);
  const std::vector<Token> x = *test::GenString(model.alphabet, 1, 300);
  RC_TAG(AttentionName(shape.attention), AttentionName(shape.attention2));
  RC_ASSERT(Close(EvaluateTwoLayer(model, *MakeTokenSource(x, "x")), EvaluateReference(model, x)));
}

// The first layer's output at every position, against the reference run of the first layer
// alone (a one-layer model whose readout is the identity).
RC_GTEST_PROP(TwoLayerProperty, FirstLayerStreamEqualsReferenceAtEveryPosition, ()) {
  Transformer model = test::MakeRandomModel(*test::GenShape());
  model.readout_weight = Matrix::Identity(model.width, model.width);
  model.readout_bias = Vector::Zero(model.width);
  const std::vector<Token> x = *test::GenString(model.alphabet, 1, 120);
  FirstLayerStream stream(model);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Vector y = stream.Push(x[i]);
    const std::vector<Token> prefix(x.begin(), x.begin() + i + 1);
    RC_ASSERT(Close(y, EvaluateReference(model, prefix)));
  }
}

// The block path (PushBlock + BlockOutputs: batched suffix powers from a binomial series,
// softmax weights shifted by the row's present maximum, normalisation per block) against the
// per-token path at every position. x starts with a run of up to 2·10^4 tokens so blocks
// begin at large i, where the series replaces exp; local biases are scaled by ±80 and the
// logits by 300 so that some blocks overflow the batched shift (a product, or a factor alone:
// a far-absent type's e^(excess)) and fall back. The powers err by at most 38·15·2^−53 ≈ 6e-14
// relative beyond their exp anchor's rounding (2|b|·log i·2^−53, ≤ 2e-13 at |b| = 80, i = 2·10^4;
// suffix_powers.h), and the per-token path's own e^(b·log i + …) rounds independently by as
// much, so the two may differ by about 5e-13: 1e-12 relative to the output's magnitude still
// separates rounding from a wrong weight. About a third of the cases reach compact blocks, so
// this also checks their totals and BlockAttention's expansion against the per-token path.
RC_GTEST_PROP(TwoLayerProperty, FirstLayerBlocksEqualPerTokenPath, ()) {
  test::ModelShape shape = *test::GenShape();
  shape.bias_scaling = *rc::gen::element(BiasScaling::kNone, BiasScaling::kLog);
  Transformer model = test::MakeRandomModel(shape);
  const double bias_factor = *rc::gen::element(1.0, 10.0, 80.0, -80.0, -80.0);
  const double qk_factor = *rc::gen::element(1.0, 300.0);
  for (Head& head : model.layers[0].heads) {
    // −80: every bias negative, so i^b is tiny while a far-absent type's e^(excess) is not.
    head.bias = bias_factor > 0 ? Vector(head.bias * bias_factor)
                                : Vector(head.bias.cwiseAbs() * bias_factor);
    head.qk *= qk_factor;
  }
  const auto run = *rc::gen::inRange<std::uint64_t>(0, 20001);
  const Token run_token = *rc::gen::inRange<Token>(0, static_cast<Token>(model.alphabet));
  std::vector<Token> x(run, run_token);
  const std::vector<Token> tail = *test::GenString(model.alphabet, 1, 700);
  x.insert(x.end(), tail.begin(), tail.end());
  const int block_size = *rc::gen::inRange(1, 300);
  RC_TAG(AttentionName(shape.attention), bias_factor, qk_factor);

  FirstLayerStream token_path(model), block_path(model);
  FirstLayerBlock block;
  Matrix y;
  for (std::size_t start = 0; start < x.size(); start += block_size) {
    const int n = static_cast<int>(std::min<std::size_t>(block_size, x.size() - start));
    block_path.PushBlock(x.data() + start, n, block);
    block_path.BlockOutputs(block, y);
    RC_ASSERT(block.first == start + 1);
    for (int j = 0; j < n; ++j) {
      const Vector& expected = token_path.Push(x[start + j]);
      RC_ASSERT(SupDistance(y.col(j), expected) <= 1e-12 * (1.0 + expected.cwiseAbs().maxCoeff()));
    }
  }
}

// The second layer's two uses of a block, BlockLogits (φ_iᵀ u_g) and BlockAccumulate (Σ_i w_ig
// φ_i), against the same products formed from BlockAttention's dense α. On a compact block they
// never form α: the far parts run as D-vectors over the block and the suffix weights are spread by
// type (src/eval/compact_block.cpp), so every layout step is checked here. (BlockAttention expands
// the same compact fields: far counts, suffix weights, totals; FirstLayerBlocksEqualPerTokenPath
// checks those against the per-token path.) Models and strings are as in
// FirstLayerBlocksEqualPerTokenPath, with a softmax first layer so that blocks are compact once
// every type is far. Both sides sum at most D + block + τ + 1 terms of one sign per part,
// so 1e-12 relative to Σ|terms| separates rounding from a wrong term.
RC_GTEST_PROP(TwoLayerProperty, CompactBlockLogitsAndSumsEqualDenseAttention, ()) {
  test::ModelShape shape = *test::GenShape();
  shape.attention = Attention::kSoftmax;
  shape.bias_scaling = *rc::gen::element(BiasScaling::kNone, BiasScaling::kLog);
  Transformer model = test::MakeRandomModel(shape);
  const double qk_factor = *rc::gen::element(1.0, 1.0, 30.0);
  for (Head& head : model.layers[0].heads) head.qk *= qk_factor;
  const auto run = *rc::gen::inRange<std::uint64_t>(0, 3000);
  std::vector<Token> x(run, *rc::gen::inRange<Token>(0, static_cast<Token>(model.alphabet)));
  const std::vector<Token> tail = *test::GenString(model.alphabet, 1, 1500);
  x.insert(x.end(), tail.begin(), tail.end());
  const int block_size = *rc::gen::inRange(1, 300);
  const int g_count = *rc::gen::inRange(1, 4);
  const int types = model.types();
  const int rows = types * (1 + static_cast<int>(model.layers[0].heads.size()));
  boost::random::mt19937_64 engine(*rc::gen::arbitrary<std::uint64_t>());
  boost::random::normal_distribution<double> normal;
  boost::random::uniform_real_distribution<double> positive(0.0, 2.0);
  Matrix u(rows, g_count);
  for (Eigen::Index k = 0; k < u.size(); ++k) u.data()[k] = normal(engine);
  const Matrix u_query = u.topRows(types), u_attention = u.bottomRows(rows - types);

  FirstLayerStream stream(model);
  FirstLayerBlock block;
  Matrix alpha, logits;
  int compact_blocks = 0;
  for (std::size_t start = 0; start < x.size(); start += block_size) {
    const int n = static_cast<int>(std::min<std::size_t>(block_size, x.size() - start));
    stream.PushBlock(x.data() + start, n, block);
    compact_blocks += block.compact ? 1 : 0;
    stream.BlockAttention(block, alpha);
    Matrix phi = Matrix::Zero(rows, n);
    for (int j = 0; j < n; ++j) phi(block.query[j], j) = 1.0;
    phi.bottomRows(rows - types) = alpha;
    Matrix weights(n, g_count);
    for (Eigen::Index k = 0; k < weights.size(); ++k) weights.data()[k] = positive(engine);

    stream.BlockLogits(block, u_query, u_attention, logits);
    const Matrix expected_logits = phi.transpose() * u;
    const Matrix logit_scale = phi.cwiseAbs().transpose() * u.cwiseAbs();
    RC_ASSERT(((logits - expected_logits).cwiseAbs().array() <= 1e-12 * (1.0 + logit_scale.array()))
                  .all());

    Matrix sums = Matrix::Constant(rows, g_count, 0.5);  // adds to what is there
    stream.BlockAccumulate(block, weights, sums);
    const Matrix expected_sums = (phi * weights).array() + 0.5;
    RC_ASSERT(((sums - expected_sums).cwiseAbs().array() <= 1e-12 * expected_sums.array()).all());
  }
  RC_CLASSIFY(compact_blocks > 0, "some blocks compact");
}

}  // namespace
}  // namespace ltsim
