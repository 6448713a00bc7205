// Unit tests of campaign options and the typed summary.
#include "ltsim/fuzz/campaign.h"

#include <gtest/gtest.h>

#include <string>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

// The option an OptionError names ("" when `options` validate).
std::string RejectedOption(const CampaignOptions& options) {
  try {
    ValidateCampaignOptions(options);
  } catch (const OptionError& error) {
    return error.option();
  }
  return "";
}

TEST(CampaignOptions, DefaultsValidate) { EXPECT_EQ(RejectedOption(CampaignOptions{}), ""); }

TEST(CampaignOptions, EachUnrunnableOptionIsNamedByItsKey) {
  auto with = [](auto edit) {
    CampaignOptions o;
    edit(o);
    return RejectedOption(o);
  };
  EXPECT_EQ(with([](CampaignOptions& o) { o.modes.clear(); }), "modes");
  EXPECT_EQ(with([](CampaignOptions& o) { o.pairs.clear(); }), "pairs");
  EXPECT_EQ(with([](CampaignOptions& o) { o.inputs.clear(); }), "inputs");
  EXPECT_EQ(with([](CampaignOptions& o) { o.layers.clear(); }), "layers");
  EXPECT_EQ(with([](CampaignOptions& o) { o.layers = {3}; }), "layers");
  EXPECT_EQ(with([](CampaignOptions& o) { o.methods = {"bogus"}; }), "methods");
  EXPECT_EQ(with([](CampaignOptions& o) { o.min_length = o.max_length + 1; }), "min_length");
  EXPECT_EQ(with([](CampaignOptions& o) { o.min_target = 0; }), "min_target");
  EXPECT_EQ(with([](CampaignOptions& o) { o.max_width = 0; }), "max_width");
  EXPECT_EQ(with([](CampaignOptions& o) { o.max_locality = -5; }), "max_locality");
  EXPECT_EQ(with([](CampaignOptions& o) { o.epsilon = -1; }), "epsilon");
  EXPECT_EQ(with([](CampaignOptions& o) { o.delta = 1e308; }), "delta");
  EXPECT_EQ(with([](CampaignOptions& o) { o.time_budget = -1; }), "time_budget");
}

TEST(CampaignSummary, TheSandwichIsASanityCheckNotATheorem) {
  EXPECT_FALSE(IsTheoremProperty(Property::kSandwich));
  for (Property p : {Property::kTransfer, Property::kFrequencyRate, Property::kFiniteHardmax,
                     Property::kLemma53})
    EXPECT_TRUE(IsTheoremProperty(p)) << PropertyName(p);
  CampaignSummary s;
  PropertySummary sandwich, transfer;
  sandwich.property = Property::kSandwich;
  sandwich.cases = 3;
  sandwich.refutations = 2;
  transfer.property = Property::kTransfer;
  transfer.cases = 3;
  transfer.refutations = 1;
  s.properties = {sandwich, transfer};
  EXPECT_EQ(s.TheoremRefutations(), 1u);
  EXPECT_EQ(s.AllRefutations(), 3u);
  const auto json = CampaignSummaryToJson(CampaignOptions{}, s);
  EXPECT_EQ(json["properties"]["sandwich"]["kind"], "sanity check");
  EXPECT_EQ(json["properties"]["transfer"]["kind"], "theorem");
  // Defect 12: no thread count, so summary.json is the same bytes for any --threads.
  EXPECT_FALSE(json["context"].contains("threads"));
}

}  // namespace
}  // namespace ltsim
