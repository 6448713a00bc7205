// Command-line tests of `ltsim constants` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, ConstantsJsonHasTheRegistryAndUserBounds) {
  const Json doc =
      RunJson({"constants", kModelF, kModelG, "--eps", "0.1", "--z-length", "1000", "--x-length",
               "8000", "--set", "SNR=4", "--bound", "C/SNR*n/T", "--json"});
  ASSERT_TRUE(doc.contains("context")) << doc;
  EXPECT_EQ(doc["context"]["command"], "constants");
  for (const char* key :
       {"L", "Delta", "S", "tau", "eps", "gamma", "p", "C", "gamma_pos", "n", "T", "SNR"})
    EXPECT_TRUE(doc["constants"].contains(key)) << key;
  std::vector<std::string> names;
  for (const Json& bound : doc["bounds"]) names.push_back(bound["name"]);
  const std::vector<std::string> expected = {
      "thm4.1-hardmax", "thm4.1-length",    "thm4.2",           "thm5.2",
      "lemma5.3",       "frequency-length", "two-layer-length", "user"};
  EXPECT_EQ(names, expected);
  const Json& c = doc["constants"];
  const double user = c["C"].get<double>() / 4 * 1000 / 8000;
  EXPECT_NEAR(doc["bounds"][7]["value"].get<double>(), user, kPrinted * user);
  const double length = std::pow(c["L"].get<double>(), 2) * std::pow(c["Delta"].get<double>(), 7) *
                        std::pow(c["S"].get<double>(), 6) * std::pow(c["tau"].get<double>(), 2) /
                        0.01;
  EXPECT_NEAR(doc["bounds"][1]["value"].get<double>(), length, kPrinted * length);
}

TEST_F(CliTest, ConstantsUnknownVariableIsOneLineExit2) {
  ExpectInputError({"constants", kModelF, "--bound", "C/SNR*n/T"}, "unknown variable 'SNR'");
  ExpectInputError({"constants", kModelF, "--set", "SNR"}, "--set");
}

}  // namespace
}  // namespace ltsim::cli_test
