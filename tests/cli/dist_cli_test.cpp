// ltsim under mpirun (2 and 3 ranks, oversubscribed, loopback only) and as shards + merge: every
// output file byte for byte equal to one process's; a killed rank, then --resume, ends with the
// files of an uninterrupted run. Skipped, saying why, without mpirun or an MPI build.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::string kBinary = LTSIM_BINARY;

std::string Quote(const std::string& arg) { return "'" + arg + "'"; }

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every regular file under `dir` by relative path, with its bytes (a file: itself).
std::map<std::string, std::string> Tree(const fs::path& dir) {
  std::map<std::string, std::string> files;
  if (fs::is_regular_file(dir)) return {{"(the file)", ReadFile(dir)}};
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = ReadFile(e.path());
  return files;
}

// Compares two trees file by file (names first, then bytes), naming the first difference.
void ExpectSameTree(const fs::path& a, const fs::path& b) {
  const auto ta = Tree(a), tb = Tree(b);
  std::vector<std::string> na, nb;
  for (const auto& [k, v] : ta) na.push_back(k);
  for (const auto& [k, v] : tb) nb.push_back(k);
  ASSERT_EQ(na, nb) << a << " vs " << b;
  ASSERT_FALSE(na.empty()) << a << " is empty";
  for (const auto& [name, bytes] : ta) EXPECT_TRUE(bytes == tb.at(name)) << name << " differs";
}

