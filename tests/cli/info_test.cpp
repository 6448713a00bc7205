// Command-line tests of `ltsim info` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, InfoJsonHasEveryKey) {
  for (const std::string& model : {kModelF, kModelG}) {
    const Json doc = RunJson({"info", model, "--json"});
    for (const char* key : {"alphabet", "width", "period", "locality", "layers", "logit_margin",
                            "hardmax_length", "lipschitz", "positional_margin"})
      EXPECT_TRUE(doc.contains(key)) << model << " lacks " << key;
  }
}

// Bug 9: "1 head", not "1 heads"; a missing T_hard says why instead of "n/a (log2 = n/a)".
TEST_F(CliTest, InfoTextHasNoPlaceholdersOrWrongPlurals) {
  const Result f = Run({"info", kModelF});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(f.out.find("1 heads"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("1 head,"), std::string::npos) << f.out;
  EXPECT_EQ(f.out.find("n/a (log2 = n/a)"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("hardmax length   none (not a `finite` model)"), std::string::npos) << f.out;
  const Result g = Run({"info", kModelG});
  EXPECT_NE(g.out.find("hardmax length   256 (log2 = 8)"), std::string::npos) << g.out;
}

TEST_F(CliTest, InfoJsonValuesOfTheBundledPair) {
  // f: S = 3, d = 6, Δ = 1, τ = 0, hardmax. Logits 1 on tokens 0/1, 0 on token 2: γ = 1.
  // L = ‖W‖·‖O‖·R = 1·1·‖(1,0,0,1,0,0)‖ = √2. φ = (0): {0, 1}, γ_pos = 1. T_hard: n/a (null).
  const Json f = RunJson({"info", kModelF, "--json"});
  EXPECT_EQ(f["alphabet"], 3);
  EXPECT_EQ(f["width"], 6);
  EXPECT_EQ(f["period"], 1);
  EXPECT_EQ(f["locality"], 0);
  EXPECT_EQ(f["layers"], 1);
  EXPECT_NEAR(f["logit_margin"].get<double>(), 1.0, kPrinted);
  EXPECT_TRUE(f["hardmax_length"].is_null());
  // SVD-based spectral norms: a few ulps.
  EXPECT_NEAR(f["lipschitz"].get<double>(), std::sqrt(2.0), kPrinted);
  EXPECT_NEAR(f["positional_margin"].get<double>(), 1.0, kPrinted);

  // g: Δ = 2, τ = 1, finite with p = 8; both heads have logit gaps of exactly 1, so
  // T_hard = 2^8. L = 1·(0.98 + 0.05)·‖(1,0,0,1,1,0)‖ = 1.03·√3.
  const Json g = RunJson({"info", kModelG, "--json"});
  EXPECT_EQ(g["period"], 2);
  EXPECT_EQ(g["locality"], 1);
  EXPECT_NEAR(g["logit_margin"].get<double>(), 1.0, kPrinted);
  EXPECT_NEAR(g["hardmax_length"].get<double>(), 256.0, 256.0 * kPrinted);
  EXPECT_NEAR(g["lipschitz"].get<double>(), 1.03 * std::sqrt(3.0), kPrinted);
  EXPECT_NEAR(g["positional_margin"].get<double>(), 1.0, kPrinted);
}

}  // namespace
}  // namespace ltsim::cli_test
