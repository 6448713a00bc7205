// Command-line tests of `ltsim sandwich` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, SandwichJsonForEveryMethod) {
  const std::uint64_t n = 500;
  for (const std::string& method : kMethods) {
    SCOPED_TRACE(method);
    const Json doc = RunJson({"sandwich", kModelF, kModelG, kDefaultString, "--method", method,
                              "--z-length", std::to_string(n), "--json"});
    for (const char* key : {"f_x", "g_x", "f_z", "g_z", "sim_f", "sim_g", "gap_z", "gap_x",
                            "x_length", "z_length", "method", "constants", "holds"})
      ASSERT_TRUE(doc.contains(key)) << key;
    EXPECT_EQ(doc["method"], method);
    EXPECT_EQ(doc["holds"], true);
    EXPECT_EQ(doc["x_length"].get<std::uint64_t>(), 1000355u);
    EXPECT_GE(doc["z_length"].get<std::uint64_t>(), 1u);
    // markov keeps blocks of x by a random chain: |z| has mean ≈ n, so it may exceed n.
    if (method != "markov") {
      EXPECT_LE(doc["z_length"].get<std::uint64_t>(), n);
    }
    EXPECT_TRUE(doc["constants"].is_object());
    // The reported numbers are consistent with each other (k = 1 output): sims and gaps are
    // the distances between the printed outputs, up to printing (17 digits: a few ulps).
    const double f_x = doc["f_x"][0].get<double>(), g_x = doc["g_x"][0].get<double>();
    const double f_z = doc["f_z"][0].get<double>(), g_z = doc["g_z"][0].get<double>();
    EXPECT_NEAR(doc["sim_f"].get<double>(), std::abs(f_x - f_z), kPrinted);
    EXPECT_NEAR(doc["sim_g"].get<double>(), std::abs(g_x - g_z), kPrinted);
    EXPECT_NEAR(doc["gap_z"].get<double>(), std::abs(f_z - g_z), kPrinted);
    EXPECT_NEAR(doc["gap_x"].get<double>(), std::abs(f_x - g_x), kPrinted);
  }
}

TEST_F(CliTest, SandwichOnAShortString) {
  // T = 4 < n: every method must still return z with |z| ≤ n and a sandwich that holds.
  const std::string x = Temp("x.txt", "0 1 1 2\n");
  for (const std::string& method : kMethods) {
    SCOPED_TRACE(method);
    const Json doc = RunJson(
        {"sandwich", kModelF, kModelG, x, "--method", method, "--z-length", "100", "--json"});
    EXPECT_EQ(doc["holds"], true);
    if (method != "markov") {
      EXPECT_LE(doc["z_length"].get<std::uint64_t>(), 100u);
    }
  }
}

// Bug 9: vector outputs keep the table's columns (one row per coordinate), and the table ends
// with its conclusion in words.
TEST_F(CliTest, SandwichTableKeepsColumnsForVectorOutputs) {
  const std::string kgram = kSource + "/corpus/models/kgram_S3_k2.json";
  const std::string x = Temp("x.txt", "0 1 2 0 1 2 2 1 0 0 1 2 1 1 0 2 0 1 2 0 1\n");
  const Result r = Run({"sandwich", kgram, kgram, x, "--method", "markov", "--z-length", "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::size_t rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("  output on")) continue;
    ++rows;
    EXPECT_EQ(line.find(", "), std::string::npos) << line;      // no "[a, b, c]" in a cell
    EXPECT_EQ(line.size(), 2u + 26 + 1 + 16 + 1 + 16) << line;  // the header row's columns
  }
  EXPECT_EQ(rows, 6u);  // 3 outputs, on x and on z
  EXPECT_NE(r.out.find("conclusion: "), std::string::npos) << r.out;
}

TEST_F(CliTest, SandwichUniformSameSeedSameJson) {
  auto sandwich = [&](const std::string& seed) {
    const Result r = Run({"sandwich", kModelF, kModelG, kDefaultString, "--method", "uniform",
                          "--z-length", "300", "--seed", seed, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::string a = sandwich("11");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, sandwich("11"));
  const Json other = Json::parse(sandwich("12"));
  const Json first = Json::parse(a);
  EXPECT_EQ(first["context"]["seed"], 11);
  EXPECT_EQ(other["context"]["seed"], 12);
  // A different z shows in f(z) or g(z) (two random 300-subsequences giving the same value
  // of both models is possible in principle, but not for these seeds: checked once, fixed).
  EXPECT_TRUE(first["f_z"] != other["f_z"] || first["g_z"] != other["g_z"]);
}

TEST_F(CliTest, SandwichWithMarkovOnATwoLayerModel) {
  const std::string kgram = kSource + "/corpus/models/kgram_S3_k2.json";
  const std::string x = Temp("x.txt", "0 1 2 0 1 2 2 1 0 0 1 2 1 1 0 2 0 1 2 0 1\n");
  const Json doc =
      RunJson({"sandwich", kgram, kgram, x, "--method", "markov", "--z-length", "12", "--json"});
  EXPECT_EQ(doc["f_x"].size(), 3u);
  EXPECT_EQ(doc["gap_x"], 0.0);
  EXPECT_TRUE(doc["holds"]);
}

}  // namespace
}  // namespace ltsim::cli_test
