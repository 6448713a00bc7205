// Files that steer ltsim (shard commands), tampered and forged shards, outputs never written
// through links, output directories locked and written as whole sets, outputs refused up
// front, and error lines that stay one bounded line.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "hardening_fixture.h"
#include "ltsim/core/bytes.h"
#include "ltsim/core/digest.h"

extern char** environ;

namespace ltsim::hardening {
namespace {

using Json = nlohmann::json;

// A shard file taken apart: its header and its records (deal, index, bytes).
struct ShardFile {
  Json header;
  struct Record {
    std::uint32_t deal;
    std::uint64_t index;
    std::string bytes;
  };
  std::vector<Record> records;
};

constexpr char kMagic[] = "ltsim-shard\n";

ShardFile ParseShard(const std::string& text) {
  const std::string body = text.substr(sizeof(kMagic) - 1);
  ByteReader r(body, "shard");
  ShardFile s;
  s.header = Json::parse(r.GetString());
  const auto n = r.Get<std::uint64_t>();
  for (std::uint64_t k = 0; k < n; ++k) {
    ShardFile::Record rec;
    rec.deal = r.Get<std::uint32_t>();
    rec.index = r.Get<std::uint64_t>();
    rec.bytes = r.GetString();
    r.Get<std::uint64_t>();
    s.records.push_back(std::move(rec));
  }
  return s;
}

// The file again with every digest recomputed, as anyone can (the digests hold no secret):
// what docs/distributed.md §4.1 says a digest cannot catch.
std::string WriteForged(const ShardFile& s) {
  const std::string header = s.header.dump();
  ByteWriter w;
  w.PutString(header);
  w.Put<std::uint64_t>(s.records.size());
  for (const ShardFile::Record& r : s.records) {
    w.Put(r.deal);
    w.Put(r.index);
    w.PutString(r.bytes);
    Digest64 d(DigestOf(header));
    d.Update(&r.deal, sizeof r.deal);
    d.Update(&r.index, sizeof r.index);
    d.Update(r.bytes);
    w.Put(d.value());
  }
  w.Put(DigestOf(w.bytes()));
  return kMagic + w.Take();
}

class FilesTest : public HardeningTest {
 protected:
  // One fuzz shard (0 of 1) of `cases` cases into out-dir `out`.
  std::string FuzzShard(const std::string& out, int cases = 6) const {
    const std::string shard = Path("fuzz.ltsim-shard").string();
    const Result r = Run({"fuzz", "--seed", "5", "--cases", std::to_string(cases), "--min-x-length",
                          "100", "--max-x-length", "200", "--min-z-length", "20", "--max-z-length",
                          "40", "--out-dir", out, "--shard", "0/1", "--shard-out", shard});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return shard;
  }
  std::string ThresholdShard() const {
    const std::string shard = Path("t.ltsim-shard").string();
    const Result r = Run({"threshold", kModelF, kModelG, "--eps", "0.1", "--max-length", "6",
                          "--no-prune", "--shard", "0/1", "--shard-out", shard});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return shard;
  }
  void ExpectOneLine(const Result& r, const std::string& names) const {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(names), std::string::npos) << "'" << names << "' not in: " << r.err;
    EXPECT_EQ(r.err.find("internal check"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("unexpected error"), std::string::npos) << r.err;
  }
};

// A shard's stored command line steers what merge runs: only the sharded commands, with
// options a shard run takes (the attack: `generate … --out VICTIM` overwrote VICTIM with exit
// 0; a merge of itself recursed until it crashed).
TEST_F(FilesTest, MergeRunsOnlyShardedCommandsWithShardOptions) {
  const std::string victim = Temp("victim.txt", "keep");
  ShardFile s = ParseShard(ReadText(ThresholdShard()));
  const std::string forged = Path("forged.ltsim-shard").string();
  const std::vector<std::vector<std::string>> refused = {
      {"generate", "text:0 1 0", "--out", victim},
      {"merge", forged},
      {"fuzz", "--resume", dir_.string()},
      {"fuzz", "--cases", "3", "--out-dir", Path("d").string(), "--time-budget=1"},
      {"threshold", kModelF, kModelG, "--shard", "0/1"},
      {}};
  for (const std::vector<std::string>& command : refused) {
    s.header["command"] = command;
    WriteText(forged, WriteForged(s));
    const Result r = Run({"merge", forged});
    ExpectOneLine(r, forged + ": command: ");
    EXPECT_EQ(ReadText(victim), "keep");
  }
}

// Every single-byte change of a real shard is a one-line InputError naming the file, before
// anything is written (the attack: 48 of 90 aborted with "internal check failed", 18 wrote NUL
// bytes into cases.jsonl, 22 were accepted).
TEST_F(FilesTest, ATamperedShardIsOneCleanLineAndWritesNothing) {
  const std::string out = Path("campaign").string();
  const std::string shard = FuzzShard(out);
  const std::string text = ReadText(shard);
  const std::string changed = Path("changed.ltsim-shard").string();
  int tried = 0;
  for (std::size_t at = 3; at < text.size(); at += text.size() / 29, ++tried) {
    std::string bytes = text;
    bytes[at] = static_cast<char>(bytes[at] ^ 0x20);
    WriteText(changed, bytes);
    const Result r = Run({"merge", changed});
    ExpectOneLine(r, changed);
    EXPECT_FALSE(fs::exists(out)) << "byte " << at;
  }
  EXPECT_GE(tried, 29);
}

// A case record re-encoded to claim a refutation, with every digest recomputed: the merge
// recomputes the cases whose records claim a refutation, so it cannot report one that no
// process computed.
TEST_F(FilesTest, AForgedRefutationWithValidDigestsIsCaughtByRecomputation) {
  const std::string out = Path("campaign").string();
  ShardFile s = ParseShard(ReadText(FuzzShard(out)));
  ASSERT_FALSE(s.records.empty());
  ShardFile::Record& first = s.records.front();
  ASSERT_EQ(first.index, 0u);
  ByteReader r(first.bytes, "item");
  ASSERT_EQ(r.Get<std::uint64_t>(), 0u);  // no witness: the case holds
  Json line = Json::parse(r.GetString());
  ASSERT_FALSE(line["properties"].empty());
  line["properties"].begin().value()["holds"] = false;
  ByteWriter w;
  w.Put<std::uint64_t>(0);
  w.PutString(line.dump() + "\n");
  first.bytes = w.Take();
  const std::string forged = Path("forged.ltsim-shard").string();
  WriteText(forged, WriteForged(s));
  const Result m = Run({"merge", forged});
  ExpectOneLine(m, forged + ": item 0: the recorded refutation is not what this case computes");
  EXPECT_FALSE(fs::exists(fs::path(out) / "summary.json"));
  // The honest shard still merges.
  const Result honest = Run({"merge", FuzzShard(Path("campaign2").string())});
  EXPECT_EQ(honest.exit_code, 0) << honest.err;
}

// Item bytes that do not decode (a truncated record, a flag that is neither 0 nor 1, a witness
// name that leaves the directory) are input naming the file and item, never a crash.
TEST_F(FilesTest, ItemsThatDoNotDecodeNameTheShardAndTheItem) {
  const std::string out = Path("campaign").string();
  const ShardFile honest = ParseShard(ReadText(FuzzShard(out)));
  const std::string forged = Path("forged.ltsim-shard").string();
  std::vector<std::string> items = {std::string(3, 'x'), std::string(8, '\xff')};
  ByteWriter escape;
  escape.Put<std::uint64_t>(1);
  escape.PutString("../../escaped.witness.json");
  escape.PutString("{}\n");
  escape.PutString("{}\n");
  items.push_back(escape.Take());
  for (const std::string& bytes : items) {
    fs::remove_all(out);  // the merge starts the campaign before it meets item 0
    ShardFile s = honest;
    s.records.front().bytes = bytes;
    WriteText(forged, WriteForged(s));
    ExpectOneLine(Run({"merge", forged}), forged + ": item 0");
    EXPECT_FALSE(fs::exists(Path("escaped.witness.json")));
  }
}

// A shard of the pruned one-layer threshold (docs/distributed.md §4.2) records task outcomes
// (src/threshold/item_codec.cpp: u64 first disagreement, double best gap, …). Changed bytes
// are named by the digests; re-encoded with fresh digests, bytes that do not decode, a task
// claiming an interruption, and a changed outcome of the task T* rests on are each one line
// naming the shard and item, exit 2, nothing printed.
TEST_F(FilesTest, AForgedPrunedThresholdShardIsOneCleanLine) {
  const std::string dir = Path("nested").string();
  ASSERT_EQ(Run({"construct", "family", "nested", "--alphabet", "3", "--slope", "0.17", "--eps",
                 "0.035", "--out-dir", dir})
                .exit_code,
            0);
  const std::string shard = Path("t.ltsim-shard").string();
  const std::vector<std::string> command = {"threshold", dir + "/f.json", dir + "/g.json", "--eps",
                                            "0.035",     "--max-length",  "3000"};
  std::vector<std::string> sharded = command;
  for (const char* a : {"--shard", "0/1", "--shard-out"}) sharded.push_back(a);
  sharded.push_back(shard);
  ASSERT_EQ(Run(sharded).exit_code, 0);
  const ShardFile honest = ParseShard(ReadText(shard));
  ASSERT_FALSE(honest.records.empty());
  // The task holding T* = 332: the first record of the last deal that claims a disagreement.
  std::size_t decisive = honest.records.size();
  for (std::size_t k = 0; k < honest.records.size(); ++k) {
    ByteReader r(honest.records[k].bytes, "item");
    if (r.Get<std::uint64_t>() == 332) {
      decisive = k;
      break;
    }
  }
  ASSERT_LT(decisive, honest.records.size());
  const std::string where = ": item " + std::to_string(honest.records[decisive].index);
  // A flipped bit: the digests.
  std::string flipped = ReadText(shard);
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x10);
  const std::string forged = Temp("forged.ltsim-shard", flipped);
  Result r = Run({"merge", forged});
  ExpectOneLine(r, forged + ": digest");
  EXPECT_TRUE(r.out.empty()) << r.out;
  // Re-encoded: a truncated item; a task claiming it was interrupted; another best gap in the
  // decisive task.
  ShardFile s = honest;
  s.records[decisive].bytes.resize(5);
  WriteText(forged, WriteForged(s));
  ExpectOneLine(Run({"merge", forged}), forged + where);
  s = honest;
  {
    // stopped_at is followed by three counts, a bound and a count: 5 × 8 bytes.
    std::string& bytes = s.records[decisive].bytes;
    const std::uint64_t stop = 332;
    std::memcpy(bytes.data() + bytes.size() - 48, &stop, sizeof stop);
  }
  WriteText(forged, WriteForged(s));
  r = Run({"merge", forged});
  ExpectOneLine(r, forged + where);
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  s = honest;
  const double gap = -2.0;
  std::memcpy(s.records[decisive].bytes.data() + 8, &gap, sizeof gap);
  WriteText(forged, WriteForged(s));
  r = Run({"merge", forged});
  ExpectOneLine(r, forged + where + ": the recorded result differs");
  EXPECT_TRUE(r.out.empty()) << r.out;
  // The honest shard merges to the command's own output.
  const Result merged = Run({"merge", shard});
  EXPECT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(merged.out, Run(command).out);
}

// A symbolic link in a campaign directory is never written through (the attack: a linked
// cases.jsonl cut and overwrote a file outside the directory).
TEST_F(FilesTest, AResumedCampaignRefusesSymbolicLinks) {
  const std::string out = Path("campaign").string();
  const Result run =
      Run({"fuzz", "--seed", "5", "--cases", "3", "--min-x-length", "100", "--max-x-length", "200",
           "--min-z-length", "20", "--max-z-length", "40", "--out-dir", out});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string outside = Temp("outside.txt", "no trailing newline");
  fs::remove(fs::path(out) / "cases.jsonl");
  fs::create_symlink(outside, fs::path(out) / "cases.jsonl");
  ExpectOneLine(Run({"fuzz", "--resume", out}), "is a symbolic link");
  EXPECT_EQ(ReadText(outside), "no trailing newline");
  fs::remove(fs::path(out) / "cases.jsonl");
  WriteText(fs::path(out) / "cases.jsonl", "");
  fs::remove_all(fs::path(out) / "witnesses");
  fs::create_directories(Path("elsewhere"));
  fs::create_directory_symlink(Path("elsewhere"), fs::path(out) / "witnesses");
  ExpectOneLine(Run({"fuzz", "--resume", out}), "witnesses");
  EXPECT_TRUE(fs::is_empty(Path("elsewhere")));
}

// Two runs into one campaign directory: the second is refused while the first runs (the
// attack: two resumes left a campaign that could never be resumed).
TEST_F(FilesTest, ASecondRunIntoABusyCampaignDirectoryIsRefused) {
  const std::string out = Path("campaign").string();
  std::vector<std::string> words = {kBinary,   "fuzz",      "--seed", "5",         "--cases",
                                    "1000000", "--threads", "1",      "--out-dir", out};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, kBinary.c_str(), &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(fs::path(out) / "cases.jsonl") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ExpectOneLine(Run({"fuzz", "--resume", out}), "another ltsim run is writing this directory");
  ExpectOneLine(Run({"fuzz", "--cases", "3", "--out-dir", out}), out);
  ::kill(pid, SIGTERM);  // the first stops cleanly: its campaign stays resumable
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_TRUE(fs::exists(fs::path(out) / "summary.json"));
}

// Outputs refused before any work: one file named twice, an output that is the input, a JSON
// model under a .safetensors name, an output directory that is a file.
TEST_F(FilesTest, OutputsThatWouldLoseDataAreRefusedUpFront) {
  const std::string f = Path("f.json").string();
  ExpectOneLine(Run({"construct", "family", "bump", "--slope", "8", "--eps", "0.05", "--out-f", f,
                     "--out-g", (dir_ / "." / "f.json").string()}),
                "same file");
  EXPECT_FALSE(fs::exists(f));
  const std::string model = Temp("m.json", ReadText(kModelF));
  ExpectOneLine(Run({"import", model, "--out", model}), "is also an input");
  EXPECT_EQ(ReadText(model), ReadText(kModelF));
  ExpectOneLine(Run({"import", model, "--out", Path("m.safetensors").string()}), ".safetensors");
  const std::string file = Temp("file", "keep");
  ExpectOneLine(Run({"fuzz", "--cases", "3", "--out-dir", file}), "exists and is not a directory");
  const auto start = std::chrono::steady_clock::now();
  ExpectOneLine(Run({"refute", "--bound",    "L/eps", "--eps",    "0.05", "--max-lipschitz",
                     "8",      "--alphabet", "2",     "--period", "1",    "--locality",
                     "0",      "--width",    "6",     "--heads",  "2",    "--mlp-width",
                     "1",      "--out-dir",  file}),
                "exists and is not a directory");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));  // no search
  EXPECT_EQ(ReadText(file), "keep");
}

