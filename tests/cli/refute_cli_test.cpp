// Command-line tests of `ltsim refute` (docs/refute.md): exit codes 0 / 1 / 2, the --json keys,
// the --out files (replayed by `threshold` and by `refute --replay`), and identical bytes for
// any --threads.
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

// A small class and budget: S = 2, Δ = 1, τ = 0, d = 6, H = 2, m = 1, L₀ = 4, ε = 0.05,
// 40 evaluations of T* up to N = 300 (well under a second).
std::vector<std::string> SmallClass(const std::string& bound) {
  return {"refute", "--bound",    bound, "--eps",        "0.05", "--max-lipschitz",
          "4",      "--alphabet", "2",   "--period",     "1",    "--locality",
          "0",      "--width",    "6",   "--heads",      "2",    "--mlp-width",
          "1",      "--budget",   "40",  "--iterations", "9",    "--max-length",
          "300",    "--seed",     "3"};
}

// `args` with the value after `flag` replaced (the flag must be present).
std::vector<std::string> With(std::vector<std::string> args, const std::string& flag,
                              const std::string& value) {
  const auto it = std::find(args.begin(), args.end(), flag);
  if (it != args.end() && it + 1 != args.end()) *(it + 1) = value;
  return args;
}

class RefuteCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("ltsim_refute_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  Result Run(std::vector<std::string> args, const std::vector<std::string>& more = {}) const {
    args.insert(args.end(), more.begin(), more.end());
    std::string command = "'" + std::string(LTSIM_BINARY) + "'";
    for (const std::string& arg : args) command.append(" '").append(arg).append("'");
    command.append(" >'").append(Path("stdout.txt")).append("' 2>'");
    command.append(Path("stderr.txt")).append("' </dev/null");
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(Path("stdout.txt")),
            ReadFile(Path("stderr.txt"))};
  }

  // Bad input: exit 2, one line on stderr naming `names`, nothing on stdout.
  void ExpectInputError(const std::vector<std::string>& args, const std::string& names) const {
    const Result r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }

  fs::path dir_;
};

