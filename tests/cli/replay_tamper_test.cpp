// `ltsim replay` of doctored witnesses: every recorded result is recomputed and compared, so a
// witness with any recorded field changed does not reproduce (exit 1; docs/witnesses.md §1, §3,
// §5, §6).
#include <functional>

#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

class TamperTest : public CliTest {
 protected:
  // A recorded field changed by hand must not replay as "reproduced" (exit 1).
  void ExpectTamperedFails(const std::string& file, const Json& doc,
                           const std::string& name) const {
    const Result r = Run({"replay", Temp("tampered_" + file, doc.dump(1))});
    EXPECT_EQ(r.exit_code, 1) << name << "\n" << r.out << r.err;
  }
  void ExpectPointFieldsRecomputed(const std::string& file) const;
};

TEST_F(TamperTest, ReplayRecomputesEveryRecordedFieldOfFuzzAndSearchWitnesses) {
  const std::string dir = kSource + "/corpus/witnesses";
  int fuzz = 0, search = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string path = e.path().string();
    const std::string name = e.path().filename().string();
    if (!path.ends_with(".json")) continue;
    const Json w = Json::parse(ReadFile(path));
    if (path.ends_with(".witness.json")) {
      ++fuzz;
      for (const char* key : {"observed", "bound"}) {
        Json c = w;
        ASSERT_TRUE(c[key].is_number()) << key;
        c[key] = c[key].get<double>() * 1.5 + 0.25;
        ExpectTamperedFails(name, c, key);
      }
      if (w["ratio"].is_number()) {
        Json c = w;
        c["ratio"] = c["ratio"].get<double>() * 2 + 1;
        ExpectTamperedFails(name, c, "ratio");
      }
      if (w.contains("z") && w["z"].is_array() && !w["z"].empty()) {
        Json c = w;
        c["z"].erase(c["z"].begin());
        ExpectTamperedFails(name, c, "z");
      }
      if (w.contains("numbers") && w["numbers"].is_object()) {
        for (auto it = w["numbers"].begin(); it != w["numbers"].end(); ++it) {
          if (!it.value().is_number()) continue;
          Json c = w;
          c["numbers"][it.key()] = it.value().get<double>() * 1.5 + 0.25;
          ExpectTamperedFails(name, c, "numbers." + it.key());
          break;
        }
      }
    } else if (path.ends_with(".search.json") && w.contains("recheck")) {
      ++search;
      for (auto it = w["recheck"].begin(); it != w["recheck"].end(); ++it) {
        Json c = w;
        if (it.value().is_number()) {
          c["recheck"][it.key()] = it.value().get<double>() * 1.5 + 0.25;
        } else if (it.value().is_string() && it.key() != "status") {
          c["recheck"][it.key()] = it.value().get<std::string>() + "7";
        } else {
          continue;
        }
        ExpectTamperedFails(name, c, "recheck." + it.key());
      }
    }
  }
  EXPECT_GE(fuzz, 1);
  EXPECT_GE(search, 1);
}

