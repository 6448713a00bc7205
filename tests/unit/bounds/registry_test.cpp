// Unit tests of the bound registry and muParser bound expressions (values computed by hand).
#include "ltsim/bounds/registry.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

// Hand-computed values of closed formulas: a few ulps of relative error.
constexpr double kRelative = 1e-12;

ConstantMap Sample() {
  return {{"L", 2},       {"Delta", 2}, {"S", 3},    {"tau", 1},          {"eps", 0.1},
          {"gamma", 0.5}, {"p", 8},     {"C", 10},   {"gamma_pos", 0.25}, {"alpha0", 2},
          {"G", 1},       {"D", 6},     {"n", 1000}, {"T", 8000}};
}

double Value(const std::string& name) { return FindBound(name).value(Sample()); }

TEST(BoundRegistry, KnownValuesByHand) {
  EXPECT_NEAR(Value("thm4.1-hardmax"), 65536.0, 65536.0 * kRelative);  // 2^(8/0.5)
  // 2²·2⁷·3⁶·1²/0.1² = 4·128·729·100.
  EXPECT_NEAR(Value("thm4.1-length"), 37324800.0, 37324800.0 * kRelative);
  EXPECT_NEAR(Value("thm4.2"), 1000.0, 1000.0 * kRelative);  // 0.1^(−2−1)
  EXPECT_NEAR(Value("thm5.2"), 1e8, 1e8 * kRelative);        // (10/0.1)^max(4, 3)
  EXPECT_NEAR(Value("lemma5.3"), 0.6, 0.6 * kRelative);      // (1+2)(1+1)/10
  // Δ·D(D+τ)(L/ε)² = 2·6·7·400.
  EXPECT_NEAR(Value("frequency-length"), 33600.0, 33600.0 * kRelative);
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
