// Command-line tests of the lower-bound tools: `construct family` and `refute` (docs/families.md,
// docs/refute.md): exit codes, JSON keys and the files written.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
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

// Every family `--list` prints builds at its default parameters: exit 0, a T* or "not derived"
// where the family claims none, never "nan" (text or JSON), and a certify line that runs
// `ltsim average` for average-bump and `ltsim threshold` otherwise.
TEST_F(LowerBoundsCli, EveryFamilyBuildsAtItsDefaultsWithoutNan) {
  const Result list = Run({"construct", "family", "--list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start < list.out.size()) {
    const std::size_t end = std::min(list.out.find('\n', start), list.out.size());
    const std::string line = list.out.substr(start, end - start);
    if (!line.empty() && line[0] != ' ') names.push_back(line.substr(0, line.find(':')));
    start = end + 1;
  }
  ASSERT_EQ(names.size(), 10u) << list.out;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const Result text = Run({"construct", "family", name, "--out-dir", Path(name)});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_EQ(text.out.find("nan"), std::string::npos) << text.out;
    const std::size_t t = text.out.find("T* = ");
    ASSERT_NE(t, std::string::npos) << text.out;
    if (text.out.compare(t, 16, "T* = not derived") == 0) {
      EXPECT_EQ(text.out.find("certify it:"), std::string::npos) << text.out;
      continue;
    }
    const std::uint64_t first = std::stoull(text.out.substr(t + 5));
    ASSERT_GT(first, 0u) << text.out;
    const std::size_t c = text.out.find("certify it: ");
    ASSERT_NE(c, std::string::npos) << text.out;
    const std::string certify = text.out.substr(c + 12, text.out.find('\n', c) - c - 12);
    EXPECT_NE(certify.find(" --max-length " + std::to_string(first)), std::string::npos) << certify;
    EXPECT_EQ(certify.rfind(name == "average-bump" ? "ltsim average " : "ltsim threshold ", 0), 0u)
        << certify;
  }
  // JSON: a value not derived is null (two-layer-margin: T*, both gaps and the certify line;
  // offset-bump: the gaps), never "nan".
  for (const std::string name : {"two-layer-margin", "offset-bump"}) {
    SCOPED_TRACE(name);
    const Result json = Run({"construct", "family", name, "--out-dir", Path(name), "--json"});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_EQ(json.out.find("nan"), std::string::npos) << json.out;
    const Json doc = Json::parse(json.out);
    EXPECT_EQ(doc["gap_at_first_disagreement"], nullptr);
    EXPECT_EQ(doc["first_disagreement"].is_null(), name == "two-layer-margin");
    EXPECT_EQ(doc["certify"].is_null(), name == "two-layer-margin");
  }
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
