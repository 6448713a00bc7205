// Command-line tests of `ltsim threshold` (docs/design.md §8).
#include <cstring>

#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

// f = share of 1s at odd positions, g = at positions ≡ 1 (mod 3) (Δ* = 6). Their largest gap
// is 0, 0, 1/2, 1/2, 2/3 at T = 1…5 (unit/threshold/threshold_test.cpp derives it): with ε = 0.6
// the first disagreement is T = 5.
class ThresholdCliTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    f_ = Path("odd.json").string();
    g_ = Path("mod3.json").string();
    ASSERT_EQ(Run({"construct", "modp-task", "--p", "2", "--k", "1", "--out", f_}).exit_code, 0);
    ASSERT_EQ(Run({"construct", "modp-task", "--p", "3", "--k", "1", "--out", g_}).exit_code, 0);
  }
  std::string f_, g_;
};

TEST_F(ThresholdCliTest, JsonGivesTheKnownFirstDisagreementAndAWitnessThatDisagrees) {
  const Json doc = RunJson({"threshold", f_, g_, "--eps", "0.6", "--max-length", "30", "--json"});
  const Result raw = Run({"threshold", f_, g_, "--eps", "0.6", "--max-length", "30", "--json"});
  EXPECT_EQ(nlohmann::ordered_json::parse(raw.out).begin().key(), "context");
  EXPECT_EQ(doc["context"]["command"], "threshold");
  EXPECT_EQ(doc["method"], "statistics");
  EXPECT_EQ(doc["first_disagreement"], 5);
  EXPECT_EQ(doc["checked_up_to"], 5);
  EXPECT_EQ(doc["exhaustive"], true);
  EXPECT_EQ(doc["view"]["period"], 6);
  ASSERT_EQ(doc["max_gap_per_length"].size(), 5u);
  EXPECT_NEAR(doc["max_gap_per_length"][4].get<double>(), 2.0 / 3.0, kPrinted);
  EXPECT_NEAR(doc["gap"].get<double>(), 2.0 / 3.0, kPrinted);
  // The witness, as a file, evaluated by `ltsim eval`.
  const std::string w = Temp("w.txt", doc["witness_text"].get<std::string>() + "\n");
  const Json fw = RunJson({"eval", f_, w, "--json"});
  const Json gw = RunJson({"eval", g_, w, "--json"});
  EXPECT_EQ(fw["length"], 5);
  EXPECT_GT(std::abs(fw["output"][0].get<double>() - gw["output"][0].get<double>()), 0.6);
  std::uint64_t length = 0;
  for (const Json& run : doc["witness"]) length += run[1].get<std::uint64_t>();
  EXPECT_EQ(length, 5u);
}

TEST_F(ThresholdCliTest, IdenticalModelsGiveNullUpToTheMaxLength) {
  const Json doc = RunJson({"threshold", f_, f_, "--eps", "0", "--max-length", "25", "--json"});
  EXPECT_TRUE(doc["first_disagreement"].is_null());
  EXPECT_TRUE(doc["witness"].is_null());
  EXPECT_EQ(doc["checked_up_to"], 25);
  EXPECT_EQ(doc["exhaustive"], true);
  EXPECT_EQ(doc["max_gap_per_length"].size(), 25u);
}