TEST_F(RefuteCli, RefutedIsExitOneWithTheKeysAndFiles) {
  // N = 1 is refuted by any separated pair that agrees at length 1 (T* ≥ 2).
  const Result r = Run(SmallClass("1"), {"--json", "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const Json j = Json::parse(r.out);
  for (const char* key : {"refuted", "first_disagreement", "bound_value", "ratio", "evaluations",
                          "seed", "witness_text", "largest_gap_below", "sup_gap", "separated",
                          "first_disagreement_eps_over_L", "family", "recheck"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_TRUE(j["refuted"].get<bool>());
  EXPECT_TRUE(j["separated"].get<bool>());
  EXPECT_EQ(j["seed"], 3);
  EXPECT_EQ(j["bound_value"].get<double>(), 1.0);
  // Seed 3's best pair agrees up to N = 300 (certified; measured for 1 and 2 threads): censored,
  // its lower bound N + 1 = 301 refutes the bound 1.
  EXPECT_TRUE(j["first_disagreement"].is_null()) << j.dump();
  EXPECT_EQ(j["checked_up_to"].get<std::uint64_t>(), 300u);
  EXPECT_EQ(j["first_disagreement_lower_bound"].get<std::uint64_t>(), 301u);
  EXPECT_DOUBLE_EQ(j["ratio"].get<double>(), 301.0);
  EXPECT_LE(j["evaluations"].get<std::uint64_t>(), 40u);
  EXPECT_EQ(j["recheck"]["status"], "agrees");
  // The files: two ordinary models, the run-length witness, the printed JSON.
  for (const char* name : {"f.json", "g.json", "witness.txt", "refute.json"})
    EXPECT_TRUE(fs::exists(dir_ / "out" / name)) << name;
  EXPECT_EQ(Json::parse(ReadFile(dir_ / "out" / "refute.json")), j);
  EXPECT_EQ(ReadFile(dir_ / "out" / "witness.txt"), j["witness_text"].get<std::string>() + "\n");
  // `threshold` on the two model files also finds no disagreement up to 300.
  const Result th = Run({"threshold", Path("out/f.json"), Path("out/g.json"), "--eps", "0.05",
                         "--max-length", "300", "--json"});
  ASSERT_EQ(th.exit_code, 0) << th.err;
  const Json tj = Json::parse(th.out);
  EXPECT_EQ(tj["first_disagreement"], j["first_disagreement"]);
  // The pair keeps the class's constraint L ≤ L₀ = 4.
  EXPECT_LE(j["lipschitz"].get<double>(), 4.0 * (1 + 1e-9));
  // And the result replays.
  const Result replay = Run({"refute", "--replay", Path("out/refute.json")});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("reproduced"), std::string::npos);
}

TEST_F(RefuteCli, NotRefutedIsExitZero) {
  const Result r = Run(SmallClass("1e9*L/eps"), {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_FALSE(j["refuted"].get<bool>());
  EXPECT_LT(j["ratio"].get<double>(), 1.0);
  EXPECT_FALSE(r.err.empty());  // progress lines on stderr
  // The table names the verdict too.
  const Result table = Run(SmallClass("1e9*L/eps"));
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("not refuted"), std::string::npos) << table.out;
  // The table formats the result struct: the same numbers as the JSON document.
  const std::string numbers = "  L = " + j["lipschitz"].dump() +
                              ", T*·ε/L = " + j["first_disagreement_eps_over_L"].dump() + "\n";
  EXPECT_NE(table.out.find(numbers), std::string::npos) << numbers << table.out;
  EXPECT_NE(table.out.find("witness at T*: " + j["witness_text"].get<std::string>() + "\n"),
            std::string::npos)
      << table.out;
}

TEST_F(RefuteCli, SameBytesForAnyThreadCount) {
  const Result one = Run(SmallClass("L/eps"), {"--json", "--threads", "1"});
  const Result two = Run(SmallClass("L/eps"), {"--json", "--threads", "2"});
  EXPECT_EQ(one.exit_code, two.exit_code);
  EXPECT_EQ(one.out, two.out);
}

TEST_F(RefuteCli, BadInputIsExitTwo) {
  ExpectInputError(SmallClass("L/nope"), "nope");
  ExpectInputError(SmallClass("L/"), "--bound");
  std::vector<std::string> no_eps = SmallClass("L/eps");
  no_eps.erase(no_eps.begin() + 3, no_eps.begin() + 5);
  ExpectInputError(no_eps, "--eps");
  std::vector<std::string> modes = SmallClass("L/eps");
  modes.insert(modes.end(), {"--modes", "hardmax,exact"});
  ExpectInputError(modes, "--modes");
  std::vector<std::string> alphabet = SmallClass("L/eps");
  alphabet[8] = "1";
  ExpectInputError(alphabet, "--alphabet");
  ExpectInputError({"refute", "--replay", Path("missing.json")}, "missing.json");
}

// --exponent eps over the nested family (S = 2 heads, L₀ = 20, its two family starts only: no
// climbing): each point's T* is certified past N = 300 by the exact threshold, the fitted
// exponent of 1/ε has the family's 2 ((S·a/((κ−1)ε))^S, docs/families.md) in its 95% interval
// (measured 2.025 [1.929, 2.120]; the exact T* ≈ (2a/θ' − 1/2)² have local exponent
// 2·(1 + θ'/(4a)), so over a denser grid the interval narrows to just above 2), the bound
// (L/eps)^2 has exponent 2, the verdict is consistent (exit 0), and every point replays.
TEST_F(RefuteCli, ExponentOfTheNestedFamilyIsRecoveredAndEveryPointReplays) {
  const Result r = Run({"refute",
                        "--exponent",
                        "eps",
                        "--grid",
                        "0.1,0.05,0.025",
                        "--bound",
                        "(L/eps)^2",
                        "--max-lipschitz",
                        "20",
                        "--alphabet",
                        "2",
                        "--period",
                        "1",
                        "--locality",
                        "0",
                        "--width",
                        "5",
                        "--heads",
                        "2",
                        "--mlp-width",
                        "1",
                        "--budget",
                        "2",
                        "--iterations",
                        "0",
                        "--starts",
                        "families",
                        "--max-length",
                        "300",
                        "--json",
                        "--out-dir",
                        Path("exp")});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = Json::parse(r.out);
  for (const char* key : {"points", "exponent", "exponent_ci", "bound_exponent", "verdict"})
    EXPECT_TRUE(j.contains(key)) << key;
  ASSERT_EQ(j["points"].size(), 3u);
  std::uint64_t previous = 0;
  for (const Json& p : j["points"]) {
    for (const char* key : {"value", "first_disagreement", "lipschitz", "witness_file"})
      EXPECT_TRUE(p.contains(key)) << key;
    ASSERT_TRUE(p["first_disagreement"].is_number_unsigned()) << p.dump();
    const auto t = p["first_disagreement"].get<std::uint64_t>();
    EXPECT_GT(t, previous);  // grows as ε falls
    previous = t;
    EXPECT_EQ(p["start"], "family nested");
    const Result replay = Run({"replay", p["witness_file"].get<std::string>()});
    EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  }
  EXPECT_GT(previous, 300u);  // the last points are certified past the search's N
  const double lo = j["exponent_ci"][0].get<double>(), hi = j["exponent_ci"][1].get<double>();
  EXPECT_LE(lo, 2.0) << j["exponent"];
  EXPECT_GE(hi, 2.0) << j["exponent"];
  EXPECT_LT(hi - lo, 1.0);
  EXPECT_NEAR(j["bound_exponent"].get<double>(), 2.0, 1e-9);
  EXPECT_EQ(j["verdict"], "consistent");
  EXPECT_TRUE(fs::exists(dir_ / "exp" / "exponent.json"));
  // A bound that grows more slowly (L/eps: exponent 1) is contradicted: exit 1.
  const Result linear = Run({"refute",
                             "--exponent",
                             "eps",
                             "--grid",
                             "0.1,0.05,0.025",
                             "--bound",
                             "L/eps",
                             "--max-lipschitz",
                             "20",
                             "--alphabet",
                             "2",
                             "--period",
                             "1",
                             "--locality",
                             "0",
                             "--width",
                             "5",
                             "--heads",
                             "2",
                             "--mlp-width",
                             "1",
                             "--budget",
                             "2",
                             "--iterations",
                             "0",
                             "--starts",
                             "families",
                             "--max-length",
                             "300",
                             "--json",
                             "--out-dir",
                             Path("exp1")});
  EXPECT_EQ(linear.exit_code, 1) << linear.err;
  const Json lj = Json::parse(linear.out);
  EXPECT_EQ(lj["verdict"], "contradicts");
  // Each point's separated pair also exceeds L/eps at its own constants: refuted point by point,
  // and the reason says so.
  for (const Json& p : lj["points"]) EXPECT_TRUE(p["refuted"].get<bool>()) << p.dump();
  EXPECT_NE(lj["reason"].get<std::string>().find("refuted at its own constants"), std::string::npos)
      << lj["reason"];
}

// A censored best pair is certified past the search's N before the verdict: the nested family
// start (L₀ = 8: T* = 324) agrees up to N = 50, the exact threshold then finds its T* beyond it,
// and the result (certified past N) replays. A time budget that stops the search makes the verdict
// limited (exit 3, limited_by), never a silent "not refuted".
TEST_F(RefuteCli, CensoredPairsAreCertifiedPastTheCapAndLimitsAreSaid) {
  std::vector<std::string> args =
      With(With(With(With(SmallClass("1e7"), "--max-length", "50"), "--budget", "2"),
                "--iterations", "0"),
           "--max-lipschitz", "8");
  args.insert(args.end(), {"--json", "--starts", "families", "--out-dir", Path("cap")});
  const Result r = Run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["certified_past_cap"], 1);
  ASSERT_TRUE(j["first_disagreement"].is_number_unsigned()) << j.dump();
  EXPECT_GT(j["first_disagreement"].get<std::uint64_t>(), 50u);
  EXPECT_GT(j["certified_max_length"].get<std::uint64_t>(), 50u);
  EXPECT_TRUE(j["limited_by"].is_null());
  const Result replay = Run({"replay", Path("cap/refute.json")});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  // --time-budget 0 (no limit): certification past N runs unbounded, not as one evaluation.
  std::vector<std::string> untimed(args.begin(), args.end() - 2);  // without --out-dir
  const Result unlimited = Run(untimed, {"--time-budget", "0"});
  ASSERT_EQ(unlimited.exit_code, 0) << unlimited.err << unlimited.out;
  const Json u = Json::parse(unlimited.out);
  EXPECT_GE(u["certified_past_cap"].get<int>(), 1) << u.dump();
  EXPECT_GT(u["certified_max_length"].get<std::uint64_t>(), 50u);
  // 0.01 s of certification (--time-budget 0.03) stops short of this pair's T* (≤ 800) on this
  // machine; a verdict it leaves limited must say time_budget and stopped_by_time.
  const Result short_run = Run(untimed, {"--time-budget", "0.03"});
  const Json sj = Json::parse(short_run.out);
  if (short_run.exit_code == 3) {
    EXPECT_TRUE(sj["stopped_by_time"].get<bool>()) << sj.dump();
    EXPECT_NE(std::find(sj["limited_by"].begin(), sj["limited_by"].end(), "time_budget"),
              sj["limited_by"].end())
        << sj.dump();
  } else {
    EXPECT_EQ(short_run.exit_code, 0) << short_run.err;
  }
  // The time budget (1 ms) stops the search after climb 0's start.
  std::vector<std::string> timed = SmallClass("1e7");
  timed.insert(timed.end(), {"--json", "--threads", "1", "--time-budget", "0.001"});
  const Result t = Run(timed);
  ASSERT_EQ(t.exit_code, 3) << t.err << t.out;
  const Json tj = Json::parse(t.out);
  EXPECT_NE(std::find(tj["limited_by"].begin(), tj["limited_by"].end(), "time_budget"),
            tj["limited_by"].end());
  EXPECT_LT(tj["evaluations"].get<std::uint64_t>(), 40u);
  const Result table = Run(SmallClass("1e7"), {"--threads", "1", "--time-budget", "0.001"});
  EXPECT_EQ(table.exit_code, 3);
  EXPECT_NE(table.out.find("INCONCLUSIVE (limited by time_budget"), std::string::npos) << table.out;
}

}  // namespace

// --layers 2 (docs/refute.md §8): a small two-layer class (S = 2, τ = 1, d = 5, one head a
// layer, one MLP unit a layer, L₀ = 8, B = 8, ε = 0.05) and a budget of a few seconds.
std::vector<std::string> TwoLayerClass(const std::string& bound) {
  return {"refute", "--layers",        "2",  "--bound",      bound, "--eps",
          "0.05",   "--max-lipschitz", "8",  "--max-logit",  "8",   "--alphabet",
          "2",      "--period",        "1",  "--locality",   "1",   "--width",
          "5",      "--heads",         "1",  "--mlp-width",  "1",   "--max-length",
          "40",     "--budget",        "16", "--iterations", "7",   "--time-budget",
          "0",      "--seed",          "1"};
}

TEST_F(RefuteCli, TwoLayerPairBeyondASmallBoundIsCertifiedAndReplays) {
  const Result r = Run(TwoLayerClass("4"), {"--json", "--out-dir", Path("out")});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("seed 1"), std::string::npos) << r.err;  // the master seed is printed
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["layers"], 2);
  EXPECT_TRUE(j["refuted"].get<bool>());
  EXPECT_TRUE(j["separated"].get<bool>());
  EXPECT_EQ(j["certified_by"], "paths");
  EXPECT_GT(j["first_disagreement_lower_bound"].get<std::uint64_t>(), 4u);
  EXPECT_LE(j["evaluations"].get<std::uint64_t>(), 16u);
  EXPECT_EQ(j["recheck"]["status"], "agrees");
  // The class's limits hold for the reported pair.
  for (const auto& scale : j["output_scale"]) EXPECT_LE(scale.get<double>(), 8.0 * (1 + 1e-9));
  for (int layer = 0; layer < 2; ++layer) {  // B bounds softmax and finite layers' logits
    if (j["attention"][layer] != "hardmax") {
      EXPECT_LE(j["logit_scale"][layer].get<double>(), 8.0 * (1 + 1e-9)) << layer;
    }
  }
  // `threshold` on the two files (the path search) certifies the same T* and witness.
  const Result th = Run({"threshold", Path("out/f.json"), Path("out/g.json"), "--eps", "0.05",
                         "--max-length", "40", "--json"});
  ASSERT_EQ(th.exit_code, 0) << th.err;
  const Json tj = Json::parse(th.out);
  EXPECT_EQ(tj["method"], "paths");
  EXPECT_EQ(tj["first_disagreement"], j["first_disagreement"]);
  if (j["first_disagreement"].is_null())
    EXPECT_EQ(tj["checked_up_to"], j["checked_up_to"]);
  else
    EXPECT_EQ(tj["witness_text"], j["witness_text"]);
  // One command replays it; a tampered record does not reproduce.
  const Result replay = Run({"replay", Path("out/refute.json")});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  Json tampered = j;
  tampered["checked_up_to"] = j["checked_up_to"].get<std::uint64_t>() + 1;
  std::ofstream(Path("out/refute.json")) << tampered.dump(2);
  const Result bad = Run({"replay", Path("out/refute.json")});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("checked_up_to"), std::string::npos) << bad.out;
  // Nor does a record whose bound value or class limits (L₀) the pair does not meet.
  tampered = j;
  tampered["bound_value"] = j["bound_value"].get<double>() * 2;
  std::ofstream(Path("out/refute.json")) << tampered.dump(2);
  const Result value = Run({"replay", Path("out/refute.json")});
  EXPECT_EQ(value.exit_code, 1) << value.out << value.err;
  EXPECT_NE(value.out.find("bound_value"), std::string::npos) << value.out;
  tampered = j;
  tampered["class"]["max_lipschitz"] = 1e-3;
  std::ofstream(Path("out/refute.json")) << tampered.dump(2);
  const Result cls = Run({"replay", Path("out/refute.json")});
  EXPECT_EQ(cls.exit_code, 1) << cls.out << cls.err;
  EXPECT_NE(cls.out.find("class (L0, B)"), std::string::npos) << cls.out;
}

