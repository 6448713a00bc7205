// Unit tests of the random model generator: replay, shapes, weight laws, pair kinds.
#include "ltsim/gen/model_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/model/constants.h"
#include "ltsim_test/model_weights.h"

namespace ltsim {
namespace {

using test::AllWeights;

// The message of the InputError `run` throws ("" when it throws nothing).
template <class F>
std::string ErrorOf(F run) {
  try {
    run();
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

ModelSpec TwoLayerSpec() {
  ModelSpec spec;
  spec.layers = 2;
  spec.alphabet = 3;
  spec.width = 5;
  spec.period = 2;
  spec.locality = 2;
  spec.heads = 3;
  spec.attention = Attention::kFinite;
  spec.bias_scaling = BiasScaling::kLog;
  spec.precision_bits = 6;
  spec.mlp = true;
  spec.outputs = 2;
  return spec;
}

// ---- Models ----

TEST(ModelGenerator, IsAPureFunctionOfSpecAndEngineState) {
  FuzzEngine a(7), b(7);
  EXPECT_EQ(AllWeights(GenerateModel(TwoLayerSpec(), a)),
            AllWeights(GenerateModel(TwoLayerSpec(), b)));
  EXPECT_EQ(a, b);  // both engines advanced alike
  FuzzEngine c(8);
  EXPECT_NE(AllWeights(GenerateModel(TwoLayerSpec(), a)),
            AllWeights(GenerateModel(TwoLayerSpec(), c)));
}

TEST(ModelGenerator, HasTheRequestedShape) {
  FuzzEngine engine(1);
  const Transformer model = GenerateModel(TwoLayerSpec(), engine);
  EXPECT_EQ(model.alphabet, 3);
  EXPECT_EQ(model.width, 5);
  EXPECT_EQ(model.period, 2);
  EXPECT_EQ(model.locality, 2);
  EXPECT_EQ(model.outputs(), 2);
  ASSERT_EQ(model.layers.size(), 2u);
  for (std::size_t l = 0; l < 2; ++l) {
    const Layer& layer = model.layers[l];
    EXPECT_EQ(layer.attention, Attention::kFinite);
    EXPECT_EQ(layer.precision_bits, 6);
    EXPECT_EQ(layer.bias_scaling, l == 0 ? BiasScaling::kLog : BiasScaling::kNone);
    EXPECT_EQ(layer.heads.size(), 3u);
    ASSERT_TRUE(layer.mlp.has_value());
    EXPECT_EQ(layer.mlp->in.rows(), 10);  // hidden width 2d
  }
  EXPECT_NO_THROW(ValidateTransformer(model, "test"));
}

TEST(ModelGenerator, GridWeightsAreMultiplesOfTheGridWithinScale) {
  ModelSpec spec = TwoLayerSpec();
  spec.grid = 0.25;
  spec.scale = 1.5;
  FuzzEngine engine(3);
  std::set<double> seen;
  for (double w : AllWeights(GenerateModel(spec, engine))) {
    EXPECT_EQ(std::fmod(w, 0.25), 0.0) << w;
    EXPECT_LE(std::abs(w), 1.5);
    seen.insert(w);
  }
  EXPECT_EQ(seen.size(), 13u);  // all of −1.5, −1.25, …, 1.5 occur among ~400 draws
}

// The sample standard deviation of n ≈ 17,000 N(0, s²) weights has relative error
// ≈ 1/√(2n) ≈ 0.5%; 3% is six of those.
TEST(ModelGenerator, GaussianWeightsHaveTheRequestedScale) {
  ModelSpec spec;
  spec.width = 64;
  spec.heads = 2;
  spec.scale = 0.3;
  FuzzEngine engine(4);
  const std::vector<double> w = AllWeights(GenerateModel(spec, engine));
  double sum2 = 0;
  for (double x : w) sum2 += x * x;
  EXPECT_NEAR(std::sqrt(sum2 / w.size()), 0.3, 0.03 * 0.3) << w.size();
}

TEST(ModelGenerator, GridMarginGuaranteeOnAnExample) {
  ModelSpec spec;
  spec.alphabet = 4;
  spec.width = 3;
  spec.period = 3;
  spec.locality = 2;
  spec.heads = 2;
  spec.attention = Attention::kFinite;
  spec.precision_bits = 4;
  spec.grid = 0.5;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    FuzzEngine engine(seed);
    const Transformer model = GenerateModel(spec, engine);
    EXPECT_GE(LogitMargin(model), 0.125);
    EXPECT_LE(Log2HardmaxLength(model), 4 / 0.125);
    EXPECT_GE(PositionalMargin(model), 0.5);
  }
}

TEST(ModelGenerator, BadSpecsAreInputErrorsNamingTheKey) {
  const auto error = [](auto edit) {
    ModelSpec spec;
    edit(spec);
    FuzzEngine engine(0);
    return ErrorOf([&] { GenerateModel(spec, engine); });
  };
  EXPECT_EQ(error([](ModelSpec& s) { s.layers = 3; }).rfind("model spec: layers: ", 0), 0u);
  EXPECT_EQ(error([](ModelSpec& s) { s.width = 0; }).rfind("model spec: width: ", 0), 0u);
  EXPECT_EQ(error([](ModelSpec& s) { s.alphabet = 70000; }).rfind("model spec: alphabet: ", 0), 0u);
  EXPECT_EQ(error([](ModelSpec& s) { s.grid = 0.3; }).rfind("model spec: grid: ", 0), 0u);
  EXPECT_EQ(error([](ModelSpec& s) { s.grid = 2; }).rfind("model spec: grid: ", 0), 0u);
  EXPECT_EQ(
      error([](ModelSpec& s) { s.grid = std::ldexp(1.0, -30); }).rfind("model spec: grid: ", 0),
      0u);
  EXPECT_EQ(
      error([](ModelSpec& s) { s.grid = 0.5, s.scale = 0.25; }).rfind("model spec: scale: ", 0),
      0u);
  EXPECT_EQ(error([](ModelSpec& s) { s.scale = NAN; }).rfind("model spec: scale: ", 0), 0u);
  EXPECT_EQ(error([](ModelSpec& s) {
              s.attention = Attention::kFinite;
              s.precision_bits = 0;
            }).rfind("model spec: precision_bits: ", 0),
            0u);
  EXPECT_EQ(error([](ModelSpec&) {}), "");
}

// ---- Pairs ----

TEST(ModelPairs, NamesRoundTrip) {
  for (PairKind kind :
       {PairKind::kIndependent, PairKind::kPerturbed, PairKind::kModeSwap, PairKind::kPrunedHead}) {
    EXPECT_EQ(ParsePairKind(PairKindName(kind)), kind);
  }
  EXPECT_NE(ErrorOf([] { ParsePairKind("swap"); }).find("mode-swap"), std::string::npos);
}

TEST(ModelPairs, FIsTheModelOfTheSameEngineState) {
  for (PairKind kind :
       {PairKind::kIndependent, PairKind::kPerturbed, PairKind::kModeSwap, PairKind::kPrunedHead}) {
    FuzzEngine a(11), b(11);
    const auto [f, g] = GeneratePair(TwoLayerSpec(), {kind, 0.1, Attention::kSoftmax}, a);
    EXPECT_EQ(AllWeights(f), AllWeights(GenerateModel(TwoLayerSpec(), b))) << PairKindName(kind);
  }
}

TEST(ModelPairs, IndependentModelsShareTheShapeOnly) {
  FuzzEngine engine(12);
  const auto [f, g] = GeneratePair(TwoLayerSpec(), {PairKind::kIndependent}, engine);
  EXPECT_EQ(AllWeights(f).size(), AllWeights(g).size());
  EXPECT_NE(AllWeights(f), AllWeights(g));
}

// |δ·N(0, 1)| > 6δ has probability 2·10⁻⁹ per weight, and there are ~600 weights.
TEST(ModelPairs, PerturbedMovesEveryWeightByAboutDelta) {
  FuzzEngine engine(13);
  const double delta = 0.01;
  const auto [f, g] = GeneratePair(TwoLayerSpec(), {PairKind::kPerturbed, delta}, engine);
  const std::vector<double> wf = AllWeights(f), wg = AllWeights(g);
  ASSERT_EQ(wf.size(), wg.size());
  double largest = 0.0;
  for (std::size_t i = 0; i < wf.size(); ++i) {
    EXPECT_LE(std::abs(wg[i] - wf[i]), 6 * delta);
    EXPECT_NE(wg[i], wf[i]);
    largest = std::max(largest, std::abs(wg[i] - wf[i]));
  }
  EXPECT_GE(largest, delta);
  EXPECT_EQ(g.layers[0].attention, f.layers[0].attention);
}

// On a grid the step is rounded to the grid: |g − f| ≤ 6δ + grid/2 (same 6δ tolerance).
TEST(ModelPairs, PerturbedGridModelsStayOnTheGrid) {
  ModelSpec spec = TwoLayerSpec();
  spec.grid = 0.25;
  FuzzEngine engine(14);
  const double delta = 0.25;
  const auto [f, g] = GeneratePair(spec, {PairKind::kPerturbed, delta}, engine);
  const std::vector<double> wf = AllWeights(f), wg = AllWeights(g);
  int moved = 0;
  for (std::size_t i = 0; i < wf.size(); ++i) {
    EXPECT_EQ(std::fmod(wg[i], 0.25), 0.0);
    EXPECT_LE(std::abs(wg[i]), 1.0);
    EXPECT_LE(std::abs(wg[i] - wf[i]), 6 * delta + 0.125);
    moved += wg[i] != wf[i];
  }
  EXPECT_GT(moved, 0);
}

TEST(ModelPairs, ModeSwapChangesOnlyTheModes) {
  for (Attention other : {Attention::kSoftmax, Attention::kHardmax}) {
    FuzzEngine engine(15);
    const auto [f, g] = GeneratePair(TwoLayerSpec(), {PairKind::kModeSwap, 0, other}, engine);
    EXPECT_EQ(AllWeights(f), AllWeights(g));
    for (std::size_t l = 0; l < g.layers.size(); ++l) {
      EXPECT_EQ(g.layers[l].attention, other);
      EXPECT_EQ(g.layers[l].precision_bits, 0);
      EXPECT_EQ(g.layers[l].bias_scaling, f.layers[l].bias_scaling);
    }
  }
  ModelSpec hardmax = TwoLayerSpec();
  hardmax.attention = Attention::kHardmax;
  FuzzEngine engine(16);
  const auto [f, g] = GeneratePair(hardmax, {PairKind::kModeSwap, 0, Attention::kFinite}, engine);
  EXPECT_EQ(f.layers[0].precision_bits, 0);
  EXPECT_EQ(g.layers[1].attention, Attention::kFinite);
  EXPECT_EQ(g.layers[1].precision_bits, 6);
}

TEST(ModelPairs, PrunedHeadRemovesOneFirstLayerHead) {
  std::set<int> pruned;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    FuzzEngine engine(seed);
    const auto [f, g] = GeneratePair(TwoLayerSpec(), {PairKind::kPrunedHead}, engine);
    ASSERT_EQ(g.layers[0].heads.size(), 2u);
    EXPECT_EQ(g.layers[1].heads.size(), 3u);
    int removed = -1;
    for (int h = 0; h < 3 && removed < 0; ++h) {
      Transformer candidate = f;
      candidate.layers[0].heads.erase(candidate.layers[0].heads.begin() + h);
      if (AllWeights(candidate) == AllWeights(g)) removed = h;
    }
    EXPECT_GE(removed, 0);
    pruned.insert(removed);
  }
  EXPECT_EQ(pruned.size(), 3u);  // every head gets pruned by some seed
}

TEST(ModelPairs, ImpossiblePairsAreInputErrors) {
  ModelSpec one_head;
  FuzzEngine engine(0);
  EXPECT_EQ(ErrorOf([&] {
              GeneratePair(one_head, {PairKind::kPrunedHead}, engine);
            }).rfind("model spec: heads: ", 0),
            0u);
  EXPECT_EQ(ErrorOf([&] {
              GeneratePair(one_head, {PairKind::kModeSwap, 0, Attention::kHardmax}, engine);
            }).rfind("pair spec: other_mode: ", 0),
            0u);
  EXPECT_EQ(ErrorOf([&] {
              GeneratePair(one_head, {PairKind::kPerturbed, -1.0}, engine);
            }).rfind("pair spec: delta: ", 0),
            0u);
}

}  // namespace
}  // namespace ltsim
