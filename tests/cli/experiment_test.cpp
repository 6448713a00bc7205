// Command-line tests of `ltsim experiment paper` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, TinyExperimentPaperPrintsJsonAndWritesCsv) {
  const std::string out = Path("experiment").string();
  const Result r =
      Run({"experiment", "paper", "--omegas", "1,8", "--primes", "2,7", "--alphabets", "2", "--ks",
           "1", "--x-length", "2000", "--seed", "4", "--json", "--out-dir", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["context"]["seed"], 4);
  for (const char* key : {"context", "options", "definition", "rows", "trends"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["rows"].size(), 6u);
  EXPECT_EQ(doc["trends"].size(), 4u);
  for (const char* key : {"task", "parameter", "value", "needed_length", "sim_at_fixed"})
    EXPECT_TRUE(doc["rows"][0].contains(key)) << key;
  for (const char* key : {"slope", "rises", "needed_lengths"})
    EXPECT_TRUE(doc["trends"][0].contains(key)) << key;
  EXPECT_EQ(Json::parse(ReadFile(fs::path(out) / "experiment.json"))["rows"], doc["rows"]);
  EXPECT_EQ(CountLines(ReadFile(fs::path(out) / "experiment.csv")), 7u);  // header + 6 rows
  ExpectInputError({"experiment", "paper", "--primes", "1"}, "--primes");
  ExpectInputError({"experiment", "paper", "--omegas", "1,2x"}, "--omegas: '2x'");
  ExpectInputError({"experiment", "paper", "--ks", "1.5"}, "--ks");
}

}  // namespace
}  // namespace ltsim::cli_test
