// Command-line tests of how a STRING is given: inline, stdin, /dev/stdin, process substitution,
// iid weights, and `ltsim generate`'s errors.
#include <regex>

#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

// f = share of 0s among the 0-or-1 positions: "0^3 1" → 3/4.
constexpr double kThreeQuarters = 0.75;

TEST_F(CliTest, InlineTextStringIsAString) {
  const Json doc = RunJson({"eval", kModelF, "text:0^3 1", "--json"});
  EXPECT_EQ(doc["length"], 4);
  EXPECT_NEAR(doc["output"][0].get<double>(), kThreeQuarters, kPrinted);
  // Its errors name it and the position, like a file's.
  ExpectInputError({"eval", kModelF, "text:0 1 x"}, "text:0 1 x:1:5");
}

// Bug 2: a pipe on /dev/stdin was read twice (the second pass found nothing: "empty string").
TEST_F(CliTest, StdinDevStdinAndProcessSubstitutionAreRead) {
  for (const std::string input : {"-", "/dev/stdin"}) {
    SCOPED_TRACE(input);
    const Result r =
        Shell("echo '0^3 1' | \"$LTSIM\" eval " + Quote(kModelF) + " " + input + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json doc = Json::parse(r.out);
    EXPECT_EQ(doc["length"], 4);
    EXPECT_NEAR(doc["output"][0].get<double>(), kThreeQuarters, kPrinted);
  }
  const Result r = Shell("\"$LTSIM\" eval " + Quote(kModelF) + " <(echo '0^3 1') --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["length"], 4);
  // A sandwich reads x several times: a pipe must give the same x on every pass.
  const Result s = Shell("cat " + Quote(kDefaultString) + " | \"$LTSIM\" sandwich " +
                         Quote(kModelF) + " " + Quote(kModelG) + " - --z-length 2000 --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const Json from_file =
      RunJson({"sandwich", kModelF, kModelG, kDefaultString, "--z-length", "2000", "--json"});
  const Json from_pipe = Json::parse(s.out);
  EXPECT_EQ(from_pipe["x_length"], 1000355);
  EXPECT_EQ(from_pipe["gap_x"], from_file["gap_x"]);
  EXPECT_EQ(from_pipe["f_z"], from_file["f_z"]);
  // An empty pipe is one line naming stdin.
  const Result empty = Shell("printf '' | \"$LTSIM\" eval " + Quote(kModelF) + " -");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("stdin: empty string"), std::string::npos) << empty.err;
  EXPECT_EQ(CountLines(empty.err), 1u) << empty.err;
}

// Bug 8: probs are weights: probs=1/3 is the same string as probs=0.25/0.75.
TEST_F(CliTest, IidProbsAreWeights) {
  const Json weights =
      RunJson({"eval", kModelF, "iid:length=5000,alphabet=2,seed=4,probs=1/3", "--json"});
  const Json probs =
      RunJson({"eval", kModelF, "iid:length=5000,alphabet=2,seed=4,probs=0.25/0.75", "--json"});
  EXPECT_EQ(weights["output"], probs["output"]);
  // A quarter of 5000 tokens are 0: the share is 1/4 up to sampling (σ = √(p(1−p)/T) ≈ 0.006;
  // 0.05 is eight σ).
  EXPECT_NEAR(weights["output"][0].get<double>(), 0.25, 0.05);
  EXPECT_NE(ReadFile(kSource + "/docs/commands.md").find("probs` are weights"), std::string::npos);
  // A mistyped key gets a suggestion.
  ExpectInputError({"eval", kModelF, "iid:lenght=10,alphabet=2,seed=1"}, "did you mean 'length'?");
}

// Bug 3: the .u8 error gives the position, then the value (not the other way round).
TEST_F(CliTest, GenerateU8ErrorNamesPositionThenValue) {
  const std::string out = Path("big.u8").string();
  const Result r = Run({"generate", "iid:length=1000,alphabet=300,seed=7", "--out", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(CountLines(r.err), 1u) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.err, m, std::regex(R"(: token (\d+) is (\d+), which does not fit in one byte)")))
      << r.err;
  const int position = std::stoi(m[1]), value = std::stoi(m[2]);
  EXPECT_GE(value, 256) << r.err;
  EXPECT_GE(position, 1) << r.err;
  EXPECT_LE(position, 1000) << r.err;
  // The named token is that value: the string up to it, as text, ends with it.
  const std::string text = Path("x.txt").string();
  ASSERT_EQ(Run({"generate", "iid:length=1000,alphabet=300,seed=7", "--out", text}).exit_code, 0);
  std::istringstream tokens(ReadFile(text));
  std::vector<int> all;
  for (std::string t; tokens >> t;) {
    if (t.starts_with("#")) {  // a comment runs to the end of its line
      std::getline(tokens, t);
      continue;
    }
    const auto caret = t.find('^');
    const int token = std::stoi(t.substr(0, caret));
    const int count = caret == std::string::npos ? 1 : std::stoi(t.substr(caret + 1));
    all.insert(all.end(), count, token);
  }
  ASSERT_EQ(all.size(), 1000u);
  EXPECT_EQ(all[position - 1], value);
  for (int k = 0; k < position - 1; ++k) EXPECT_LT(all[k], 256) << k;
}

TEST_F(CliTest, GenerateJsonSaysWhatItWrote) {
  const std::string out = Path("x.u16").string();
  const Json doc =
      RunJson({"generate", "iid:length=100,alphabet=300,seed=7", "--out", out, "--json"});
  EXPECT_EQ(doc["length"], 100);
  EXPECT_EQ(doc["format"], "u16");
  EXPECT_EQ(fs::file_size(out), 200u);
}

}  // namespace
}  // namespace ltsim::cli_test