// An output directory is one set: a re-run replaces it whole (no stale file), and a directory
// holding files ltsim did not write is refused untouched.
TEST_F(FilesTest, FamilyDirectoriesAreWrittenAsWholeSets) {
  const std::string out = Path("fam").string();
  const auto build = [&](const std::string& slope) {
    return Run(
        {"construct", "family", "bump", "--slope", slope, "--eps", "0.05", "--out-dir", out});
  };
  ASSERT_EQ(build("8").exit_code, 0);
  const std::string f8 = ReadText(fs::path(out) / "f.json");
  ASSERT_EQ(build("4").exit_code, 0);
  EXPECT_NE(ReadText(fs::path(out) / "f.json"), f8);
  WriteText(fs::path(out) / "notes.txt", "mine");
  ExpectOneLine(build("2"), "notes.txt");
  EXPECT_EQ(ReadText(fs::path(out) / "notes.txt"), "mine");
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find("ltsim-stage"), std::string::npos)
        << "a staging directory was left: " << entry.path();
}

// Text output checks its size before writing, and a signal leaves no temporary file.
TEST_F(FilesTest, GenerateRefusesATextThatCannotFitAndLeavesNoTemporaryOnASignal) {
  const auto start = std::chrono::steady_clock::now();
  ExpectOneLine(Run({"generate", "iid:length=10000000000000000000,alphabet=2,seed=1", "--out",
                     Path("big.txt").string()}),
                "bytes are free there");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(fs::exists(Path("big.txt")));
  std::vector<std::string> words = {kBinary, "generate", "iid:length=400000000,alphabet=2,seed=1",
                                    "--out", Path("g.txt").string()};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, kBinary.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  bool temp_seen = false;
  for (int k = 0; k < 500 && !temp_seen; ++k) {
    for (const auto& entry : fs::directory_iterator(dir_))
      temp_seen |= entry.path().filename().string().starts_with(".g.txt.tmp");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(temp_seen);
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_FALSE(entry.path().filename().string().starts_with(".g.txt.tmp")) << entry.path();
}

// Keys and values echoed from a file are escaped and cut: one line of bounded length.
TEST_F(FilesTest, EchoedKeysAreEscapedAndCut) {
  Json model = Json::parse(ReadText(kModelF));
  model["bad\nkey\x1b[2J"] = 1;
  const std::string odd = Temp("odd.json", model.dump());
  ExpectOneLine(Run({"info", odd}), "bad\\nkey\\x1b[2J: unknown key");
  model.erase("bad\nkey\x1b[2J");
  model[std::string(60000, 'k')] = 1;
  const std::string long_key = Temp("long.json", model.dump());
  const Result r = Run({"info", long_key});
  ExpectOneLine(r, "unknown key");
  EXPECT_LT(r.err.size(), 1100u);
}

}  // namespace
}  // namespace ltsim::hardening