int Shell(const std::string& command) {
  const int status = std::system(("bash -c " + Quote(command)).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// This machine only: ranks talk through shared memory (vader; no network at all) and mpirun
// to them over loopback; root allowed; no core binding (each rank's oneTBB sees both cores).
void SetMpiEnvironment() {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  setenv("OMPI_MCA_btl", "self,vader", 1);
  setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
  setenv("OMPI_MCA_oob_tcp_if_include", "lo", 1);
  // mpirun ends a job with SIGTERM after this many seconds and SIGKILL as many later
  // (docs/distributed.md §2.1): rank 0 has 4 s to write.
  setenv("OMPI_MCA_odls_base_sigkill_timeout", "4", 1);
}

class DistCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("ltsim_dist_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    SetMpiEnvironment();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Path(const std::string& name) const { return dir_ / name; }

  // Skips the test (with the reason) unless mpirun exists and ltsim was built with MPI.
  void RequireMpi() {
    if (Shell("command -v mpirun > /dev/null") != 0)
      GTEST_SKIP() << "mpirun not found: install openmpi-bin (tools/setup.sh does)";
    Shell(Quote(kBinary) + " --version > " + Quote(Path("version").string()));
    if (ReadFile(Path("version")).find("MPI: built in") == std::string::npos)
      GTEST_SKIP() << "ltsim was built without MPI (libopenmpi-dev missing at configure time)";
  }

  // `ltsim ARGS` alone (ranks = 0) or under mpirun -n ranks; stdout to OUT, stderr to OUT.err.
  int Run(int ranks, const std::string& args, const std::string& out) {
    const std::string launcher =
        ranks > 0 ? "mpirun --oversubscribe --bind-to none -n " + std::to_string(ranks) + " " : "";
    return Shell(launcher + Quote(kBinary) + " " + args + " > " + Quote(Path(out).string()) +
                 " 2> " + Quote(Path(out + ".err").string()));
  }

  // Runs ARGS (with %OUT% replaced by a fresh directory) alone and under 2 and 3 ranks and
  // checks that stdout and the directory are the same bytes.
  void ExpectSameOutputs(const std::string& args, bool stdout_too = true) {
    std::vector<std::pair<int, std::string>> runs = {{0, "one"}, {2, "two"}, {3, "three"}};
    for (const auto& [ranks, name] : runs) {
      std::string a = args;
      const std::size_t at = a.find("%OUT%");
      if (at != std::string::npos) a.replace(at, 5, Quote(Path(name).string()));
      const int code = Run(ranks, a, name + ".stdout");
      EXPECT_LE(code, 1) << name << ": " << ReadFile(Path(name + ".stdout.err"));
    }
    for (const char* name : {"two", "three"}) {
      if (stdout_too) {
        EXPECT_TRUE(ReadFile(Path("one.stdout")) == ReadFile(Path(std::string(name) + ".stdout")))
            << name << " printed:\n"
            << ReadFile(Path(std::string(name) + ".stdout"));
      }
      if (args.find("%OUT%") != std::string::npos) ExpectSameTree(Path("one"), Path(name));
    }
  }

  fs::path dir_;
};

TEST_F(DistCliTest, VersionSaysWhetherMpiIsBuiltIn) {
  Shell(Quote(kBinary) + " --version > " + Quote(Path("v").string()));
  const std::string v = ReadFile(Path("v"));
  EXPECT_TRUE(v.find("MPI: built in") != std::string::npos ||
              v.find("MPI: not built in") != std::string::npos)
      << v;
}

TEST_F(DistCliTest, FuzzCampaignFilesAreTheSameOnOneTwoAndThreeRanks) {
  RequireMpi();
  // Two-layer cases cost far more than one-layer ones: the dealer balances them.
  ExpectSameOutputs(
      "fuzz --seed 3 --cases 150 --layers 1,2 --max-length 3000 --threads 2 --out %OUT%",
      /*stdout_too=*/false);
  // Rank 0 alone prints: one seed line, one summary table, one line of progress at the end.
  const std::string out = ReadFile(Path("three.stdout")), err = ReadFile(Path("three.stdout.err"));
  auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count(out, "ltsim fuzz: seed 3"), 1u) << out;
  EXPECT_EQ(count(out, "worst ratio"), 1u) << out;
  EXPECT_EQ(count(err, "fuzz: 150/150 cases"), 1u) << err;
}

TEST_F(DistCliTest, FuzzFilesDoNotDependOnTheThreadsPerRank) {
  RequireMpi();
  ASSERT_LE(Run(0, "fuzz --seed 8 --cases 100 --threads 1 --out " + Quote(Path("a").string()),
                "a.stdout"),
            1);
  ASSERT_LE(Run(3, "fuzz --seed 8 --cases 100 --threads 2 --out " + Quote(Path("b").string()),
                "b.stdout"),
            1);
  // summary.json records no thread count (docs/distributed.md §5): every file is the same.
  for (const char* file : {"cases.jsonl", "campaign.json", "summary.json"})
    EXPECT_TRUE(ReadFile(Path("a") / file) == ReadFile(Path("b") / file)) << file;
}

TEST_F(DistCliTest, SearchIsTheSameOnOneTwoAndThreeRanks) {
  RequireMpi();
  ExpectSameOutputs(
      "search --objective sim-ratio --restarts 5 --iterations 12 --seed 5 --json --out %OUT%");
}

TEST_F(DistCliTest, SweepIsTheSameOnOneTwoAndThreeRanks) {
  RequireMpi();
  ExpectSameOutputs(
      "sweep --parameter alphabet --values 2,3 --pairs 3 --iterations 4 --x-length 2000 "
      "--seed 1 --json --out %OUT%");
}

TEST_F(DistCliTest, ThresholdIsTheSameOnOneTwoAndThreeRanks) {
  RequireMpi();
  const std::string f = Path("f.json").string(), g = Path("g.json").string();
  ASSERT_EQ(Shell(Quote(kBinary) + " construct modp-task --p 2 --k 1 --out " + Quote(f) +
                  " > /dev/null && " + Quote(kBinary) + " construct modp-task --p 3 --k 1 --out " +
                  Quote(g) + " > /dev/null"),
            0);
  // A disagreement at T = 5 (the dealer stops there), and none up to 24 (every length).
  ExpectSameOutputs("threshold " + Quote(f) + " " + Quote(g) + " --eps 0.6 --max-length 30 --json");
  ExpectSameOutputs("threshold " + Quote(f) + " " + Quote(g) + " --eps 0.9 --max-length 24 --json");
  EXPECT_NE(ReadFile(Path("three.stdout")).find("\"checked_up_to\": 24"), std::string::npos);
  // The pruned search's windows dealt to the ranks (docs/distributed.md §2): a three-head
  // nested pair whose T* = 332 lies beyond full enumeration (18 million statistics pruned),
  // then the same pair stopped by the evaluation budget.
  const std::string dir = Path("nested").string();
  ASSERT_EQ(Shell(Quote(kBinary) +
                  " construct family nested --alphabet 3 --slope 0.17 --eps 0.035 --out-dir " +
                  Quote(dir) + " > /dev/null"),
            0);
  const std::string pair = Quote(dir + "/f.json") + " " + Quote(dir + "/g.json");
  ExpectSameOutputs("threshold " + pair + " --eps 0.035 --max-length 3000 --json");
  EXPECT_NE(ReadFile(Path("three.stdout")).find("\"first_disagreement\": 332"), std::string::npos);
  EXPECT_EQ(ReadFile(Path("three.stdout")).find("\"statistics_pruned\": 0,"), std::string::npos);
  ExpectSameOutputs("threshold " + pair +
                    " --eps 0.035 --max-length 3000 --max-evaluations 30000 --json");
  EXPECT_NE(ReadFile(Path("three.stdout")).find("\"complete\": false"), std::string::npos);
}

// Shards need no MPI: this runs wherever ltsim builds.
TEST_F(DistCliTest, ShardsMergedGiveTheFilesOfOneRun) {
  const std::string fuzz = "fuzz --seed 4 --cases 130 --layers 1,2 --max-length 3000 --threads 2";
  ASSERT_LE(Run(0, fuzz + " --out " + Quote(Path("one").string()), "one.stdout"), 1);
  std::string shards;
  for (int i = 0; i < 3; ++i) {
    const std::string file = Path("s" + std::to_string(i)).string();
    ASSERT_EQ(Run(0,
                  fuzz + " --out " + Quote(Path("merged").string()) + " --shard " +
                      std::to_string(i) + "/3 --shard-out " + Quote(file),
                  "shard.stdout"),
              0)
        << ReadFile(Path("shard.stdout.err"));
    EXPECT_FALSE(fs::exists(Path("merged"))) << "a shard wrote the command's outputs";
    shards += " " + Quote(file);
  }
  EXPECT_LE(Run(0, "merge" + shards, "merge.stdout"), 1) << ReadFile(Path("merge.stdout.err"));
  ExpectSameTree(Path("one"), Path("merged"));

  const std::string search =
      "search --objective sim-ratio --restarts 5 --iterations 10 --seed 2 --json";
  ASSERT_EQ(Run(0, search, "search.stdout"), 0);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(Run(0,
                  search + " --shard " + std::to_string(i) + "/2 --shard-out " +
                      Quote(Path("t" + std::to_string(i)).string()),
                  "t.stdout"),
              0);
  ASSERT_EQ(Run(0, "merge " + Quote(Path("t1").string()) + " " + Quote(Path("t0").string()),
                "search_merged.stdout"),
            0);
  EXPECT_TRUE(ReadFile(Path("search.stdout")) == ReadFile(Path("search_merged.stdout")));
  // A missing shard is an input error, not a partial output.
  EXPECT_EQ(Run(0, "merge " + Quote(Path("t1").string()), "bad.stdout"), 2);
  EXPECT_NE(ReadFile(Path("bad.stdout.err")).find("1 of 2 shards"), std::string::npos)
      << ReadFile(Path("bad.stdout.err"));
}

// The records of a shard file (src/dist/shard.cpp: magic, u64 header size, the JSON header,
// u64 records) and whether its header lists at least one deal.
std::uint64_t ShardRecords(const std::string& bytes, bool& has_deals) {
  std::size_t at = std::string("ltsim-shard\n").size();
  std::uint64_t size = 0, records = 0;
  std::memcpy(&size, bytes.data() + at, sizeof size);
  const std::string header = bytes.substr(at + 8, size);
  has_deals = header.find("\"deals\":[{") != std::string::npos;
  std::memcpy(&records, bytes.data() + at + 8 + size, sizeof records);
  return records;
}

// The pruned one-layer threshold in shards (docs/distributed.md §4.2): each shard records its
// blocks of every window up to its own first disagreement, and the merge prints what one
// process prints, byte for byte, for a pair that disagrees (the nested family's T* = 332,
// beyond full enumeration, so windows of pruned cells), stopped by the evaluation budget, and
// for pairs that agree up to N.
TEST_F(DistCliTest, PrunedThresholdShardsRecordWorkAndMergeToOneRun) {
  const std::string dir = Path("nested").string();
  ASSERT_EQ(Shell(Quote(kBinary) +
                  " construct family nested --alphabet 3 --slope 0.17 --eps 0.035 --out-dir " +
                  Quote(dir) + " > /dev/null"),
            0);
  const std::string nested = Quote(dir + "/f.json") + " " + Quote(dir + "/g.json");
  const std::string pair = Quote(std::string(LTSIM_SOURCE_DIR) + "/corpus/models/pair/f.json") +
                           " " +
                           Quote(std::string(LTSIM_SOURCE_DIR) + "/corpus/models/pair/g.json");
  const std::vector<std::string> commands = {
      "threshold " + nested + " --eps 0.035 --max-length 3000 --json",
      "threshold " + nested + " --eps 0.035 --max-length 3000",        // the table
      "threshold " + nested + " --eps 0.035 --max-length 300 --json",  // agrees up to N
      // stopped by the evaluation budget (shards stop once their own evaluations pass it)
      "threshold " + nested + " --eps 0.035 --max-length 3000 --max-evaluations 30000 --json",
      "threshold " + pair + " --eps 0.9 --max-length 100 --json"};
  for (const std::string& command : commands) {
    ASSERT_LE(Run(0, command, "one.stdout"), 1) << command << ReadFile(Path("one.stdout.err"));
    for (int K : {2, 3}) {
      std::string shards;
      for (int i = 0; i < K; ++i) {
        const std::string file = Path("s" + std::to_string(i)).string();
        ASSERT_EQ(Run(0,
                      command + " --shard " + std::to_string(i) + "/" + std::to_string(K) +
                          " --shard-out " + Quote(file),
                      "shard.stdout"),
                  0)
            << command << ReadFile(Path("shard.stdout.err"));
        bool has_deals = false;
        EXPECT_GT(ShardRecords(ReadFile(file), has_deals), 0u) << command << " shard " << i;
        EXPECT_TRUE(has_deals) << command << " shard " << i;
        shards += " " + Quote(file);
      }
      ASSERT_LE(Run(0, "merge" + shards, "merged.stdout"), 1)
          << command << ReadFile(Path("merged.stdout.err"));
      EXPECT_TRUE(ReadFile(Path("one.stdout")) == ReadFile(Path("merged.stdout")))
          << command << " K = " << K << " merged:\n"
          << ReadFile(Path("merged.stdout")) << "\none process:\n"
          << ReadFile(Path("one.stdout"));
    }
  }
  EXPECT_NE(ReadFile(Path("one.stdout")).find("\"first_disagreement\": null"), std::string::npos);
}

// A worker rank killed (SIGKILL) mid-campaign: mpirun ends the job, rank 0 stops with every
// finished case written, and --resume completes to the files of an uninterrupted run. mpirun
// gives rank 0 the 10 s docs/distributed.md §2.1 recommends between SIGTERM and SIGKILL: with
// the fixture's 4 s, rank 0 was sometimes killed before writing summary.json (seen in CI and in
// two full-suite runs with other tests beside it). mpirun waits out both periods: about 22 s.
TEST_F(DistCliTest, AKilledRankThenResumeGivesTheUninterruptedFiles) {
  RequireMpi();
  const std::string options = "--seed 6 --cases 4000 --max-length 3000 --threads 1";
  const fs::path dir = Path("killed");
  const std::string command =
      "mpirun --oversubscribe --bind-to none --mca odls_base_sigkill_timeout 10 -n 3 " +
      Quote(kBinary) + " fuzz " + options + " --out " + Quote(dir.string()) +
      " > /dev/null 2>&1 & pid=$!; " +
      // Wait for the first batches on disk, then kill rank 1 (found by its environment).
      "for i in $(seq 1 600); do [ -f " + Quote((dir / "cases.jsonl").string()) +
      " ] && [ $(wc -l < " + Quote((dir / "cases.jsonl").string()) +
      ") -ge 128 ] && break; sleep 0.1; done; " +
      "for p in $(pgrep -P $pid); do grep -qz '^OMPI_COMM_WORLD_RANK=1$' /proc/$p/environ && "
      "kill -KILL $p; done; wait $pid; echo $? > " +
      Quote(Path("code").string());
  Shell(command);
  const std::string lines = ReadFile(dir / "cases.jsonl");
  const auto done = std::count(lines.begin(), lines.end(), '\n');
  EXPECT_GE(done, 128);
  ASSERT_LT(done, 4000) << "the campaign ended before the kill: the test proved nothing";
  // Rank 0 stopped cleanly: its summary counts exactly the lines written.
  const std::string summary = ReadFile(dir / "summary.json");
  EXPECT_NE(summary.find("\"interrupted\": true"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"cases\": " + std::to_string(done) + ","), std::string::npos) << summary;
  EXPECT_NE(ReadFile(Path("code")), "0\n");
  // Resume under 2 ranks, and compare with one uninterrupted process.
  EXPECT_LE(Run(2, "fuzz --resume " + Quote(dir.string()) + " --threads 1", "resume.stdout"), 1)
      << ReadFile(Path("resume.stdout.err"));
  ASSERT_LE(Run(0, "fuzz " + options + " --out " + Quote(Path("whole").string()), "whole.stdout"),
            1);
  ExpectSameTree(Path("whole"), dir);
}

// SIGUSR1 to mpirun (forwarded at once to every rank) and SIGTERM (forwarded after
// odls_base_sigkill_timeout) both stop the campaign with every finished case written.
TEST_F(DistCliTest, SignalsToMpirunStopCleanlyAndResumeCompletes) {
  RequireMpi();
  for (const char* signal : {"USR1", "TERM"}) {
    const fs::path dir = Path(std::string("stopped_") + signal);
    const std::string command =
        "mpirun --oversubscribe --bind-to none -n 2 " + Quote(kBinary) +
        " fuzz --seed 9 --cases 100000 --threads 1 --out " + Quote(dir.string()) +
        " > /dev/null 2>&1 & pid=$!; sleep 2; kill -" + signal + " $pid; wait $pid";
    Shell(command);
    const std::string summary = ReadFile(dir / "summary.json");
    EXPECT_NE(summary.find("\"interrupted\": true"), std::string::npos) << signal << summary;
    const std::string lines = ReadFile(dir / "cases.jsonl");
    const auto done = std::count(lines.begin(), lines.end(), '\n');
    EXPECT_GT(done, 0) << signal;
    EXPECT_LT(done, 100000) << signal;
    EXPECT_NE(summary.find("\"cases\": " + std::to_string(done) + ","), std::string::npos)
        << signal << summary;
  }
}

}  // namespace
