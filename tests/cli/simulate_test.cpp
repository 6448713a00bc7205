// Command-line tests of `ltsim simulate` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, SimulateWritesAReadableZ) {
  // The argument order of the brief: STRING after the last --model, then --out.
  const std::string z = Path("z.txt").string();
  const Result r = Run({"simulate", "--method", "frequency", "--z-length", "500", "--model",
                        kModelF, "--model", kModelG, kDefaultString, "--out", z});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(z));
  for (const std::string& model : {kModelF, kModelG}) {
    const Json doc = RunJson({"eval", model, z, "--json"});
    EXPECT_GE(doc["length"].get<std::uint64_t>(), 1u);
    EXPECT_LE(doc["length"].get<std::uint64_t>(), 500u);
  }
}

TEST_F(CliTest, SimulateWithOutBeforeString) {
  const std::string z = Path("z.txt").string();
  const Json doc = RunJson({"simulate", "--method", "frequency", "--z-length", "500", "--model",
                            kModelF, "--model", kModelG, "--out", z, kDefaultString, "--json"});
  EXPECT_EQ(doc["method"], "frequency");
  EXPECT_EQ(doc["x_length"].get<std::uint64_t>(), 1000355u);
  const std::uint64_t z_length = doc["z_length"].get<std::uint64_t>();
  EXPECT_LE(z_length, 500u);
  // Re-evaluate z: the file holds exactly the z the summary describes.
  const Json f = RunJson({"eval", kModelF, z, "--json"});
  EXPECT_EQ(f["length"].get<std::uint64_t>(), z_length);
  const Json g = RunJson({"eval", kModelG, z, "--json"});
  EXPECT_EQ(g["length"].get<std::uint64_t>(), z_length);
}

TEST_F(CliTest, SimulateUniformIsAFunctionOfTheSeed) {
  auto simulate = [&](const std::string& seed, const std::string& name) {
    const std::string z = Path(name).string();
    const Result r = Run({"simulate", "--method", "uniform", "--z-length", "300", "--seed", seed,
                          "--model", kModelF, "--out", z, kDefaultString});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return ReadFile(z);
  };
  const std::string a = simulate("5", "a.txt");
  const std::string b = simulate("5", "b.txt");
  const std::string c = simulate("6", "c.txt");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  // Two 300-token subsequences of a million tokens drawn with different seeds coincide with
  // negligible probability.
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace ltsim::cli_test
