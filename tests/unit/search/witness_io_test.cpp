// Search witnesses with a high-precision recheck: agreement, content-hash names, save and replay.
#include "ltsim/search/witness_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "ltsim/core/error.h"
#include "ltsim/model/model_file.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;

SearchOptions Small(const std::string& objective) {
  SearchOptions o;
  o.objective = kSearchObjectiveNames.Parse(objective);
  o.n = 40;
  o.iterations = 3;
  o.seed = 11;
  o.input.length = 400;
  return o;
}

class SearchWitnessIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ltsim_search_io_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SearchWitnessIoTest, EveryObjectiveAgreesWithItsHighPrecisionRecheck) {
  for (const std::string& objective : kSearchObjectiveNames.Names()) {
    const SearchOptions o = Small(objective);
    const SearchCandidate c = HillClimb(o, 0).best;
    ASSERT_TRUE(std::isfinite(c.objective)) << objective;
    const SearchRecheck r = RecheckSearchCandidate(o, c);
    EXPECT_EQ(r.status, RecheckStatus::kAgrees) << objective << ": " << r.note;
    EXPECT_EQ(r.value, c.objective) << objective;
    EXPECT_NEAR(r.precise, c.objective, kSearchRecheckTolerance * std::max(1.0, c.objective))
        << objective;
    EXPECT_FALSE(r.precise_text.empty());
    if (objective.starts_with("sim")) {
      EXPECT_EQ(r.f_x.size(), static_cast<std::size_t>(c.f.outputs())) << objective;
      // The rounding allowance only ever widens the 1e-9 floor, and it is what the block says.
      EXPECT_GE(r.tolerance, kSearchRecheckTolerance * std::max(1.0, std::abs(r.precise)));
      EXPECT_EQ(SearchRecheckToJson(r)["tolerance"].get<double>(), r.tolerance);
    }
  }
}

// disagreement-length's recheck carries weight only when there is a disagreement: then it
// evaluates f and g on the witness string of length T* in 50 digits and the gap must exceed ε
// (its precise objective is the double T*/N by construction, so only the status is tested).
TEST_F(SearchWitnessIoTest, DisagreementRecheckConfirmsTheGapOnTheWitnessString) {
  SearchOptions o = Small("disagreement-length");
  o.eps = 0.05;
  o.n = 60;
  o.delta = 0.3;  // starting pairs that disagree within n (as in search_test)
  int confirmed = 0;
  for (int restart = 0; restart < 6; ++restart) {
    const SearchCandidate c = StartingPoint(o, restart);
    if (!(c.objective > 0)) continue;
    const SearchRecheck r = RecheckSearchCandidate(o, c);
    EXPECT_EQ(r.status, RecheckStatus::kAgrees) << r.note;
    ASSERT_EQ(r.f_x.size(), r.g_x.size());
    EXPECT_GT(r.z_length, 0u);  // the witness's length T*
    ++confirmed;
  }
  EXPECT_GT(confirmed, 0);
  // A pair whose outputs differ by ε/2 everywhere never disagrees: 0, nothing to confirm.
  SearchCandidate same = StartingPoint(o, 0);
  same.g = same.f;
  same.g.readout_bias.array() += o.eps / 2;
  same.objective = EvaluateCandidate(o, same);
  EXPECT_EQ(same.objective, 0.0);
  EXPECT_EQ(RecheckSearchCandidate(o, same).status, RecheckStatus::kAgrees);
}

TEST_F(SearchWitnessIoTest, SavedUnderItsContentHashAndReplays) {
  const SearchOptions o = Small("sim-ratio");
  const SearchCandidate c = HillClimb(o, 1).best;
  const SavedSearchWitness saved = SaveSearchWitness(dir_.string(), o, c);
  const std::string& path = saved.path;
  const nlohmann::json doc = nlohmann::json::parse(std::ifstream(path));
  // The typed result is what the file records (the CLI formats it and never reads back).
  EXPECT_EQ(doc["recheck"], SearchRecheckToJson(saved.recheck));
  EXPECT_EQ(saved.recheck.status, RecheckStatus::kAgrees);
  // The models are the documents of their model files.
  EXPECT_EQ(doc["f"], nlohmann::json::parse(ModelToJson(c.f)));
  EXPECT_EQ(fs::path(path).filename().string(), SearchWitnessFileName(doc));
  EXPECT_EQ(path.size() - dir_.string().size(), 1 + 16 + std::string(".search.json").size());
  EXPECT_EQ(doc["format"], "ltsim-search-witness");
  EXPECT_EQ(doc["recheck"]["status"], "agrees");
  EXPECT_EQ(doc["recheck"]["digits"], 50);
  const SearchReplay r = ReplaySearchWitness(path);
  EXPECT_TRUE(r.same_value);
  EXPECT_TRUE(r.reproduced);
  EXPECT_EQ(r.recorded_recheck_status, RecheckStatus::kAgrees);
  // Same content, same name: saving again writes the same file.
  EXPECT_EQ(SaveSearchWitness(dir_.string(), o, c).path, path);
  // An explicit path is used as given.
  const std::string named = (dir_ / "named.json").string();
  EXPECT_EQ(SaveSearchWitness(named, o, c).path, named);
}

TEST_F(SearchWitnessIoTest, ATamperedValueOrRecheckDoesNotReproduce) {
  const SearchOptions o = Small("sim-over-eta");
  const SearchCandidate c = HillClimb(o, 0).best;
  const std::string path = SaveSearchWitness(dir_.string(), o, c).path;
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(path));
  nlohmann::json value = doc, status = doc;
  value["value"] = doc["value"].get<double>() * (1 + 1e-9) + 1e-9;
  status["recheck"]["status"] = "differs";
  std::ofstream(dir_ / "value.json") << value.dump();
  std::ofstream(dir_ / "status.json") << status.dump();
  EXPECT_FALSE(ReplaySearchWitness((dir_ / "value.json").string()).reproduced);
  EXPECT_FALSE(ReplaySearchWitness((dir_ / "status.json").string()).reproduced);
}

TEST_F(SearchWitnessIoTest, BadInputIsAnInputErrorNamingTheFile) {
  SearchCandidate c = HillClimb(Small("sim-ratio"), 0).best;
  c.objective = -INFINITY;
  EXPECT_THROW(SaveSearchWitness(dir_.string(), Small("sim-ratio"), c), InputError);
  std::ofstream(dir_ / "bad.json") << R"({"format": "ltsim-search-witness", "recheck": 3})";
  try {
    ReadSearchWitness((dir_ / "bad.json").string());
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: recheck"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ReadSearchWitness((dir_ / "missing.json").string()), InputError);
}

}  // namespace
}  // namespace ltsim
