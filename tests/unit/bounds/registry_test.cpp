// Unit tests of the bound registry and muParser bound expressions (values computed by hand).
#include "ltsim/bounds/registry.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ltsim/bounds/two_layer_length.h"
#include "ltsim/core/error.h"
#include "ltsim/model/model_file.h"
#include "ltsim_test/random_models.h"

namespace ltsim {
namespace {

// Hand-computed values of closed formulas: a few ulps of relative error.
constexpr double kRelative = 1e-12;

ConstantMap Sample() {
  return {{"L", 2},       {"Delta", 2}, {"S", 3},  {"tau", 1},          {"eps", 0.1},
          {"gamma", 0.5}, {"p", 8},     {"C", 10}, {"gamma_pos", 0.25}, {"alpha0", 2},
          {"G", 1},       {"D", 6},     {"H", 2},  {"n", 1000},         {"T", 8000}};
}

double Value(const std::string& name) { return FindBound(name).value(Sample()); }

TEST(BoundRegistry, KnownValuesByHand) {
  EXPECT_NEAR(Value("thm4.1-hardmax"), 65536.0, 65536.0 * kRelative);  // 2^(8/0.5)
  // 2²·2⁷·3⁶·1²/0.1² = 4·128·729·100.
  EXPECT_NEAR(Value("thm4.1-length"), 37324800.0, 37324800.0 * kRelative);
  EXPECT_NEAR(Value("thm4.2"), 1000.0, 1000.0 * kRelative);  // 0.1^(−2−1)
  EXPECT_NEAR(Value("thm5.2"), 1e8, 1e8 * kRelative);        // (10/0.1)^max(4, 3)
  EXPECT_NEAR(Value("lemma5.3"), 0.6, 0.6 * kRelative);      // (1+2)(1+1)/10
  // Δ·(D·(Θ·3^(H/3)·(24DL/ε)^(H−1) + 1) + 1) + τ + 1, Θ = 6(D + τ + 1)L/ε = 6·8·20 = 960,
  // 24DL/ε = 2880, H = 2.
  const double frequency = 2 * (6 * (960 * std::cbrt(9.0) * 2880 + 1) + 1) + 2;
  EXPECT_NEAR(Value("frequency-length"), frequency, frequency * kRelative);
}

// One head: linear in L/ε, 2·(6·(960·3^(1/3) + 1) + 1) + 2; each further head multiplies the
// far term by 3^(1/3)·24DL/ε.
TEST(BoundRegistry, FrequencyLengthGrowsLikeLOverEpsToTheHeads) {
  ConstantMap c = Sample();
  c["H"] = 1;
  const double one = 2 * (6 * (960 * std::cbrt(3.0) + 1) + 1) + 2;
  EXPECT_NEAR(FindBound("frequency-length").value(c), one, one * kRelative);
  c["L"] = 4;  // L/ε doubles: Θ = 1920
  const double doubled = 2 * (6 * (1920 * std::cbrt(3.0) + 1) + 1) + 2;
  EXPECT_NEAR(FindBound("frequency-length").value(c), doubled, doubled * kRelative);
  c.erase("H");
  EXPECT_TRUE(std::isnan(FindBound("frequency-length").value(c)));
}

// τ = 0 (SimpleTask, ModPTask) counts as a one-token window: the same value as τ = 1, never 0;
// τ = 3 gives 9 times the τ = 1 value.
TEST(BoundRegistry, Thm41LengthDoesNotVanishAtLocalityZero) {
  ConstantMap c = Sample();
  c["tau"] = 0;
  EXPECT_NEAR(FindBound("thm4.1-length").value(c), 37324800.0, 37324800.0 * kRelative);
  c["tau"] = 3;
  EXPECT_NEAR(FindBound("thm4.1-length").value(c), 9 * 37324800.0, 9 * 37324800.0 * kRelative);
}

TEST(BoundRegistry, Thm52UsesThreeWhenTheMarginIsLarge) {
  ConstantMap c = Sample();
  c["gamma_pos"] = 1;
  EXPECT_NEAR(FindBound("thm5.2").value(c), 1e6, 1e6 * kRelative);
}

TEST(BoundRegistry, EveryBoundIsNamedSourcedAndUnknownNamesAreInputErrors) {
  for (const Bound& bound : BoundRegistry()) {
    EXPECT_FALSE(bound.formula.empty()) << bound.name;
    EXPECT_TRUE(bound.source == "[paper]" || bound.source == "[ours]") << bound.name;
  }
  EXPECT_THROW(FindBound("thm9.9"), InputError);
}

TEST(BoundRegistry, PairConstantsTakeTheWorseOfBoth) {
  ConstantMap f = Sample(), g = Sample();
  g["L"] = 5, g["gamma"] = 0.125, g["Delta"] = 3, g["tau"] = 4;
  const ConstantMap c = PairConstants(f, g);
  EXPECT_EQ(c.at("L"), 5);
  EXPECT_EQ(c.at("gamma"), 0.125);
  EXPECT_EQ(c.at("Delta"), 6);  // lcm(2, 3)
  EXPECT_EQ(c.at("tau"), 4);
  EXPECT_EQ(c.at("D"), 18);
}

// H counts a head once per distinct logit function: g = f with other values and readout keeps
// f's supports on every x, while a changed M is a new constraint.
TEST(BoundRegistry, PairConstantsCountDistinctHeads) {
  test::ModelShape shape;
  shape.heads = 3;
  shape.seed = 7;
  const Transformer f = test::MakeRandomModel(shape);
  EXPECT_EQ(ModelConstants(f).at("H"), 3);
  Transformer g = f;
  g.layers[0].heads[1].ov *= 2.0;
  g.readout_bias.array() += 1.0;
  EXPECT_EQ(PairConstants(f, g).at("H"), 3);
  EXPECT_EQ(PairConstants(ModelConstants(f), ModelConstants(g)).at("H"),
            6);  // no models: H_f + H_g
  g.layers[0].heads[2].qk(0, 0) += 0.5;
  EXPECT_EQ(PairConstants(f, g).at("H"), 4);
  g.embedding(0, 0) += 0.5;  // every logit of g changes
  EXPECT_EQ(PairConstants(f, g).at("H"), 6);
}

// A second-layer head with no value map adds nothing, even when its logit range overflows e^R:
// its terms are 0, never inf·0 = NaN (a NaN bound certified nothing and failed the §4.8
// property on a random model whose head had O = 0 and logits of 10⁹).
TEST(TwoLayerLengthConstants, AHeadWithoutValuesAddsNothingWhateverItsLogits) {
  Transformer model = ReadModel(std::string(LTSIM_SOURCE_DIR) + "/corpus/models/kgram_S2_k1.json");
  const ConstantMap before = ModelConstants(model);
  ASSERT_FALSE(std::isnan(before.at("tl_omega"))) << "the k-gram model is in the class";
  Head silent = model.layers[1].heads.front();
  silent.qk *= 1e300;  // e^(R_g) = +∞
  silent.ov.setZero();
  model.layers[1].heads.push_back(silent);
  const ConstantMap after = ModelConstants(model);
  for (const char* key : {"tl_s1", "tl_s2", "tl_s3"}) {
    EXPECT_FALSE(std::isnan(after.at(key))) << key;
    EXPECT_EQ(after.at(key), before.at(key)) << key;
  }
  const double bound = TwoLayerSimulationBound(after, 5000, 16, 0.25, 0.5);
  EXPECT_FALSE(std::isnan(bound));
  EXPECT_EQ(bound, TwoLayerSimulationBound(before, 5000, 16, 0.25, 0.5));
}

TEST(BoundExpression, EvaluatesOverNamedConstants) {
  ConstantMap c = Sample();
  c["SNR"] = 4;
  // Seed 001's shape C/SNR · n/T = 10/4 · 1000/8000.
  EXPECT_NEAR(EvaluateBoundExpression("C/SNR*n/T", c), 0.3125, 0.3125 * kRelative);
  EXPECT_NEAR(EvaluateBoundExpression("L^2*Delta^7*S^6*tau^2/eps^2", c),
              FindBound("thm4.1-length").value(c), 37324800.0 * kRelative);
  EXPECT_NEAR(EvaluateBoundExpression("max(1/gamma_pos, 3) + sqrt(n/10)", c), 14.0,
              14.0 * kRelative);
}

TEST(BoundExpression, UnknownVariableAndSyntaxErrorsAreOneLineInputErrors) {
  try {
    EvaluateBoundExpression("C/SNR*n/T", Sample());
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("unknown variable 'SNR'"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_THROW(EvaluateBoundExpression("L*(", Sample()), InputError);
  EXPECT_THROW(EvaluateBoundExpression("", Sample()), InputError);
}

}  // namespace
}  // namespace ltsim
