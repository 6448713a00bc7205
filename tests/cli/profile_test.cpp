// Command-line tests of `ltsim profile` (docs/theory.md §14).
#include <filesystem>

#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

std::string Corpus(const std::string& file) { return std::string(LTSIM_SOURCE_DIR) + file; }

// The bump member's certified T* is 38 at ε = 0.05 (families.json): G(37) ≤ 0.05 < G(38). The
// profile's brackets must say the same, the supremum's bracket must hold every length's, and
// the files of --out-dir must hold the JSON's numbers.
TEST_F(CliTest, ProfileBracketsAgreeWithTheFamilysCertifiedThreshold) {
  const std::string f = Corpus("/corpus/families/bump_s2.71_period2/f.json");
  const std::string g = Corpus("/corpus/families/bump_s2.71_period2/g.json");
  const std::string out = Path("profile").string();
  const Result r = Run({"profile", f, g, "--train-length", "38", "--max-length", "400", "--points",
                        "4", "--json", "--quiet", "--out-dir", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["context"]["command"], "profile");
  EXPECT_EQ(doc["seed"], 1);
  ASSERT_EQ(doc["lengths"].size(), doc["gap_lower"].size());
  ASSERT_EQ(doc["lengths"].size(), doc["gap_upper"].size());
  ASSERT_GE(doc["lengths"].size(), 38u);
  double below = 0.0;
  for (std::size_t i = 0; i < doc["lengths"].size(); ++i) {
    const auto T = doc["lengths"][i].get<std::uint64_t>();
    const double lo = doc["gap_lower"][i].get<double>(), hi = doc["gap_upper"][i].get<double>();
    EXPECT_LE(lo, hi + 1e-12) << T;
    EXPECT_LE(hi, doc["sup_gap_upper"].get<double>() + 1e-12) << T;
    if (T < 38) below = std::max(below, hi);
    if (T == 38) {
      EXPECT_GT(lo, 0.05);
    }
  }
  EXPECT_LE(below, 0.05 + 1e-9);  // no length below T* disagrees at ε = 0.05
  EXPECT_GT(doc["train_gap_lower"].get<double>(), 0.05);
  EXPECT_LE(doc["sup_gap_lower"].get<double>(), doc["sup_gap_upper"].get<double>());
  EXPECT_LE(doc["ratio_lower"].get<double>(), doc["ratio_upper"].get<double>());
  EXPECT_TRUE(doc["sup_status"].is_string());
  EXPECT_TRUE(std::filesystem::exists(Path("profile") / "profile.json"));
  const std::string csv = ReadFile(Path("profile") / "profile.csv");
  EXPECT_EQ(csv.rfind("length,gap_lower,gap_upper\n", 0), 0u) << csv;
}

TEST_F(CliTest, ProfileRefusesTwoLayerPairsAndBadOptionsInOneLine) {
  const std::string kgram = Corpus("/corpus/models/kgram_S2_k1.json");
  ExpectInputError({"profile", kgram, kgram}, "one-layer pairs only");
  const std::string f = Corpus("/corpus/models/pair/f.json");
  ExpectInputError({"profile", f, f, "--train-length", "50", "--max-length", "10"}, "--max-length");
  ExpectInputError({"profile", f, f, "--points", "0"}, "--points");
}

}  // namespace
}  // namespace ltsim::cli_test