TEST_F(TamperTest, ReplayRecomputesEveryRecordedFieldOfARefuteResult) {
  const std::string out = Path("refute").string();
  const Result r = Run({"refute", "--bound",    "1",  "--eps",        "0.05", "--max-lipschitz",
                        "4",      "--alphabet", "2",  "--period",     "1",    "--locality",
                        "0",      "--width",    "6",  "--heads",      "2",    "--mlp-width",
                        "1",      "--budget",   "40", "--iterations", "9",    "--max-length",
                        "300",    "--seed",     "3",  "--out-dir",    out});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const std::string file = out + "/refute.json";
  const Json w = Json::parse(ReadFile(file));
  ASSERT_EQ(Run({"replay", file}).exit_code, 0);
  const auto tamper = [&](const std::string& name, const std::function<void(Json&)>& change) {
    Json c = w;
    change(c);
    WriteFile(file, c.dump(2));
    const Result t = Run({"replay", file});
    EXPECT_EQ(t.exit_code, 1) << name << "\n" << t.out << t.err;
    WriteFile(file, w.dump(2));
  };
  const auto find = [](Json& j, const std::string& key) -> Json* {
    if (j.contains(key)) return &j[key];
    for (auto& [k, v] : j.items())
      if (v.is_object() && v.contains(key)) return &v[key];
    return nullptr;
  };
  int changed = 0;
  for (const char* key : {"witness_text", "gap", "largest_gap_below", "checked_up_to"}) {
    Json probe = w;
    if (!find(probe, key)) continue;
    ++changed;
    tamper(key, [&](Json& c) {
      Json& v = *find(c, key);
      if (v.is_number_unsigned())
        v = v.get<std::uint64_t>() + 1;
      else if (v.is_number())
        v = v.get<double>() * 1.5 + 0.25;
      else if (v.is_string())
        v = v.get<std::string>() + " 1";
    });
  }
  EXPECT_GE(changed, 3) << w.dump();
  Json probe = w;
  if (Json* status = find(probe, "recheck");
      status && status->is_object() && status->contains("status")) {
    tamper("recheck.status", [&](Json& c) {
      Json& s = (*find(c, "recheck"))["status"];
      s = s == "confirmed" ? "unconfirmed" : "confirmed";
    });
  }
}

// Point witnesses of both kinds: every recorded result (the string, the value, the censoring and
// each field of the recheck block) is recomputed.
void TamperTest::ExpectPointFieldsRecomputed(const std::string& file) const {
  const Json w = Json::parse(ReadFile(file));
  ASSERT_EQ(Run({"replay", file}).exit_code, 0) << file;
  int changed = 0;
  const auto tampered = [&](Json c, const std::string& name) {
    ++changed;
    ExpectTamperedFails("point.json", c, name);
  };
  {
    Json c = w;
    c["value"] = c["value"].get<std::uint64_t>() + 1;
    tampered(c, "value");
  }
  if (w["x_runs"].is_array() && !w["x_runs"].empty()) {
    Json c = w;
    c["x_runs"][0][1] = c["x_runs"][0][1].get<std::uint64_t>() + 1;
    tampered(c, "x_runs");
  }
  for (auto it = w["recheck"].begin(); it != w["recheck"].end(); ++it) {
    if (it.key() == "digits") continue;  // the arithmetic's description, not a result
    Json c = w;
    Json& v = c["recheck"][it.key()];
    if (v.is_boolean())
      v = !v.get<bool>();
    else if (v.is_number())
      v = v.get<double>() * 1.5 + 0.25;
    else if (v.is_string() && it.key() != "status")
      v = v.get<std::string>() + "7";
    else if (v.is_array() && !v.empty() && v[0].contains("n"))
      v[0]["n"] = v[0]["n"].get<std::uint64_t>() + 1;
    else
      continue;
    tampered(c, "recheck." + it.key());
  }
  EXPECT_GE(changed, 3) << w.dump();
}

TEST_F(TamperTest, ReplayRecomputesEveryRecordedFieldOfPointWitnesses) {
  const std::string tight = Path("tight").string();
  const Json doc = RunJson({"tightness", "--parameters", "eps", "--points", "3", "--seeds", "1",
                            "--no-validate", "--out-dir", tight, "--json", "--seed", "3"});
  ExpectPointFieldsRecomputed(
      (fs::path(tight) / doc["rows"][0]["lower"]["points"][1]["witness"].get<std::string>())
          .string());
  const std::string sweep = Path("sweep").string();
  ASSERT_EQ(Run({"sweep", "--parameter", "locality", "--values", "1,2", "--pairs", "1",
                 "--x-length", "1200", "--iterations", "4", "--seed", "2", "--out-dir", sweep})
                .exit_code,
            0);
  const Json s = Json::parse(ReadFile(fs::path(sweep) / "sweep.json"));
  ExpectPointFieldsRecomputed(
      (fs::path(sweep) / s["points"][0]["witness_file"].get<std::string>()).string());
}

}  // namespace
}  // namespace ltsim::cli_test
