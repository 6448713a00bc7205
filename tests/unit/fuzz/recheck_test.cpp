// The high-precision recheck of fuzz refutations: confirmed, unconfirmed, skipped, and what the
// campaign files say about each.
#include "ltsim/fuzz/recheck.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ltsim/eval/precise.h"
#include "ltsim/fuzz/campaign.h"
#include "ltsim/fuzz/witness.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;

// The planted broken simulator (z loses x's suffix but keeps claiming η) on one-layer pairs.
CampaignOptions BrokenCampaign(const fs::path& out) {
  CampaignOptions o;
  o.seed = 3;
  o.cases = 40;
  o.methods = {"test-drop-suffix"};
  o.layers = {1};
  o.out = out.string();
  o.threads = 2;
  return o;
}

// The first case of the broken campaign whose frequency-rate is refuted.
CaseSpec FirstRefutedCase(CaseResult& result) {
  const CampaignOptions o = BrokenCampaign("unused");
  for (std::uint64_t i = 0; i < o.cases; ++i) {
    CaseSpec spec = DrawCase(o, i);
    result = RunCase(spec);
    if (!result.outcome(Property::kFrequencyRate).holds) return spec;
  }
  ADD_FAILURE() << "no refuted case in the broken campaign";
  return {};
}

TEST(RecheckTest, APlantedBugIsConfirmedInHighPrecision) {
  CaseResult result;
  const CaseSpec spec = FirstRefutedCase(result);
  const Outcome& o = result.outcome(Property::kFrequencyRate);
  ASSERT_TRUE(o.checked);
  EXPECT_FALSE(o.holds);
  EXPECT_EQ(o.recheck.status, RecheckStatus::kAgrees) << o.recheck.reason;
  // The precise observed value is the double one to ~1e-15 (one-layer outputs of size O(1)).
  EXPECT_NEAR(std::stod(o.recheck.observed), o.observed, 1e-12 * (1 + o.observed));
  EXPECT_EQ(o.recheck.f_x.size(), static_cast<std::size_t>(result.sandwich.f.on_x.size()));
  const auto w = WitnessJson(spec, result, Property::kFrequencyRate, 3);
  EXPECT_EQ(w["recheck"]["status"], "confirmed");
  EXPECT_EQ(w["recheck"]["digits"], kPreciseDigits);
  EXPECT_TRUE(w["recheck"]["observed"].is_string());
}

// A double verdict flipped by rounding, forged on a real case: the sandwich (the triangle
// inequality, which cannot fail exactly) marked refuted. The recheck recomputes gap_x and
// sim_f + gap_z + sim_g in 50 digits, finds it holds, and clears the refutation.
TEST(RecheckTest, ARefutationThatHoldsInHighPrecisionIsUnconfirmed) {
  CaseResult result;
  const CaseSpec spec = FirstRefutedCase(result);
  for (Outcome& o : result.outcomes) o = Outcome{};  // only the forged one is refuted
  Outcome& o = result.outcomes[static_cast<int>(Property::kSandwich)];
  o.checked = true;
  o.holds = false;
  RecheckRefutations(spec, result);
  EXPECT_EQ(o.recheck.status, RecheckStatus::kDiffers);
  EXPECT_TRUE(o.holds);
  EXPECT_FALSE(result.refuted());
  EXPECT_LE(std::stod(o.recheck.observed), std::stod(o.recheck.bound));
  EXPECT_EQ(RecheckLabel(o.recheck), "unconfirmed");
}

// Transfer's premise gap_z ≤ ε is rechecked too: with ε below the precise gap_z the premise
// fails in high precision, so the property does not apply and the refutation is unconfirmed.
TEST(RecheckTest, TransferWhosePremiseFailsInHighPrecisionIsUnconfirmed) {
  CaseResult result;
  CaseSpec spec = FirstRefutedCase(result);
  ASSERT_GT(result.sandwich.gap_z, 0.0);
  spec.epsilon = result.sandwich.gap_z / 2;
  for (Outcome& o : result.outcomes) o = Outcome{};
  Outcome& o = result.outcomes[static_cast<int>(Property::kTransfer)];
  o.checked = true;
  o.holds = false;
  RecheckRefutations(spec, result);
  EXPECT_EQ(o.recheck.status, RecheckStatus::kDiffers);
  EXPECT_NE(o.recheck.reason.find("premise"), std::string::npos) << o.recheck.reason;
}

// The first case of a campaign with `options` on which `property` was checked.
CaseSpec FirstChecked(const CampaignOptions& options, Property property, CaseResult& result) {
  for (std::uint64_t i = 0; i < 200; ++i) {
    CaseSpec spec = DrawCase(options, i);
    result = RunCase(spec);
    if (result.outcome(property).checked) return spec;
  }
  ADD_FAILURE() << "no case checks " << PropertyName(property);
  return {};
}

