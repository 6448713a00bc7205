// The fixture of the hardening tests: run the ltsim binary in a fresh directory,
// and check that bad input ends as one line naming the culprit, exit 2, nothing written.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace ltsim::hardening {

namespace fs = std::filesystem;

inline const std::string kBinary = LTSIM_BINARY;
inline const std::string kSource = LTSIM_SOURCE_DIR;
inline const std::string kModelF = kSource + "/corpus/models/pair/f.json";
inline const std::string kModelG = kSource + "/corpus/models/pair/g.json";

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

class HardeningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("ltsim_hard_" + std::to_string(::getpid()) + "_" +
                                        info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Path(const std::string& name) const { return dir_ / name; }
  std::string Temp(const std::string& name, const std::string& text) const {
    WriteText(Path(name), text);
    return Path(name).string();
  }

  Result Run(const std::vector<std::string>& args) const {
    std::string command = "'" + kBinary + "'";
    for (const std::string& arg : args) command.append(" '").append(arg).append("'");
    const fs::path out = Path("stdout.txt"), err = Path("stderr.txt");
    command.append(" >'").append(out.string()).append("' 2>'").append(err.string());
    command.append("' </dev/null");
    const int status = std::system(command.c_str());
    Result result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = ReadText(out);
    result.err = ReadText(err);
    return result;
  }

  // Exit 2, nothing on stdout, one line on stderr containing `names`.
  void ExpectInputError(const std::vector<std::string>& args, const std::string& names) const {
    const Result r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << "'" << names << "' not in: " << r.err;
    EXPECT_EQ(r.err.find("unexpected error"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }

  fs::path dir_;
};

}  // namespace ltsim::hardening
