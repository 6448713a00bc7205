// Command-line tests of `ltsim construct` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, ConstructKGramAndInfoReportsComplexity) {
  const std::string out = Path("kgram.json").string();
  const Result r = Run({"construct", "kgram", "--alphabet", "3", "--k", "2", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json info = RunJson({"info", out, "--json"});
  EXPECT_EQ(info["layers"], 2);
  EXPECT_EQ(info["positional_margin"], 1.0);
  EXPECT_GT(info["log_complexity"].get<double>(), 0.0);
  ExpectInputError({"construct", "kgram", "--alphabet", "0", "--k", "2", "--out", out},
                   "--alphabet");
}

}  // namespace
}  // namespace ltsim::cli_test