// Forges a double refutation of `property` (which held) and rechecks it: the precise observed
// value must be the double one (to 1e-12: both are the same sums, one exact to 50 digits), and
// high precision must say it holds.
void ExpectForgedRefutationUnconfirmed(const CaseSpec& spec, CaseResult& result,
                                       Property property) {
  const Outcome held = result.outcome(property);
  ASSERT_TRUE(held.checked && held.holds);
  Outcome& o = result.outcomes[static_cast<int>(property)];
  o.holds = false;
  RecheckRefutations(spec, result);
  EXPECT_EQ(o.recheck.status, RecheckStatus::kDiffers) << o.recheck.reason;
  EXPECT_NEAR(std::stod(o.recheck.observed), held.observed, 1e-12 * (1 + held.observed));
  EXPECT_NEAR(std::stod(o.recheck.bound), held.bound, 1e-12 * (1 + held.bound));
}

TEST(RecheckTest, Lemma53StatisticIsRecomputedInHighPrecision) {
  CampaignOptions o = BrokenCampaign("unused");
  o.methods = {"markov", "blocks"};
  o.max_length = 4000;
  CaseResult result;
  const CaseSpec spec = FirstChecked(o, Property::kLemma53, result);
  ExpectForgedRefutationUnconfirmed(spec, result, Property::kLemma53);
}

TEST(RecheckTest, FiniteHardmaxIsRecomputedInHighPrecision) {
  CampaignOptions o = BrokenCampaign("unused");
  o.methods = {"frequency"};
  o.modes = {Attention::kFinite};
  CaseResult result;
  const CaseSpec spec = FirstChecked(o, Property::kFiniteHardmax, result);
  ExpectForgedRefutationUnconfirmed(spec, result, Property::kFiniteHardmax);
}

TEST(RecheckTest, TwoLayerSandwichIsRecomputedInHighPrecision) {
  CampaignOptions o = BrokenCampaign("unused");
  o.layers = {2};
  o.methods = {"blocks"};
  o.max_length = 1500;
  o.min_length = 500;
  o.min_target = 100;
  o.max_target = 300;
  CaseResult result;
  const CaseSpec spec = FirstChecked(o, Property::kSandwich, result);
  ASSERT_EQ(spec.f.layers.size(), 2u);
  ExpectForgedRefutationUnconfirmed(spec, result, Property::kSandwich);
}

// A two-layer pair on an x longer than the precise pass allows: skipped, never confirmed,
// and the refutation stands (it could not be shown to be an artefact).
TEST(RecheckTest, TooLongForTheTwoLayerPassIsSkippedAndSaysWhy) {
  CampaignOptions o = BrokenCampaign("unused");
  o.layers = {2};
  o.methods = {"frequency-agnostic"};
  CaseSpec spec = DrawCase(o, 0);
  ASSERT_EQ(spec.f.layers.size(), 2u);
  spec.input.length = kPreciseTwoLayerLimit + 1;
  CaseResult result;
  Outcome& sandwich = result.outcomes[static_cast<int>(Property::kSandwich)];
  sandwich.checked = true;
  sandwich.holds = false;
  RecheckRefutations(spec, result);
  EXPECT_EQ(sandwich.recheck.status, RecheckStatus::kSkipped);
  EXPECT_FALSE(sandwich.holds);
  EXPECT_NE(RecheckLabel(sandwich.recheck).find("skipped (a two-layer model"), std::string::npos)
      << RecheckLabel(sandwich.recheck);
  EXPECT_EQ(RecheckJson(sandwich.recheck)["status"], "skipped");
}

TEST(RecheckTest, CampaignFilesCountConfirmedRefutationsAndWitnessesCarryTheRecheck) {
  const fs::path dir = fs::temp_directory_path() / ("ltsim_recheck_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::atomic<bool> never{false};
  const CampaignReport report = RunCampaign(BrokenCampaign(dir), false, never, {});
  const PropertySummary& rate =
      report.summary.properties[static_cast<int>(Property::kFrequencyRate)];
  EXPECT_GT(rate.refutations, 0u);
  EXPECT_EQ(rate.confirmed, rate.refutations);
  EXPECT_EQ(rate.unconfirmed, 0u);
  EXPECT_EQ(rate.recheck_skipped, 0u);
  EXPECT_EQ(report.summary.TheoremRefutations(), report.summary.AllRefutations())
      << "the planted bug refutes theorem properties only, never the sanity check";
  int witnesses = 0;
  for (const auto& entry : fs::directory_iterator(dir / "witnesses")) {
    const Witness w = ReadWitness(entry.path().string());
    EXPECT_EQ(w.recorded_recheck, "confirmed") << entry.path();
    ++witnesses;
  }
  EXPECT_EQ(static_cast<std::uint64_t>(witnesses), rate.refutations);
  std::ifstream lines(dir / "cases.jsonl");
  int rechecked = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    for (const auto& [name, p] : j["properties"].items()) {
      if (p["holds"]) continue;
      EXPECT_EQ(p["recheck"], "confirmed") << line;
      ++rechecked;
    }
  }
  EXPECT_EQ(rechecked, witnesses);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ltsim
