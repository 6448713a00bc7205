// The command-line tests' fixture: run the ltsim binary, capture exit code, stdout and stderr.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace ltsim::cli_test {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::string kBinary = LTSIM_BINARY;
const std::string kSource = LTSIM_SOURCE_DIR;
const std::string kModelF = kSource + "/corpus/models/pair/f.json";
const std::string kModelG = kSource + "/corpus/models/pair/g.json";
const std::string kDefaultString = kSource + "/corpus/strings/default.txt";

// Every simulator, as registered (simulator.h).
const std::vector<std::string> kMethods = {
    "frequency", "frequency-agnostic", "truncate", "uniform", "markov", "blocks"};

// Values printed as JSON doubles (17 significant digits) and recomputed by hand: a few ulps.
constexpr double kPrinted = 1e-12;

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Single-quoted for /bin/sh (paths in these tests never contain a single quote).
inline std::string Quote(const std::string& arg) { return "'" + arg + "'"; }

inline std::size_t CountLines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("ltsim_cli_" + std::to_string(::getpid()) + "_" +
                                        info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Path(const std::string& name) const { return dir_ / name; }

  // Writes `text` to a file in the test's directory and returns its path.
  std::string Temp(const std::string& name, const std::string& text) const {
    WriteFile(Path(name), text);
    return Path(name).string();
  }

  // Runs `ltsim ARGS` with stdout and stderr captured to files.
  Result Run(const std::vector<std::string>& args) const {
    // No periodic progress lines in a loaded machine's slow run (progress_test asks for them).
    std::string command = "LTSIM_PROGRESS_EVERY=1e9 " + Quote(kBinary);
    const fs::path out = Path("stdout.txt");
    const fs::path err = Path("stderr.txt");
    // Appended piece by piece (operator+ on temporaries trips a GCC 12 -Wrestrict false alarm).
    for (const std::string& arg : args) command.append(" ").append(Quote(arg));
    command.append(" >").append(Quote(out.string()));
    command.append(" 2>").append(Quote(err.string()));
    command.append(" </dev/null");
    const int status = std::system(command.c_str());
    Result result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = ReadFile(out);
    result.err = ReadFile(err);
    return result;
  }

  // Runs a bash script with $LTSIM set to the binary (pipes, stdin, process substitution),
  // stdout and stderr captured, in the test's directory.
  Result Shell(const std::string& script) const {
    WriteFile(Path("script.sh"),
              "cd " + Quote(dir_.string()) + "\nLTSIM=" + Quote(kBinary) + "\n" + script + "\n");
    const std::string command = "bash " + Quote(Path("script.sh").string()) + " >" +
                                Quote(Path("stdout.txt").string()) + " 2>" +
                                Quote(Path("stderr.txt").string()) + " </dev/null";
    const int status = std::system(command.c_str());
    Result result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = ReadFile(Path("stdout.txt"));
    result.err = ReadFile(Path("stderr.txt"));
    return result;
  }

  // Runs a command that must succeed and print one JSON document.
  Json RunJson(const std::vector<std::string>& args) const {
    const Result r = Run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    const Json doc = Json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(doc.is_discarded()) << "not JSON: " << r.out;
    return doc;
  }

  // A bad-input run: exit code 2, nothing on stdout, exactly one line on stderr that
  // contains `names` (the file, flag or position at fault).
  void ExpectInputError(const std::vector<std::string>& args, const std::string& names) const {
    const Result r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(CountLines(r.err), 1u) << r.err;
    EXPECT_FALSE(r.err.empty() || r.err.back() != '\n') << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << "'" << names << "' not in: " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }

  fs::path dir_;
};

}  // namespace ltsim::cli_test
