// Command-line tests of safetensors models: `eval` and `import` read them, `eval --batch`
// evaluates a list of strings, bad files are one line on stderr with exit code 2.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::string kBinary = LTSIM_BINARY;
const std::string kModelF = std::string(LTSIM_SOURCE_DIR) + "/corpus/models/pair/f.json";

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ImportCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ltsim_import_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result Run(const std::string& args) const {
    const std::string command = "'" + kBinary + "' " + args + " >'" + (dir_ / "out").string() +
                                "' 2>'" + (dir_ / "err").string() + "' </dev/null";
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(dir_ / "out"),
            ReadFile(dir_ / "err")};
  }

  // f.json of the bundled pair as an F64 safetensors file, tensors in name order.
  std::string WritePairF() const {
    std::ifstream in(kModelF);
    Json model = Json::parse(in);
    Json config = model;
    std::string data;
    Json header;
    auto add = [&](const std::string& name, const Json& array) {
      std::vector<std::uint64_t> shape{array.size()};
      std::vector<double> values;
      if (array[0].is_array()) {
        shape.push_back(array[0].size());
        for (const Json& row : array)
          for (const Json& v : row) values.push_back(v.get<double>());
      } else {
        for (const Json& v : array) values.push_back(v.get<double>());
      }
      const std::size_t begin = data.size();
      for (double v : values) data.append(reinterpret_cast<const char*>(&v), 8);  // x86-64: LE
      header[name] = {{"dtype", "F64"}, {"shape", shape}, {"data_offsets", {begin, data.size()}}};
    };
    add("embedding", model["embedding"]);
    add("positional", model["positional"]);
    for (std::size_t l = 0; l < model["layers"].size(); ++l) {
      Json& layer = config["layers"][l];
      for (std::size_t h = 0; h < layer["heads"].size(); ++h)
        for (const char* key : {"qk", "ov", "bias"})
          add("layers." + std::to_string(l) + ".heads." + std::to_string(h) + "." + key,
              layer["heads"][h][key]);
      layer["heads"] = layer["heads"].size();
      if (layer.contains("mlp")) {
        for (const char* key : {"in", "in_bias", "out"})
          add("layers." + std::to_string(l) + ".mlp." + key, layer["mlp"][key]);
        layer["mlp"] = true;
      }
    }
    add("readout.weight", model["readout"]["weight"]);
    add("readout.bias", model["readout"]["bias"]);
    for (const char* key : {"embedding", "positional", "readout"}) config.erase(key);
    header["__metadata__"] = {{"ltsim", config.dump()}};
    const std::string text = header.dump();
    const std::string path = (dir_ / "f.safetensors").string();
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>(n >> (8 * i)));
    out << text << data;
    return path;
  }

  fs::path dir_;
};

TEST_F(ImportCliTest, EvalOfSafetensorsEqualsEvalOfJson) {
  const std::string st = WritePairF();
  const std::string x = "'iid:length=5000,alphabet=3,seed=4'";
  const Result a = Run("eval '" + kModelF + "' " + x + " --json");
  const Result b = Run("eval '" + st + "' " + x + " --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(Json::parse(a.out)["output"], Json::parse(b.out)["output"]);
}

TEST_F(ImportCliTest, ImportWritesTheSameModelAsJson) {
  const std::string st = WritePairF();
  const std::string out = (dir_ / "f_imported.json").string();
  const Result r = Run("import '" + st + "' --out '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Result a = Run("eval '" + kModelF + "' 'iid:length=777,alphabet=3,seed=1' --json");
  const Result b = Run("eval '" + out + "' 'iid:length=777,alphabet=3,seed=1' --json");
  EXPECT_EQ(Json::parse(a.out)["output"], Json::parse(b.out)["output"]);
}

TEST_F(ImportCliTest, BadSafetensorsIsOneLineExitTwo) {
  const std::string path = (dir_ / "bad.safetensors").string();
  std::ofstream(path, std::ios::binary) << "xy";
  for (const std::string& cmd : {"eval '" + path + "' '0 1'", "import '" + path + "' --out o.json",
                                "info '" + path + "'"}) {
    const Result r = Run(cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(path + ": header"), std::string::npos) << r.err;
  }
}

TEST_F(ImportCliTest, BatchEvaluatesEveryLineLikeSingleCalls) {
  const std::string text = (dir_ / "x.txt").string();
  std::ofstream(text) << "0 1 2 2^5\n";
  const std::string list = (dir_ / "list.txt").string();
  std::ofstream(list) << "# strings\niid:length=100,alphabet=3,seed=1\n\n  " << text << "\n";
  const Result r = Run("eval '" + kModelF + "' --batch '" + list + "' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_TRUE(Json::parse(line).contains("context"));
  for (const std::string& spec : std::vector<std::string>{"iid:length=100,alphabet=3,seed=1", text}) {
    ASSERT_TRUE(std::getline(lines, line));
    const Json got = Json::parse(line);
    EXPECT_EQ(got["string"], spec);
    const Json single = Json::parse(Run("eval '" + kModelF + "' '" + spec + "' --json").out);
    EXPECT_EQ(got["output"], single["output"]) << spec;
    EXPECT_EQ(got["length"], single["length"]);
  }
  EXPECT_FALSE(std::getline(lines, line));
  EXPECT_EQ(Run("eval '" + kModelF + "' '" + text + "' --batch '" + list + "'").exit_code, 2);
  EXPECT_EQ(Run("eval '" + kModelF + "'").exit_code, 2);
  std::ofstream((dir_ / "empty.txt").string()) << "# nothing\n";
  const Result empty = Run("eval '" + kModelF + "' --batch '" + (dir_ / "empty.txt").string() + "'");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("empty.txt: batch file lists no string"), std::string::npos) << empty.err;
}

}  // namespace
