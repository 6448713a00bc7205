// Command-line tests of the lower-bound tools: `construct family` and `refute` (docs/families.md,
// docs/refute.md): exit codes, JSON keys and the files written.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct Result {
  int exit_code = -1;
  std::string out, err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class LowerBoundsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("ltsim_lower_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  Result Run(const std::vector<std::string>& args) const {
    std::string command = "'" + std::string(LTSIM_BINARY) + "'";
    for (const std::string& arg : args) command.append(" '").append(arg).append("'");
    command.append(" >'").append(Path("stdout.txt")).append("' 2>'");
    command.append(Path("stderr.txt")).append("' </dev/null");
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(Path("stdout.txt")),
            ReadFile(Path("stderr.txt"))};
  }

  // Bad input: exit 2, one line on stderr naming `names`.
  void ExpectInputError(const std::vector<std::string>& args, const std::string& names) const {
    const Result r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }

  fs::path dir_;
};

TEST_F(LowerBoundsCli, FamilyWritesTwoModelsWhoseThresholdIsTheClosedForm) {
  const Result w = Run({"construct", "family", "bump", "--slope", "2.71", "--period", "2",
                        "--out-dir", Path("bump")});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  const Json meta = Json::parse(ReadFile(Path("bump/f.json")))["meta"];
  EXPECT_EQ(meta["family"], "bump");
  EXPECT_EQ(meta["params"]["period"], 2);
  EXPECT_EQ(meta["first_disagreement"], 38);
  const Result t = Run({"threshold", Path("bump/f.json"), Path("bump/g.json"), "--eps", "0.05",
                        "--max-length", "60", "--json"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(Json::parse(t.out)["first_disagreement"], 38);
  // --out-f/--out-g name the two files.
  EXPECT_EQ(Run({"construct", "family", "nested", "--slope", "0.43", "--out-f", Path("f.json"),
                 "--out-g", Path("g.json")})
                .exit_code,
            0);
  EXPECT_TRUE(fs::exists(Path("f.json")) && fs::exists(Path("g.json")));
  EXPECT_EQ(Run({"construct", "family", "--list"}).exit_code, 0);
}

TEST_F(LowerBoundsCli, FamilyBadInputIsOneLineExit2) {
  ExpectInputError({"construct", "family", "nope", "--out-dir", Path("x")}, "nope");
  ExpectInputError({"construct", "family", "bump", "--bits", "3", "--out-dir", Path("x")},
                   "--bits");
  ExpectInputError({"construct", "family", "bump", "--period", "0", "--out-dir", Path("x")},
                   "--period");
  ExpectInputError({"construct", "family", "bump"}, "--out-dir");
}

}  // namespace