// A pair censored by the threshold's evaluation cap (100 evaluations stop the best pair's path
// search at length 19 < N = 40) is blamed on the cap, and the verdict is limited (exit 3).
TEST_F(RefuteCli, TwoLayerCensoringNamesTheEvaluationCap) {
  std::vector<std::string> a =
      With(With(TwoLayerClass("1000"), "--budget", "8"), "--iterations", "3");
  a.insert(a.end(), {"--threshold-evaluations", "100", "--json"});
  const Result r = Run(a, {});
  ASSERT_EQ(r.exit_code, 3) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["censored_by"], "threshold_evaluations");
  EXPECT_LT(j["checked_up_to"].get<int>(), 40);
  EXPECT_EQ(j["limited_by"], Json::array({"max_length", "threshold_evaluations"}));
  EXPECT_NE(j["limited_by_reason"].get<std::string>().find("--threshold-evaluations"),
            std::string::npos);
}

// Past N (docs/refute.md §8.3): with N = 40 and the bound 60, pairs agreeing up to 40 are
// censored below the bound; refute certifies them further (to 60, within 4N at --time-budget 0),
// so the verdict is no longer limited by N, and the replay re-runs the longer path search.
TEST_F(RefuteCli, TwoLayerCensoredPairsAreCertifiedPastNAndReplay) {
  const Result r = Run(TwoLayerClass("60"), {"--json", "--out-dir", Path("out")});
  ASSERT_NE(r.exit_code, 2) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_GE(j["certified_past_cap"].get<int>(), 1) << r.out;
  EXPECT_TRUE(j["limited_by"].is_null()) << j["limited_by_reason"];
  EXPECT_NE(r.exit_code, 3);
  if (j["refuted"].get<bool>()) {  // certified to the bound: T* > 60
    EXPECT_EQ(j["certified_max_length"], 60);
    EXPECT_EQ(j["checked_up_to"], 60);
  }
  EXPECT_GT(j["checked_up_to"].get<std::uint64_t>(), 40u);
  const Result replay = Run({"replay", Path("out/refute.json")});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  // The replay re-runs the recorded length: a shorter one does not reproduce checked_up_to.
  Json tampered = j;
  tampered["certified_max_length"] = 40;
  std::ofstream(Path("out/refute.json")) << tampered.dump(2);
  const Result bad = Run({"replay", Path("out/refute.json")});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
}

