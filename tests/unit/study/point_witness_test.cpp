// Point witnesses are read strictly (the rules of every witness kind): each malformed
// variant of a valid file is one InputError naming the file and the key.
#include "ltsim/study/point_witness.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

using Json = nlohmann::ordered_json;

const std::string kValid =
    std::string(LTSIM_SOURCE_DIR) + "/tests/fuzz/corpus/point_witness/margin_p0.point.json";

Json Valid() {
  std::ifstream in(kValid);
  return Json::parse(in);
}

// The error of reading `doc` written to a file ("" when it reads).
std::string ErrorOf(const Json& doc) {
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("ltsim_point_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
        ".point.json"))
          .string();
  {
    std::ofstream out(path);
    out << doc.dump(1);
  }
  std::string error;
  try {
    ReadPointWitness(path);
  } catch (const InputError& e) {
    error = e.what();
  }
  std::filesystem::remove(path);
  if (!error.empty()) {
    EXPECT_NE(error.find(path), std::string::npos) << error;
  }
  return error;
}

TEST(PointWitness, TheShippedFileReadsAndReplays) {
  const PointWitness w = ReadPointWitness(kValid);
  EXPECT_EQ(w.kind, "first-disagreement");
  EXPECT_TRUE(ReplayPoint(w).reproduced);
}

TEST(PointWitness, EachMalformedVariantNamesItsKey) {
  const auto with = [](const std::function<void(Json&)>& edit) {
    Json doc = Valid();
    edit(doc);
    return ErrorOf(doc);
  };
  EXPECT_EQ(with([](Json&) {}), "");
  EXPECT_NE(with([](Json& d) { d["version"] = 1.5; }).find("version"), std::string::npos);
  EXPECT_NE(with([](Json& d) { d["bogus"] = 1; }).find("bogus"), std::string::npos);
  EXPECT_NE(with([](Json& d) { d.erase("eps"); }).find("eps"), std::string::npos);
  EXPECT_NE(with([](Json& d) { d["eps"] = -1; }).find("eps"), std::string::npos);
  EXPECT_NE(with([](Json& d) { d["max_length"] = -3; }).find("max_length"), std::string::npos);
  EXPECT_NE(with([](Json& d) { d["max_length"] = 1e30; }).find("max_length"), std::string::npos);
  EXPECT_NE(with([](Json& d) {
              d["x_runs"] = Json::array({Json::array({7, 2})});
            }).find("x_runs"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) {
              d["x_runs"] = Json::array({Json::array({0, 0})});
            }).find("x_runs"),
            std::string::npos);
  EXPECT_NE(
      with([](Json& d) {
        d["x_runs"] = Json::array({Json::array({0, 90'000'000}), Json::array({1, 90'000'000})});
      }).find("limit"),
      std::string::npos);
  EXPECT_NE(with([](Json& d) { d["g"]["alphabet"] = 3; }).find("g"), std::string::npos);
  EXPECT_NE(with([](Json& d) { d["recheck"]["exceeds_eps"] = "yes"; }).find("exceeds_eps"),
            std::string::npos);
}

}  // namespace
}  // namespace ltsim

namespace ltsim {
namespace {

// Version 2 (docs/witnesses.md §6): a needed-length witness written from the shipped pair reads
// back and replays; its new keys are checked strictly, and are refused in a version-1 file.
TEST(PointWitness, NeededLengthVersionTwoWritesReadsReplaysAndIsStrict) {
  PointWitness w = ReadPointWitness(kValid);
  w.kind = "needed-length";
  w.study = "sweep";
  w.max_length = 0;
  const PointReplay first = ReplayPoint(w);
  w.value = first.value;
  w.censored = first.censored;
  RecheckPoint(w);
  EXPECT_NE(w.recheck_status, RecheckStatus::kNone);
  const std::string stem =
      (std::filesystem::temp_directory_path() /
       ("ltsim_point_needed_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed())))
          .string();
  const std::string path = WritePointWitness(w, stem);
  Json doc;
  {
    std::ifstream in(path);
    doc = Json::parse(in);
  }
  for (const char* ext : {".point.json", ".f.json", ".g.json", ".x.txt"})
    std::filesystem::remove(stem + ext);
  EXPECT_EQ(doc["version"], 2);
  EXPECT_EQ(doc["simulator"]["method"], "frequency");
  EXPECT_EQ(ErrorOf(doc), "");
  const auto with = [&doc](const std::function<void(Json&)>& edit) {
    Json d = doc;
    edit(d);
    return ErrorOf(d);
  };
  EXPECT_NE(with([](Json& d) { d["recheck"]["status"] = "maybe"; }).find("status"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["recheck"].erase("decisions"); }).find("decisions"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["simulator"]["method"] = "truncate"; }).find("method"),
            std::string::npos);
  // A seeded simulator reads f alone: g must be f.
  EXPECT_NE(with([](Json& d) {
              d["simulator"] = {{"method", "markov"}, {"seeds", 2}, {"seed", 1}};
            }).find(": g"),
            std::string::npos);
  EXPECT_NE(with([](Json& d) { d["version"] = 3; }).find("version"), std::string::npos);
  // Version 1 has no `simulator`.
  Json v1 = Valid();
  v1["simulator"] = doc["simulator"];
  EXPECT_NE(ErrorOf(v1).find("simulator"), std::string::npos);
  // Replay: the recorded n reproduces; a changed n does not.
  PointWitness read = w;
  EXPECT_TRUE(ReplayPoint(read).reproduced) << ReplayPoint(read).detail;
  read.value += 1;
  EXPECT_FALSE(ReplayPoint(read).reproduced);
}

}  // namespace
}  // namespace ltsim
