// Campaign properties: bit-identical files for any thread count, and resume == uninterrupted.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ltsim/core/error.h"
#include "ltsim/fuzz/campaign.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;

// Small cases, so a property run takes a fraction of a second.
CampaignOptions SmallCampaign(std::uint64_t seed, std::uint64_t cases, const fs::path& out) {
  CampaignOptions o;
  o.seed = seed;
  o.cases = cases;
  o.out = out.string();
  o.layers = {1, 2};
  o.min_length = 300;
  o.max_length = 1500;
  o.min_target = 60;
  o.max_target = 250;
  return o;
}

fs::path FreshDir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("ltsim_campaign_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every file a campaign leaves that must not depend on scheduling: the case lines, each
// witness by name and content, and the summary's verdicts (its context names the thread
// count, so it is compared without it).
std::map<std::string, std::string> Results(const fs::path& dir) {
  std::map<std::string, std::string> files;
  files["cases.jsonl"] = Read(dir / "cases.jsonl");
  for (const auto& entry : fs::directory_iterator(dir / "witnesses"))
    files["witnesses/" + entry.path().filename().string()] = Read(entry.path());
  nlohmann::json summary = nlohmann::json::parse(Read(dir / "summary.json"));
  summary.erase("context");
  files["summary (without context)"] = summary.dump();
  return files;
}

RC_GTEST_PROP(CampaignProperty, FilesAreIdenticalForOneAndTwoThreads, ()) {
  const std::uint64_t seed = *rc::gen::inRange<std::uint64_t>(1, 1000000);
  const std::uint64_t cases = *rc::gen::inRange<std::uint64_t>(1, 90);
  const std::atomic<bool> never{false};
  CampaignOptions one = SmallCampaign(seed, cases, FreshDir("one"));
  one.threads = 1;
  CampaignOptions two = SmallCampaign(seed, cases, FreshDir("two"));
  two.threads = 2;
  RunCampaign(one, false, never, {});
  RunCampaign(two, false, never, {});
  RC_ASSERT(Results(one.out) == Results(two.out));
  fs::remove_all(one.out);
  fs::remove_all(two.out);
}

// Interrupted after its first batch (as a signal would stop it) and resumed, a campaign
// ends with the same files as one run straight through.
RC_GTEST_PROP(CampaignProperty, ResumeEqualsAnUninterruptedRun, ()) {
  const std::uint64_t seed = *rc::gen::inRange<std::uint64_t>(1, 1000000);
  const std::uint64_t cases = *rc::gen::inRange<std::uint64_t>(65, 150);  // > one batch
  const std::atomic<bool> never{false};
  const CampaignOptions straight = SmallCampaign(seed, cases, FreshDir("straight"));
  RunCampaign(straight, false, never, {});
  const CampaignOptions broken = SmallCampaign(seed, cases, FreshDir("broken"));
  std::atomic<bool> stop{false};
  const CampaignReport first =
      RunCampaign(broken, false, stop,
                  [&](std::uint64_t, std::uint64_t, std::uint64_t, double) { stop = true; });
  RC_ASSERT(first.interrupted);
  RC_ASSERT(first.cases_done < cases);
  const CampaignReport second = RunCampaign(ReadCampaignOptions(broken.out), true, never, {});
  RC_ASSERT(!second.interrupted);
  RC_ASSERT(Results(straight.out) == Results(broken.out));
  fs::remove_all(straight.out);
  fs::remove_all(broken.out);
}

TEST(Campaign, RefusesToOverwriteAnExistingCampaign) {
  const std::atomic<bool> never{false};
  const CampaignOptions o = SmallCampaign(4, 3, FreshDir("twice"));
  RunCampaign(o, false, never, {});
  EXPECT_THROW(RunCampaign(o, false, never, {}), InputError);
  EXPECT_EQ(RunCampaign(o, true, never, {}).cases_done, 3u);  // resuming a finished one is fine
  fs::remove_all(o.out);
}

}  // namespace
}  // namespace ltsim