// The bound 60 makes the run certify a censored pair past N too (the test above).
TEST_F(RefuteCli, TwoLayerSameBytesForAnyThreadCount) {
  const Result one = Run(TwoLayerClass("60"), {"--json", "--threads", "1"});
  const Result two = Run(TwoLayerClass("60"), {"--json", "--threads", "2"});
  EXPECT_EQ(one.exit_code, two.exit_code) << one.err << two.err;
  EXPECT_EQ(one.out, two.out);
  EXPECT_FALSE(one.out.empty());
}

TEST_F(RefuteCli, TwoLayerBadFlagCombinationsAreExitTwo) {
  ExpectInputError(With(TwoLayerClass("10"), "--layers", "3"), "--layers");
  ExpectInputError(With(TwoLayerClass("10"), "--max-length", "6000"), "--max-length");
  ExpectInputError(With(TwoLayerClass("10"), "--width", "2"), "--width");
  std::vector<std::string> exponent = TwoLayerClass("10");
  exponent.insert(exponent.end(), {"--exponent", "eps", "--grid", "0.1,0.05"});
  ExpectInputError(exponent, "--exponent");
  std::vector<std::string> scaling = TwoLayerClass("10");
  scaling.insert(scaling.end(), {"--bias-scaling", "cubic"});
  ExpectInputError(scaling, "--bias-scaling");
  std::vector<std::string> modes = TwoLayerClass("10");
  modes.insert(modes.end(), {"--second-modes", "hardmax,exact"});
  ExpectInputError(modes, "--second-modes");
  // A cap of 0 certifies nothing; a budget above 10⁶ is refused before anything is allocated.
  std::vector<std::string> uncapped = TwoLayerClass("10");
  uncapped.insert(uncapped.end(), {"--threshold-evaluations", "0"});
  ExpectInputError(uncapped, "--threshold-evaluations: at least 1");
  ExpectInputError(With(TwoLayerClass("10"), "--budget", "99999999999"),
                   "--budget: 99999999999 is above 1000000 evaluations");
  // L and gamma are undefined for two layers: a bound in them could never refute.
  ExpectInputError(TwoLayerClass("L/eps"), "--bound: 'L/eps' is undefined for every two-layer");
  ExpectInputError(TwoLayerClass("1/gamma"), "L and gamma are not defined for two layers");
  // The second layer's flags need --layers 2.
  std::vector<std::string> one_layer = SmallClass("L/eps");
  one_layer.insert(one_layer.end(), {"--second-heads", "2"});
  ExpectInputError(one_layer, "--second-heads");
}
