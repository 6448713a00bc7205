// Command-line tests of `ltsim fuzz` and `ltsim replay` of fuzz witnesses (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

// A campaign with a planted broken simulator (frequency matching that drops x's suffix but
// keeps claiming η) must report refutations, each with a witness that replays (exit 0: the
// recorded refutation reproduced), printed with the commands that replay it and re-run its case.
TEST_F(CliTest, FuzzFindsAPlantedBrokenSimulatorAndItsWitnessesReplay) {
  const fs::path dir = Path("broken");
  const Result r = Run({"fuzz", "--seed", "3", "--cases", "40", "--methods", "test-drop-suffix",
                        "--layers", "1", "--threads", "2", "--out-dir", dir.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("seed 3"), std::string::npos) << r.out;
  const Json summary = Json::parse(ReadFile(dir / "summary.json"));
  EXPECT_EQ(summary["context"]["seed"], 3);
  EXPECT_GT(summary["properties"]["frequency-rate"]["refutations"].get<int>(), 0);
  // Every refutation of the planted bug survives the 50-digit recheck.
  EXPECT_EQ(summary["properties"]["frequency-rate"]["confirmed"],
            summary["properties"]["frequency-rate"]["refutations"]);
  EXPECT_EQ(summary["properties"]["frequency-rate"]["unconfirmed"], 0);
  EXPECT_NE(r.out.find("unconfirmed"), std::string::npos) << r.out;  // the table's column
  int witnesses = 0;
  for (const auto& entry : fs::directory_iterator(dir / "witnesses")) {
    const Result replay = Run({"replay", entry.path().string()});
    EXPECT_EQ(replay.exit_code, 0) << entry.path() << replay.out << replay.err;
    EXPECT_NE(r.out.find("ltsim replay " + entry.path().string()), std::string::npos) << r.out;
    EXPECT_NE(replay.out.find("still refuted"), std::string::npos) << replay.out;
    EXPECT_NE(replay.out.find("recheck in 50 digits: confirmed"), std::string::npos) << replay.out;
    EXPECT_NE(replay.out.find("recorded recheck: confirmed"), std::string::npos) << replay.out;
    ++witnesses;
  }
  EXPECT_EQ(witnesses, summary["properties"]["frequency-rate"]["refutations"].get<int>());
  // The printed re-run command replays one case alone, from the campaign's options.
  const std::size_t at = r.out.find("ltsim fuzz --resume " + dir.string() + " --case ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::istringstream rest(r.out.substr(at));
  std::string word, index;
  for (int k = 0; k < 5; ++k) rest >> word;
  rest >> index;
  const Result alone = Run({"fuzz", "--resume", dir.string(), "--case", index});
  EXPECT_EQ(alone.exit_code, 1) << alone.out << alone.err;
  EXPECT_NE(alone.out.find("case " + index + " alone"), std::string::npos) << alone.out;
  EXPECT_NE(alone.out.find("REFUTED"), std::string::npos) << alone.out;
  // The same case from the flags instead of the directory, as JSON.
  const Result flags = Run({"fuzz", "--seed", "3", "--cases", "40", "--methods", "test-drop-suffix",
                            "--layers", "1", "--case", index, "--json"});
  EXPECT_EQ(flags.exit_code, 1) << flags.err;
  const Json one = Json::parse(flags.out);
  EXPECT_EQ(one["refuted"], true);
  EXPECT_EQ(one["case"].get<std::uint64_t>(), std::stoull(index));
  EXPECT_EQ(one["properties"]["frequency-rate"]["holds"], false);
}

TEST_F(CliTest, FuzzOnSoundMethodsFindsNothingAndPrintsTheSeed) {
  const fs::path dir = Path("sound");
  const Result r = Run({"fuzz", "--seed", "11", "--cases", "60", "--layers", "1,2", "--out-dir",
                        dir.string(), "--max-x-length", "3000", "--threads", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("seed 11"), std::string::npos);
  EXPECT_NE(r.out.find("refutations"), std::string::npos);  // the summary table
  EXPECT_EQ(CountLines(ReadFile(dir / "cases.jsonl")), 60u);
  // Not a terminal: progress is plain lines on stderr.
  EXPECT_NE(r.err.find("fuzz: 60/60 cases"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("1 thread,"), std::string::npos) << r.out;  // bug 9: not "1 threads"
}

// Bug 6: the error about --methods names --methods (not --method), with a suggestion.
TEST_F(CliTest, FuzzUnknownMethodsNamesTheFlag) {
  const Result r = Run({"fuzz", "--methods", "frequncy", "--out-dir", Path("d").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(CountLines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("--methods: unknown method 'frequncy'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'frequency'?"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("see ltsim fuzz --help"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("d") / "cases.jsonl"));
}

// Bug 5: a resumed campaign's rate counts only the cases it ran. A finished 64-case campaign
// whose campaign.json then asks for 256 is a campaign interrupted after one batch (a case is a
// function of the seed and its index alone); the resume runs the other 192 and its last
// progress line says so, with rate × seconds = 192 up to the printing (0.1 each).
TEST_F(CliTest, FuzzResumedRateCountsOnlyItsOwnCases) {
  const fs::path dir = Path("resumed");
  const Result first = Run({"fuzz", "--seed", "2", "--cases", "64", "--out-dir", dir.string(),
                            "--max-x-length", "3000"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  Json campaign = Json::parse(ReadFile(dir / "campaign.json"));
  ASSERT_EQ(campaign["cases"], 64) << campaign;
  campaign["cases"] = 256;
  WriteFile(dir / "campaign.json", campaign.dump(2));
  const Result resumed = Run({"fuzz", "--resume", dir.string()});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const std::size_t at = resumed.err.rfind("fuzz: 256/256 cases, 192 this run, ");
  ASSERT_NE(at, std::string::npos) << resumed.err;
  double rate = 0, seconds = 0;
  ASSERT_EQ(std::sscanf(resumed.err.c_str() + at,
                        "fuzz: 256/256 cases, 192 this run, %lf cases/s, "
                        "%*[^,], %lf s",
                        &rate, &seconds),
            2)
      << resumed.err;
  // |rate·s − 192| ≤ 0.05·s + 0.05·rate (each printed number is off by at most 0.05).
  EXPECT_NEAR(rate * seconds, 192.0, 0.05 * seconds + 0.05 * rate + 0.01) << resumed.err;
}

// SIGTERM stops the campaign cleanly after its current batch, with every file valid (the
// resume property test shows that --resume then ends as an uninterrupted run would).
TEST_F(CliTest, FuzzStopsOnSigtermWithValidFiles) {
  const fs::path dir = Path("interrupted");
  const std::string command = Quote(kBinary) + " fuzz --seed 5 --cases 100000 --threads 2 --out " +
                              Quote(dir.string()) + " > /dev/null 2>&1 & pid=$!; sleep 2; kill " +
                              "-TERM $pid; wait $pid; echo $? > " + Quote(Path("code").string());
  ASSERT_EQ(std::system(("bash -c " + Quote(command)).c_str()), 0);
  const Json summary = Json::parse(ReadFile(dir / "summary.json"));
  EXPECT_TRUE(summary["interrupted"].get<bool>());
  const std::size_t done = CountLines(ReadFile(dir / "cases.jsonl"));
  EXPECT_EQ(summary["cases"].get<std::size_t>(), done);
  EXPECT_GT(done, 0u);
  EXPECT_LT(done, 100000u);
  std::stringstream lines(ReadFile(dir / "cases.jsonl"));
  for (std::string line; std::getline(lines, line);) EXPECT_NO_THROW(Json::parse(line));
  EXPECT_EQ(ReadFile(Path("code")), "130\n");  // stopped by a signal, nothing refuted
}

}  // namespace
}  // namespace ltsim::cli_test
