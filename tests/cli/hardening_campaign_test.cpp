// Campaign directories: campaign.json is read strictly,
// a complete line of cases.jsonl that is not a case record names its file and line, and
// summary.json is the same bytes for any --threads.
#include <nlohmann/json.hpp>

#include "hardening_fixture.h"

namespace ltsim::hardening {
namespace {

using Json = nlohmann::ordered_json;

class CampaignTest : public HardeningTest {
 protected:
  // A three-case campaign in `name`, small enough to take well under a second.
  fs::path Campaign(const std::string& name, const std::string& threads = "1") {
    const fs::path dir = Path(name);
    const Result r = Run({"fuzz", "--seed", "5", "--cases", "3", "--threads", threads,
                          "--min-length", "100", "--max-length", "200", "--min-target", "20",
                          "--max-target", "40", "--out", dir.string()});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    return dir;
  }

  // Rewrites campaign.json with `key` set to the raw JSON text `raw`, then resumes.
  void ExpectBadOption(const std::string& key, const std::string& raw, const std::string& names) {
    const fs::path dir = Campaign("c_" + key + "_" + std::to_string(++count_));
    Json options = Json::parse(ReadText(dir / "campaign.json"));
    options[key] = "@@";
    std::string text = options.dump(2);
    text.replace(text.find("\"@@\""), 4, raw);
    WriteText(dir / "campaign.json", text);
    const std::string cases = ReadText(dir / "cases.jsonl");
    ExpectInputError({"fuzz", "--resume", dir.string()}, names);
    EXPECT_EQ(ReadText(dir / "cases.jsonl"), cases);  // nothing lost
  }
  int count_ = 0;
};

TEST_F(CampaignTest, IntegersInCampaignJsonAreIntegersInRange) {
  ExpectBadOption("cases", "-1", "campaign.json: cases");
  ExpectBadOption("cases", "1e30", "campaign.json: cases");
  ExpectBadOption("cases", "2.5", "campaign.json: cases");
  ExpectBadOption("seed", "-3", "campaign.json: seed");
  ExpectBadOption("max_locality", "-5", "campaign.json: max_locality");
  ExpectBadOption("cases", "1e400", "campaign.json: cases");
}

TEST_F(CampaignTest, EmptyMixesAndBadOptionsAreRefused) {
  for (const char* key : {"modes", "pairs", "inputs", "layers", "methods"})
    ExpectBadOption(key, "[]", std::string("campaign.json: ") + key);
  for (const char* key : {"max_alphabet", "max_width", "max_period", "max_heads"})
    ExpectBadOption(key, "0", std::string("campaign.json: ") + key);
  ExpectBadOption("methods", "[\"bogus\"]", "campaign.json: methods");
  ExpectBadOption("epsilon", "-1", "campaign.json: epsilon");
  ExpectBadOption("delta", "1e308", "campaign.json: delta");
  ExpectBadOption("bogus_key", "1", "campaign.json: bogus_key: unknown key");
}

TEST_F(CampaignTest, ACompleteLineThatIsNotACaseNamesFileAndLine) {
  for (const std::string bad : {"{}", "not json", "[]", "{\"case\": 1e400}"}) {
    const fs::path dir = Campaign("lines_" + std::to_string(++count_));
    std::string text = ReadText(dir / "cases.jsonl");
    const std::size_t second = text.find('\n') + 1;
    text = text.substr(0, second) + bad + "\n" + text.substr(text.find('\n', second) + 1);
    WriteText(dir / "cases.jsonl", text);
    ExpectInputError({"fuzz", "--resume", dir.string()}, "cases.jsonl:2");
    EXPECT_EQ(ReadText(dir / "cases.jsonl"), text);
  }
}

TEST_F(CampaignTest, ATornLastLineIsStillCutOnResume) {
  const fs::path dir = Campaign("torn");
  const std::string whole = ReadText(dir / "cases.jsonl");
  const std::string summary = ReadText(dir / "summary.json");
  const std::size_t last = whole.rfind('\n', whole.size() - 2) + 1;
  WriteText(dir / "cases.jsonl", whole.substr(0, last + 10));  // a kill mid-write
  const Result r = Run({"fuzz", "--resume", dir.string()});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_EQ(ReadText(dir / "cases.jsonl"), whole);
  EXPECT_EQ(ReadText(dir / "summary.json"), summary);
}

TEST_F(CampaignTest, NotACampaignDirectory) {
  fs::create_directories(Path("d/campaign.json"));  // a directory where the file should be
  ExpectInputError({"fuzz", "--resume", Path("d").string()}, "campaign.json");
  ExpectInputError({"fuzz", "--resume", Path("missing").string()}, "missing");
}

TEST_F(CampaignTest, SummaryIsTheSameBytesForAnyThreadCount) {
  const fs::path one = Campaign("one", "1");
  const fs::path two = Campaign("two", "2");
  for (const char* file : {"summary.json", "cases.jsonl", "campaign.json"})
    EXPECT_EQ(ReadText(one / file), ReadText(two / file)) << file;
  EXPECT_EQ(ReadText(one / "summary.json").find("\"threads\""), std::string::npos);
}

}  // namespace
}  // namespace ltsim::hardening
