// Command-line tests of `ltsim experiment paper` (docs/design.md §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, TinyExperimentPaperPrintsJsonAndWritesCsv) {
  const std::string out = Path("experiment").string();
  const Result r =
      Run({"experiment", "paper", "--omegas", "1,8", "--primes", "2,7", "--alphabets", "2", "--ks",
           "1", "--x-length", "2000", "--seed", "4", "--json", "--out-dir", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["context"]["seed"], 4);
  for (const char* key : {"context", "options", "definition", "rows", "trends"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["rows"].size(), 6u);
  EXPECT_EQ(doc["trends"].size(), 4u);
  for (const char* key : {"task", "parameter", "value", "needed_length", "sim_at_fixed"})
    EXPECT_TRUE(doc["rows"][0].contains(key)) << key;
  for (const char* key : {"slope", "rises", "needed_lengths"})
    EXPECT_TRUE(doc["trends"][0].contains(key)) << key;
  EXPECT_EQ(Json::parse(ReadFile(fs::path(out) / "experiment.json"))["rows"], doc["rows"]);
  EXPECT_EQ(CountLines(ReadFile(fs::path(out) / "experiment.csv")), 7u);  // header + 6 rows
  ExpectInputError({"experiment", "paper", "--primes", "1"}, "--primes");
  ExpectInputError({"experiment", "paper", "--omegas", "1,2x"}, "--omegas: '2x'");
  ExpectInputError({"experiment", "paper", "--ks", "1.5"}, "--ks");
}

// With --out-dir every row names a needed-length point witness (JSON and the CSV's last column);
// a one-layer row (frequency simulator) and a k-gram row (seeded markov simulator) replay with
// exit 0, a one-layer witness with a changed needed n with exit 1.
TEST_F(CliTest, ExperimentRowsNameWitnessesThatReplay) {
  const std::string out = Path("experiment").string();
  const Result r = Run({"experiment", "paper", "--omegas", "2", "--primes", "3", "--alphabets", "2",
                        "--ks", "1", "--x-length", "1500", "--seed", "4", "--out-dir", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(ReadFile(fs::path(out) / "experiment.json"));
  ASSERT_EQ(doc["rows"].size(), 4u);
  const std::string csv = ReadFile(fs::path(out) / "experiment.csv");
  EXPECT_NE(csv.find(",censored,x_seed,witness_file\n"), std::string::npos) << csv;
  std::string one_layer, kgram;
  for (const Json& row : doc["rows"]) {
    ASSERT_TRUE(row["witness_file"].is_string()) << row.dump();
    const std::string file = row["witness_file"];
    EXPECT_TRUE(fs::exists(fs::path(out) / file)) << file;
    EXPECT_NE(csv.find("," + file + "\n"), std::string::npos) << csv;
    (row["task"] == "kgram" ? kgram : one_layer) = (fs::path(out) / file).string();
  }
  EXPECT_EQ(Json::parse(ReadFile(kgram))["simulator"]["method"], "markov");
  for (const std::string& file : {one_layer, kgram}) {
    const Result replay = Run({"replay", file});
    EXPECT_EQ(replay.exit_code, 0) << file << "\n" << replay.out << replay.err;
  }
  Json w = Json::parse(ReadFile(one_layer));
  w["value"] = w["value"].get<std::uint64_t>() + 1;
  const Result tampered = Run({"replay", Temp("tampered.point.json", w.dump(1))});
  EXPECT_EQ(tampered.exit_code, 1) << tampered.out << tampered.err;
}

}  // namespace
}  // namespace ltsim::cli_test