TEST_F(ThresholdCliTest, TextOutputStatesTheVerdictAndTheWitness) {
  const Result r = Run({"threshold", f_, g_, "--eps", "0.6", "--max-length", "30"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("first disagreement at T = 5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("witness: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("method statistics"), std::string::npos) << r.out;
}

// A two-layer pair through the path search: every string of every length covered.
TEST_F(ThresholdCliTest, TwoLayerPairIsExactThroughPaths) {
  const std::string kgram = kSource + "/corpus/models/kgram_S2_k1.json";
  const Json doc =
      RunJson({"threshold", kgram, kgram, "--eps", "0.01", "--max-length", "40", "--json"});
  EXPECT_EQ(doc["method"], "paths");
  EXPECT_TRUE(doc["first_disagreement"].is_null());
  EXPECT_EQ(doc["exhaustive"], true);
  EXPECT_EQ(doc["exhaustive_up_to"], 40);
  EXPECT_EQ(doc["checked_up_to"], 40);
  EXPECT_EQ(doc["samples_per_length"], 0);
  EXPECT_TRUE(doc["paths"]["sets_pruned"].get<std::uint64_t>() > 0);
}

// The k-gram pair of docs/theory.md §11.5: kgram_S2_k1 against a copy whose second-layer
// qk[2][0] is 7 instead of 8, ε = 0.05. The 225-token string 0 0 1^222 0 separates them by
// 0.0501, so T* ≤ 225; the path search computes T* and what it certifies is checked here: T*
// is its witness's length, `eval` finds the witness's gap above ε, no string below T* disagrees
// (the engine's exhaustive claim, cross-checked by every string up to 15 with --no-paths).
TEST_F(ThresholdCliTest, KGramPairFirstDisagreesWithinTheKnownStringsLength) {
  const std::string f = kSource + "/corpus/models/kgram_S2_k1.json";
  Json model = Json::parse(ReadFile(f));
  ASSERT_EQ(model["layers"][1]["heads"][0]["qk"][2][0], 8.0);
  model["layers"][1]["heads"][0]["qk"][2][0] = 7.0;
  const std::string g = Temp("kgram_qk7.json", model.dump());
  auto gap_on = [&](const std::string& string_file) {
    const Json a = RunJson({"eval", f, string_file, "--json"});
    const Json b = RunJson({"eval", g, string_file, "--json"});
    double gap = 0.0;
    for (std::size_t k = 0; k < a["output"].size(); ++k)
      gap = std::max(gap, std::abs(a["output"][k].get<double>() - b["output"][k].get<double>()));
    return gap;
  };
  EXPECT_GT(gap_on(Temp("known.txt", "0 0 1^222 0\n")), 0.05);
  const Json doc = RunJson(
      {"threshold", f, g, "--eps", "0.05", "--max-length", "225", "--threads", "1", "--json"});
  EXPECT_EQ(doc["method"], "paths");
  ASSERT_FALSE(doc["first_disagreement"].is_null());
  const std::uint64_t t_star = doc["first_disagreement"].get<std::uint64_t>();
  EXPECT_LE(t_star, 225u);
  EXPECT_EQ(doc["exhaustive"], true);
  EXPECT_EQ(doc["exhaustive_up_to"], t_star);
  EXPECT_EQ(doc["checked_up_to"], t_star);
  EXPECT_EQ(doc["recheck"]["status"], "confirmed");
  std::uint64_t length = 0;
  for (const Json& run : doc["witness"]) length += run[1].get<std::uint64_t>();
  EXPECT_EQ(length, t_star);
  const std::string w = Temp("witness.txt", doc["witness_text"].get<std::string>() + "\n");
  const double gap = gap_on(w);
  EXPECT_GT(gap, 0.05);
  EXPECT_NEAR(gap, doc["gap"].get<double>(), 1e-9);
  // Every string up to 15, evaluated one by one: no disagreement there (consistent with T*).
  const Json small =
      RunJson({"threshold", f, g, "--eps", "0.05", "--max-length", "15", "--no-paths", "--json"});
  EXPECT_EQ(small["exhaustive"], true);
  EXPECT_TRUE(small["first_disagreement"].is_null());
  EXPECT_GT(t_star, 15u);
  // The same search on two threads: the same T*, witness and gap.
  const Json two = RunJson(
      {"threshold", f, g, "--eps", "0.05", "--max-length", "225", "--threads", "2", "--json"});
  EXPECT_EQ(two["first_disagreement"], doc["first_disagreement"]);
  EXPECT_EQ(two["witness"], doc["witness"]);
  EXPECT_EQ(two["gap"], doc["gap"]);
}

// --no-paths: every string up to T = 15 (Σ 2^T ≤ 2^16), random strings beyond.
TEST_F(ThresholdCliTest, TwoLayerPairIsLabelledExhaustivePlusRandom) {
  const std::string kgram = kSource + "/corpus/models/kgram_S2_k1.json";
  const Json doc = RunJson({"threshold", kgram, kgram, "--eps", "0.01", "--max-length", "17",
                            "--seed", "5", "--samples", "20", "--no-paths", "--json"});
  EXPECT_EQ(doc["context"]["seed"], 5);
  EXPECT_EQ(doc["method"], "exhaustive+random");
  EXPECT_TRUE(doc["first_disagreement"].is_null());
  EXPECT_EQ(doc["exhaustive"], false);
  EXPECT_EQ(doc["exhaustive_up_to"], 15);
  EXPECT_EQ(doc["checked_up_to"], 17);
  EXPECT_EQ(doc["samples_per_length"], 20);
}

TEST_F(ThresholdCliTest, RefusesBeyondItsLimitsWithOneLine) {
  // Σ_{T ≤ 5000} #statistics is far above 2·10^7 for S = 2, Δ* = 6: full enumeration refuses.
  ExpectInputError({"threshold", f_, g_, "--eps", "0.1", "--max-length", "5000", "--no-prune"},
                   "--max-length");
  ExpectInputError({"threshold", f_, g_, "--eps", "0.1", "--max-length", "0"}, "--max-length");
  ExpectInputError({"threshold", f_, g_, "--eps", "-1", "--max-length", "5"}, "--eps");
  const std::string p7 = Path("p7.json").string(), p5 = Path("p5.json").string();
  ASSERT_EQ(Run({"construct", "modp-task", "--p", "7", "--k", "0", "--out", p7}).exit_code, 0);
  ASSERT_EQ(Run({"construct", "modp-task", "--p", "5", "--k", "0", "--out", p5}).exit_code, 0);
  ExpectInputError({"threshold", p7, p5, "--eps", "0.1", "--max-length", "5"}, "limit of 64");
  const std::string kgram = kSource + "/corpus/models/kgram_S2_k1.json";
  ExpectInputError({"threshold", kgram, kgram, "--eps", "0.1", "--max-length", "100000"},
                   "--max-length 100000");
  ExpectInputError(
      {"threshold", f_, kSource + "/corpus/models/pair/f.json", "--eps", "0.1", "--max-length",
       "5"},
      f_ + " has alphabet 2 and " + kSource + "/corpus/models/pair/f.json has alphabet 3");
}

// The pruned search (the default): the same answer as --no-prune, the coverage keys, the
// 50-digit recheck, and every number the same for any --threads.
TEST_F(ThresholdCliTest, PrunedSearchReportsItsCoverageAndDoesNotDependOnThreads) {
  const Json one = RunJson(
      {"threshold", f_, g_, "--eps", "0.6", "--max-length", "3000", "--threads", "1", "--json"});
  Json two = RunJson(
      {"threshold", f_, g_, "--eps", "0.6", "--max-length", "3000", "--threads", "2", "--json"});
  const Json full =
      RunJson({"threshold", f_, g_, "--eps", "0.6", "--max-length", "30", "--no-prune", "--json"});
  EXPECT_EQ(one["first_disagreement"], 5);
  EXPECT_EQ(full["first_disagreement"], 5);
  EXPECT_EQ(one["recheck"]["status"], "confirmed");
  EXPECT_EQ(one["recheck"]["digits"], 50);
  EXPECT_EQ(one["statistics_evaluated"].get<std::uint64_t>() +
                one["statistics_pruned"].get<std::uint64_t>(),
            one["statistics_total"].get<std::uint64_t>());
  EXPECT_TRUE(one["pruning"].is_string());
  EXPECT_EQ(one["tolerance"]["relative"], 1e-9);
  EXPECT_EQ(two["threads"], 2);
  for (Json* doc : {&two}) {
    (*doc)["threads"] = one["threads"];
    (*doc)["context"] = one["context"];
  }
  EXPECT_EQ(one.dump(), two.dump());
  // No disagreement up to 200 at ε = 0.7 > every gap (at most 2/3): certified, mostly pruned.
  const Json none = RunJson({"threshold", f_, g_, "--eps", "0.7", "--max-length", "200", "--json"});
  EXPECT_TRUE(none["first_disagreement"].is_null());
  EXPECT_EQ(none["checked_up_to"], 200);
  EXPECT_EQ(none["exhaustive"], true);
  EXPECT_EQ(none["complete"], true);
  EXPECT_GT(none["statistics_pruned"].get<double>(), none["statistics_evaluated"].get<double>());
}

// The README's trained SimpleTask pair (corpus/models/trained/, trained at n = 32 by
// ltsim_torch.train): under pruning the largest gap evaluated at T = 1000 is 0.152 while
// 0^999 1 reaches 0.78. The bracket must hold that string's gap, and the whole length's
// maximum from --no-prune.
TEST_F(ThresholdCliTest, BracketOfATrainedModelHoldsTheGapThatPruningDidNotEvaluate) {
  const std::string target = Path("target.json").string();
  ASSERT_EQ(Run({"construct", "simple-task", "--omega", "4", "--accuracy", "1e-4", "--out", target})
                .exit_code,
            0);
  const std::string trained =
      std::string(LTSIM_SOURCE_DIR) + "/corpus/models/trained/simple_task_omega4_n32.json";
  const Json pruned =
      RunJson({"threshold", target, trained, "--eps", "0.8", "--max-length", "1000", "--json"});
  ASSERT_EQ(pruned["checked_up_to"], 1000);
  const double lower = pruned["gap_lower_per_length"][999].get<double>();
  const double upper = pruned["gap_upper_per_length"][999].get<double>();
  EXPECT_EQ(pruned["max_gap_per_length"][999], pruned["gap_lower_per_length"][999]);
  const std::string x = Temp("x.txt", "0^999 1\n");
  const double fx = RunJson({"eval", target, x, "--json"})["output"][0].get<double>();
  const double gx = RunJson({"eval", trained, x, "--json"})["output"][0].get<double>();
  const double gap = std::abs(fx - gx);
  EXPECT_GT(gap, 0.77);
  EXPECT_LE(lower, gap + kPrinted);
  EXPECT_LE(gap, upper + kPrinted);
  EXPECT_LE(upper, 0.8 + 1e-9);  // below T* every pruned cell's bound is ≤ ε
  const Json every = RunJson({"threshold", target, trained, "--eps", "0.8", "--min-length", "1000",
                              "--max-length", "1000", "--no-prune", "--json"});
  const double top = every["gap_lower_per_length"][999].get<double>();
  EXPECT_EQ(every["gap_upper_per_length"][999], every["gap_lower_per_length"][999]);
  EXPECT_NEAR(top, gap, 1e-6);  // 0^999 1 is the worst string of length 1000
  EXPECT_LE(top, upper + kPrinted);
  EXPECT_EQ(every["min_length"], 1000);
  EXPECT_TRUE(every["gap_upper_per_length"][0].is_null());
  // The text table labels the two columns.
  const Result text = Run({"threshold", target, trained, "--eps", "0.8", "--max-length", "1000"});
  EXPECT_NE(text.out.find("max |f-g| >="), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("max |f-g| <="), std::string::npos) << text.out;
}

// --time-budget and SIGINT stop the search with what it certified: complete false, the reason,
// and (after a signal) exit code 130. The trained pair at ε = 0.8 to N = 10^7 takes about 7 s of
// one core (measured on the 2-core CI machine, loaded); both runs use one thread and stop after
// 1 s, so a machine several times faster still stops them before the end.
TEST_F(ThresholdCliTest, ABudgetOrASignalGivesThePartialAnswer) {
  const std::string target = Path("target.json").string();
  ASSERT_EQ(Run({"construct", "simple-task", "--omega", "4", "--accuracy", "1e-4", "--out", target})
                .exit_code,
            0);
  const std::string trained =
      std::string(LTSIM_SOURCE_DIR) + "/corpus/models/trained/simple_task_omega4_n32.json";
  const Json budget = RunJson({"threshold", target, trained, "--eps", "0.8", "--max-length",
                               "10000000", "--time-budget", "1", "--threads", "1", "--json"});
  EXPECT_EQ(budget["complete"], false);
  EXPECT_EQ(budget["stopped_by"], "time budget");
  EXPECT_TRUE(budget["first_disagreement"].is_null());
  const std::uint64_t checked = budget["checked_up_to"].get<std::uint64_t>();
  EXPECT_LT(checked, 10000000u);
  EXPECT_EQ(budget["gap_upper_per_length"].size(), checked);
  const Result stopped =
      Shell("timeout --preserve-status -s INT 1 \"$LTSIM\" threshold " + Quote(target) + " " +
            Quote(trained) + " --eps 0.8 --max-length 10000000 --threads 1 --json");
  EXPECT_EQ(stopped.exit_code, 130) << stopped.err;
  const Json doc = Json::parse(stopped.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << stopped.out;
  EXPECT_EQ(doc["stopped_by"], "signal");
  EXPECT_EQ(doc["complete"], false);
  EXPECT_LT(doc["checked_up_to"].get<std::uint64_t>(), 10000000u);
  const Result bad = Run(
      {"threshold", target, trained, "--eps", "0.8", "--max-length", "10", "--min-length", "11"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--min-length"), std::string::npos) << bad.err;
}

// A shard file is input: an item whose bytes are edited (here the statistics of the
// disagreeing length claim alphabet 9) is a one-line error naming the shard file and the item
// at merge, exit 2, never a failed internal check.
TEST_F(ThresholdCliTest, AMalformedItemInAShardFileIsAnInputErrorNamingIt) {
  const std::string shard = Path("s0.ltsim-shard").string();
  ASSERT_EQ(Run({"threshold", f_, g_, "--eps", "0.6", "--max-length", "12", "--no-prune", "--shard",
                 "0/1", "--shard-out", shard})
                .exit_code,
            0);
  std::string bytes = ReadFile(shard);
  // Layout (src/dist/shard.cpp): magic, header (u64 size + JSON), u64 records, then per record
  // u32 deal, u64 index, u64 size, the item's bytes (and its digest).
  std::size_t at = std::string("ltsim-shard\n").size();
  const auto u64 = [&](std::size_t p) {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + p, sizeof v);
    return v;
  };
  const std::string header = bytes.substr(at + 8, u64(at));
  // Shard files that carry digests end each record with its 8-byte digest.
  const std::size_t digest = header.find("\"digest\"") != std::string::npos ? 8 : 0;
  at += 8 + u64(at);
  const std::uint64_t records = u64(at);
  at += 8;
  bool changed = false;
  for (std::uint64_t k = 0; k < records; ++k) {
    const std::uint64_t index = u64(at + 4);
    const std::uint64_t size = u64(at + 12);
    const std::size_t item = at + 20;
    if (index == 5) {
      // One bit of the item flipped (its layout is item_codec.cpp's business; the decoder's
      // shape checks have their own unit test, tests/unit/threshold/partial_test.cpp).
      bytes[item + size / 2] = static_cast<char>(bytes[item + size / 2] ^ 0x40);
      changed = true;
    }
    at = item + size + digest;
  }
  ASSERT_TRUE(changed);
  WriteFile(shard, bytes);
  // The whole file's digest finds it before anything is decoded (src/dist/shard.cpp); the
  // decoder's own shape checks, on bytes handed to it directly, are partial_test.cpp's.
  ExpectInputError({"merge", shard}, shard + ": digest");
}

TEST_F(ThresholdCliTest, HelpStatesTheLimits) {
  const Result r = Run({"threshold", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--max-length"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("20000000"), std::string::npos) << r.out;  // kThresholdMaxStatistics
  EXPECT_NE(r.out.find("D* = S·Δ* ≤ 64"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ltsim::cli_test
