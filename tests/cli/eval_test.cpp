// Command-line tests of `ltsim eval` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, EvalJsonPrintsOutputAndLength) {
  // f = share of 0s among the positions holding 0 or 1 (f.json's note): "0 1 1 2" → 1/3.
  const std::string x = Temp("x.txt", "0 1 1 2\n");
  const Json doc = RunJson({"eval", kModelF, x, "--json"});
  ASSERT_TRUE(doc.contains("output") && doc["output"].is_array());
  ASSERT_EQ(doc["output"].size(), 1u);
  EXPECT_NEAR(doc["output"][0].get<double>(), 1.0 / 3.0, kPrinted);
  EXPECT_EQ(doc["length"].get<std::uint64_t>(), 4u);
}

TEST_F(CliTest, EvalReadsRunLengthAndComments) {
  // 0^3 1 2^5 (T = 9): three 0s among four 0-or-1 positions.
  const std::string x = Temp("x.txt", "# a comment\n0^3 1  # trailing\n2^5\n");
  const Json doc = RunJson({"eval", kModelF, x, "--json"});
  EXPECT_NEAR(doc["output"][0].get<double>(), 0.75, kPrinted);
  EXPECT_EQ(doc["length"].get<std::uint64_t>(), 9u);
}

TEST_F(CliTest, EvalWithoutJsonPrintsOneLine) {
  const std::string x = Temp("x.txt", "0 1\n");
  const Result r = Run({"eval", kModelF, x});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountLines(r.out), 1u) << r.out;
  EXPECT_NE(r.out.find("0.5"), std::string::npos) << r.out;
}

TEST_F(CliTest, EvalDefaultStringHasItsStatedLength) {
  const Json doc = RunJson({"eval", kModelF, kDefaultString, "--json"});
  // default.txt's header: "1000355 tokens".
  EXPECT_EQ(doc["length"].get<std::uint64_t>(), 1000355u);
  const double f = doc["output"][0].get<double>();
  EXPECT_GE(f, 0.0);
  EXPECT_LE(f, 1.0);
}

}  // namespace
}  // namespace ltsim::cli_test
