// Replays every witness in corpus/witnesses/ (docs/witnesses.md §4): each must reproduce what it
// records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ltsim/fuzz/witness.h"
#include "ltsim/search/witness_io.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(LTSIM_SOURCE_DIR) / "corpus" / "witnesses";

// The witness files, read at test time in sorted order (not a list fixed at build time).
std::vector<fs::path> WitnessFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(kCorpus))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void ExpectClose(const std::string& fresh, const nlohmann::json& recorded, const char* what) {
  const double a = std::stod(fresh), b = std::stod(recorded.get<std::string>());
  EXPECT_NEAR(a, b, 1e-12 * std::max(1.0, std::abs(b))) << what;
}

// A fuzz witness: its property is still refuted, and the recheck confirms it again.
void ReplayFuzzWitness(const fs::path& path) {
  const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(Read(path));
  EXPECT_EQ(WitnessFileName(doc), path.filename().string()) << "name is not the content hash";
  const Witness w = ReadWitness(path.string());
  EXPECT_EQ(w.recorded_recheck, "confirmed");
  CaseResult result;
  EXPECT_TRUE(Reproduces(w, result));
  const Outcome& o = result.outcome(w.property);
  EXPECT_EQ(o.recheck.status, RecheckStatus::kAgrees) << o.recheck.reason;
  // The bound takes L and η from double code (an SVD, the simulator), which another compiler
  // may round differently in the last bits: the recorded values must come back to 1e-12.
  ExpectClose(o.recheck.observed, doc["recheck"]["observed"], "observed");
  ExpectClose(o.recheck.bound, doc["recheck"]["bound"], "bound");
}

// A search witness: the objective equals the stored value within the replay tolerance, and
// the high-precision recheck agrees again.
void ReplaySearch(const fs::path& path) {
  const nlohmann::json doc = nlohmann::json::parse(Read(path));
  EXPECT_EQ(SearchWitnessFileName(doc), path.filename().string()) << "name is not the content hash";
  const SearchReplay r = ReplaySearchWitness(path.string());
  EXPECT_TRUE(r.same_value) << r.value << " vs stored " << r.stored;
  EXPECT_EQ(r.recorded_recheck_status, RecheckStatus::kAgrees);
  EXPECT_TRUE(r.recheck.agrees()) << r.recheck.note;
  EXPECT_TRUE(r.reproduced);
  ExpectClose(r.recheck.precise_text, doc["recheck"]["precise"], "precise objective");
}

TEST(WitnessCorpusTest, EveryWitnessReproduces) {
  const std::vector<fs::path> files = WitnessFiles();
  ASSERT_FALSE(files.empty()) << kCorpus << " holds no witness";
  int fuzz = 0, search = 0;
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    const std::string format = nlohmann::json::parse(Read(path)).value("format", "");
    if (format == "ltsim-witness") {
      ReplayFuzzWitness(path);
      ++fuzz;
    } else if (format == "ltsim-search-witness") {
      ReplaySearch(path);
      ++search;
    } else {
      ADD_FAILURE() << "unknown format '" << format << "'";
    }
  }
  EXPECT_GT(fuzz, 0);
  EXPECT_GT(search, 0);
}

}  // namespace
}  // namespace ltsim
