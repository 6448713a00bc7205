// Command-line tests of `ltsim statistic` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, StatisticJsonForMarkovAndBlocks) {
  for (const char* method : {"markov", "blocks"}) {
    const Json doc = RunJson({"statistic", kDefaultString, "--method", method, "--z-length", "5000",
                              "--lipschitz", "2", "--locality", "1", "--json"});
    EXPECT_EQ(doc["method"], method);
    EXPECT_EQ(doc["x_length"], 1000355);
    EXPECT_EQ(doc["context"]["seed"], 1);
    const double difference = doc["difference"];
    const double ax = doc["average_x"][0];
    const double az = doc["average_z"][0];
    EXPECT_NEAR(difference, std::abs(ax - az), 1e-15) << method;
    // G = 1, so both averages lie in [−1, 1] and the difference is at most 2.
    EXPECT_LE(std::abs(ax), 1.0);
    EXPECT_LE(difference, 2.0);
  }
  const Json model = RunJson({"statistic", kDefaultString, "--method", "markov", "--z-length",
                              "5000", "--model", kModelG, "--json"});
  EXPECT_EQ(model["average_x"].size(), 6u);  // g's width
}

}  // namespace
}  // namespace ltsim::cli_test
