// Command-line tests of `ltsim search` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, SearchIsReproducibleAndItsWitnessReplays) {
  const std::string witness = Path("search.json").string();
  const std::vector<std::string> args = {
      "search",       "--objective", "sim-ratio",  "--z-length", "40",     "--restarts", "2",
      "--iterations", "4",           "--x-length", "400",        "--seed", "11"};
  std::vector<std::string> one = args, two = args;
  one.insert(one.end(), {"--threads", "1", "--json"});
  two.insert(two.end(), {"--threads", "2", "--json", "--out", witness});
  const Result a = Run(one), b = Run(two);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const Json da = Json::parse(a.out), db = Json::parse(b.out);
  EXPECT_EQ(da["restarts"], db["restarts"]);
  EXPECT_EQ(da["best"], db["best"]);
  EXPECT_EQ(da["context"]["seed"], 11);
  const Json w = Json::parse(ReadFile(witness));
  EXPECT_EQ(w["format"], "ltsim-search-witness");
  EXPECT_EQ(w["recheck"]["status"], "agrees");  // rechecked in 50 digits before it was written
  EXPECT_EQ(w["recheck"]["digits"], 50);
  const Result r = Run({"replay", witness});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("recheck agrees (recorded agrees)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reproduced"), std::string::npos) << r.out;
  // --out DIR names the witness by its content, as corpus/witnesses/ holds it.
  fs::create_directories(Path("corpus"));
  std::vector<std::string> to_dir = args;
  to_dir.insert(to_dir.end(), {"--out-dir", Path("corpus").string()});
  const Result c = Run(to_dir);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::vector<fs::path> saved;
  for (const auto& e : fs::directory_iterator(Path("corpus"))) saved.push_back(e.path());
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].string().substr(saved[0].string().size() - 12), ".search.json");
  EXPECT_EQ(Run({"replay", saved[0].string()}).exit_code, 0);
  Json tampered = w;
  tampered["value"] = w["value"].get<double>() + 1.0;
  WriteFile(Path("tampered.json"), tampered.dump());
  EXPECT_EQ(Run({"replay", Path("tampered.json").string()}).exit_code, 1);
  EXPECT_TRUE(db["shrunk"].contains("widths_removed") && db["shrunk"].contains("runs_removed"));
  ExpectInputError({"search", "--objective", "nope"}, "--objective");
  ExpectInputError({"search", "--proposals", "annealing"}, "--proposals");
}

// search --layers 2 (docs/refute.md §8): the certified-T* search over a small two-layer class,
// its witness DIR/search.json replayed by one command, and the one-layer flags refused.
TEST_F(CliTest, TwoLayerSearchWritesAReplayableWitness) {
  const std::string dir = Path("two").string();
  const Result r =
      Run({"search", "--layers", "2", "--eps", "0.05", "--width", "5", "--max-length", "30",
           "--restarts", "1", "--iterations", "5", "--seed", "4", "--json", "--out-dir", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("seed 4"), std::string::npos) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["format"], "ltsim-two-layer-search");
  EXPECT_EQ(j["layers"], 2);
  EXPECT_EQ(j["certified_by"], "paths");
  EXPECT_EQ(j["recheck"]["status"], "agrees");
  EXPECT_EQ(Json::parse(ReadFile(Path("two/search.json"))), j);
  const Result replay = Run({"replay", Path("two/search.json").string()});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("reproduced"), std::string::npos) << replay.out;
  ExpectInputError({"search", "--layers", "2", "--objective", "sim-ratio"}, "--objective");
  ExpectInputError({"search", "--layers", "2", "--z-length", "40"}, "--z-length");
  ExpectInputError({"search", "--second-heads", "2"}, "--second-heads");
}

// search --layers 2 refuses what it would ignore or cannot replay (one line, exit 2), and
// --iterations 0 spends the whole budget on random starts (R·(I + 1) = 3 starts, no climbs).
TEST_F(CliTest, TwoLayerSearchRefusesFlagsItCannotHonour) {
  const std::vector<std::string> base = {"search", "--layers",   "2", "--eps",
                                         "0.05",   "--width",    "5", "--max-length",
                                         "30",     "--restarts", "1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  ExpectInputError(with({"--shard", "0/2"}), "--shard: does not apply with --layers 2");
  ExpectInputError(with({"--shard-out", "x"}), "--shard-out: does not apply with --layers 2");
  ExpectInputError(with({"--n", "5"}), "--n: does not apply with --layers 2");
  ExpectInputError(with({"--threshold-evaluations", "0"}), "--threshold-evaluations: at least 1");
  ExpectInputError(with({"--iterations", "2000000000"}), "--restarts: 1 × (--iterations + 1)");
  ExpectInputError({"search", "--layers", "2", "--eps", "0", "--width", "5", "--restarts", "1"},
                   "--eps: must be finite and > 0");
  std::vector<std::string> three = base;
  three[10] = "3";
  three.insert(three.end(), {"--iterations", "0", "--json"});
  const Result zero = Run(three);
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  const Json j = Json::parse(zero.out);
  EXPECT_EQ(j["evaluations"], 3);
  ASSERT_EQ(j["restarts"].size(), 3u);
  for (const Json& c : j["restarts"]) EXPECT_EQ(c["applied"], Json::array({0, 0, 0, 0, 0, 0, 0}));
}

// The line `--out` prints is the recheck the witness records (formatted, not read back); an
// objective or proposal set is a name from one table, in flags and in witness files alike.
TEST_F(CliTest, SearchWitnessObjectiveIsANameFromItsTable) {
  const std::string witness = Path("w.search.json").string();
  const Result r = Run({"search", "--objective", "sim-over-eta", "--z-length", "40", "--restarts",
                        "1", "--iterations", "2", "--x-length", "400", "--out", witness});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json w = Json::parse(ReadFile(witness));
  EXPECT_EQ(w["objective"], "sim-over-eta");
  EXPECT_NE(r.out.find("wrote " + witness +
                       " (recheck in 50 digits: " + w["recheck"]["status"].get<std::string>() +
                       ", precise " + w["recheck"]["precise"].get<std::string>() + ")"),
            std::string::npos)
      << r.out;
  Json bad = w;
  bad["objective"] = "sim_over_eta";
  const std::string bad_path = Temp("bad.search.json", bad.dump(2));
  ExpectInputError({"replay", bad_path}, bad_path + ": objective: unknown search objective");
  ExpectInputError({"replay", bad_path},
                   "(known: needed-length, sim-ratio, sim-over-eta, needed, disagreement-length)");
  ExpectInputError(
      {"search", "--objective", "nope"},
      "--objective: unknown search objective 'nope' (known: needed-length, sim-ratio,");
  ExpectInputError(
      {"search", "--proposals", "annealing"},
      "--proposals: unknown proposal set 'annealing' (known: mixed, gaussian, logits)");
}

}  // namespace
}  // namespace ltsim::cli_test
