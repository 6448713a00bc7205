// Command-line tests of studies over a user's family directory: `tightness --family-dir` (the
// fit equals the built-in row's on the same members, meta's T* checked, bad directories refused)
// and `refute --family-dir` (members judged against a bound, witnesses that replay).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

class UserFamilyTest : public CliTest {
 protected:
  // A bump member built by `construct family` in DIR/NAME.
  void Construct(const fs::path& dir, const std::string& name, const std::string& slope) {
    const Result r =
        Run({"construct", "family", "bump", "--slope", slope, "--out-dir", (dir / name).string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Four bump members of slopes 2, 4, 8, 16 (T* = 14, 27, 54, 107 at ε = 0.05).
  fs::path BumpFamily(const std::string& name) {
    const fs::path dir = Path(name);
    for (const char* slope : {"2", "4", "8", "16"}) Construct(dir, std::string("s") + slope, slope);
    return dir;
  }
  // Rewrites a model file's meta.
  static void SetMeta(const fs::path& file, const Json& meta) {
    Json model = Json::parse(ReadFile(file));
    model["meta"] = meta;
    std::ofstream(file) << model.dump(2) << "\n";
  }
};

TEST_F(UserFamilyTest, TightnessOfTheBuiltInRowsMembersFitsToTheSameNumbers) {
  // The built-in eps row (one-head bump members), its members written as point witnesses.
  const fs::path built = Path("built");
  const Result b = Run({"tightness", "--parameters", "eps", "--points", "3", "--seeds", "2",
                        "--heads", "1", "--no-validate", "--out-dir", built.string(), "--json"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const Json row = Json::parse(b.out)["rows"][0];
  // The same pairs as a user's family: each witness's f and g with its ε in meta.
  const fs::path family = Path("family");
  int members = 0;
  for (const Json& point : row["lower"]["points"])
    for (const Json& member : point["members"]) {
      std::string stem = (built / member["witness"].get<std::string>()).string();
      stem.resize(stem.size() - std::string(".point.json").size());
      const fs::path dir = family / ("m" + std::to_string(members++));
      fs::create_directories(dir);
      fs::copy_file(stem + ".f.json", dir / "f.json");
      fs::copy_file(stem + ".g.json", dir / "g.json");
      SetMeta(dir / "f.json", {{"eps", point["value"]}});
    }
  ASSERT_EQ(members, 6);
  const Result u =
      Run({"tightness", "--family-dir", family.string(), "--parameter", "eps", "--json"});
  ASSERT_EQ(u.exit_code, 0) << u.err;
  const Json user = Json::parse(u.out)["rows"][0];
  EXPECT_EQ(user["family_dir"], family.string());
  EXPECT_EQ(user["parameter"], "eps");
  EXPECT_EQ(user["regressor"], "1/eps");
  for (const char* side : {"lower", "upper"}) {
    EXPECT_EQ(user[side]["exponent"], row[side]["exponent"]) << side;
    EXPECT_EQ(user[side]["ci"], row[side]["ci"]) << side;
    EXPECT_EQ(user[side]["bootstrap_interval"], row[side]["bootstrap_interval"]) << side;
    ASSERT_EQ(user[side]["points"].size(), 3u);
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_EQ(user[side]["points"][i]["length"], row[side]["points"][i]["length"]) << side << i;
  }
  // The paper's exponent fitted from the registry bound at the members' constants: L and Δ
  // are the same for every member, so exactly 1/eps^2's 2 up to rounding.
  EXPECT_NEAR(user["paper"].get<double>(), row["paper"].get<double>(), 1e-9);
  EXPECT_EQ(user["verdict"], row["verdict"]);
}

TEST_F(UserFamilyTest, TightnessOfAConstructedFamilyChecksMetaAndIsThreadIndependent) {
  const fs::path family = BumpFamily("bump");
  const fs::path one = Path("one"), two = Path("two");
  const Result r = Run({"tightness", "--family-dir", family.string(), "--threads", "1", "--out-dir",
                        one.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json row = Json::parse(r.out)["rows"][0];
  // The one meta.params key that varies (slope), fitted in its value.
  EXPECT_EQ(row["parameter"], "slope");
  const std::vector<double> lengths = {14, 27, 54, 107};
  ASSERT_EQ(row["lower"]["points"].size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const Json& member = row["lower"]["points"][i]["members"][0];
    EXPECT_EQ(member["length"], lengths[i]);
    EXPECT_EQ(member["meta_first_disagreement"], lengths[i]);
    // Each member's point witness replays.
    const Result replay = Run({"replay", (one / member["witness"].get<std::string>()).string()});
    EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  }
  EXPECT_TRUE(row["warnings"].empty()) << row["warnings"];
  // T* about doubles with the slope: the lower exponent near 1, censored points none.
  EXPECT_NEAR(row["lower"]["exponent"].get<double>(), 0.98, 0.02);
  EXPECT_EQ(row["lower"]["points_censored"], 0);
  // The paper's exponent: the members differ only in the slope, and thm4.1-length = L²Δ⁷S⁶τ²/ε²
  // in them as slope² (L ∝ slope), so the least-squares slope of ln length is 2 up to rounding,
  // which FitLine's centred sums keep below 1e-15 (1.9999999999999993 here).
  EXPECT_NEAR(row["paper"].get<double>(), 2.0, 1e-15);
  ASSERT_EQ(Run({"tightness", "--family-dir", family.string(), "--threads", "2", "--out-dir",
                 two.string()})
                .exit_code,
            0);
  EXPECT_EQ(ReadFile(one / "tightness.json"), ReadFile(two / "tightness.json"));
  // A T* in meta that the exact threshold does not confirm is named, and not used.
  Json meta = Json::parse(ReadFile(family / "s4" / "f.json"))["meta"];
  meta["first_disagreement"] = 30;
  SetMeta(family / "s4" / "f.json", meta);
  const Result tampered = Run({"tightness", "--family-dir", family.string()});
  ASSERT_EQ(tampered.exit_code, 0) << tampered.err;
  EXPECT_NE(tampered.out.find("member s4: meta.first_disagreement = 30, the exact threshold "
                              "gives 27"),
            std::string::npos)
      << tampered.out;
}

TEST_F(UserFamilyTest, BadFamilyDirectoriesAreOneLineErrors) {
  const fs::path family = BumpFamily("bad");
  ExpectInputError({"tightness", "--family-dir", Path("none").string()}, "none: not a directory");
  ExpectInputError({"tightness", "--parameter", "slope"}, "--parameter: only with --family-dir");
  // A parameter every member has at one value cannot be fitted.
  ExpectInputError({"tightness", "--family-dir", family.string(), "--parameter", "height"},
                   "1 distinct value of height: a fit needs at least 3");
  // A non-numeric parameter, named by file and key.
  Json meta = Json::parse(ReadFile(family / "s8" / "f.json"))["meta"];
  meta["params"]["slope"] = "eight";
  SetMeta(family / "s8" / "f.json", meta);
  ExpectInputError({"tightness", "--family-dir", family.string(), "--parameter", "slope"},
                   (family / "s8" / "f.json").string() +
                       ": meta.params.slope: expected a number, got \"eight\"");
  // A member without g.json.
  fs::remove(family / "s2" / "g.json");
  ExpectInputError({"tightness", "--family-dir", family.string()},
                   (family / "s2").string() + ": missing g.json");
  ExpectInputError({"refute", "--bound", "L/eps", "--family-dir", family.string()},
                   (family / "s2").string() + ": missing g.json");
  // f and g of different alphabets.
  fs::copy_file(kModelG, family / "s2" / "g.json");
  ExpectInputError({"tightness", "--family-dir", family.string()}, "has alphabet");
  // The search's flags do not apply to given members.
  const fs::path good = BumpFamily("good");
  ExpectInputError({"refute", "--bound", "L/eps", "--family-dir", good.string(), "--alphabet", "2"},
                   "--alphabet: the family's members are given");
  ExpectInputError({"refute", "--bound", "L/eps", "--family-dir", good.string(), "--budget", "5"},
                   "--budget: a family's members are judged as given");
}

TEST_F(UserFamilyTest, RefuteOfAFamilyFindsTheMemberBeyondTheBoundAndItsWitnessReplays) {
  const fs::path family = BumpFamily("refute");
  // A bump member of slope s has L = 3s and T* ≈ 6.7s at ε = 0.05: L/eps = 60s is above
  // every member's T*, not refuted.
  const Result held = Run({"refute", "--bound", "L/eps", "--family-dir", family.string(),
                           "--separation", "1.5", "--json"});
  EXPECT_EQ(held.exit_code, 0) << held.out << held.err;
  EXPECT_EQ(Json::parse(held.out)["refuted"], false);
  // 0.1·L/eps = 6s is below every member's T*: each refutes it, the best by T*/bound is s2
  // (14/12).
  const fs::path out = Path("out");
  const Result r = Run({"refute", "--bound", "0.1*L/eps", "--family-dir", family.string(),
                        "--separation", "1.5", "--out-dir", out.string()});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(
      r.out.find("REFUTED: member s2's certified T* exceeds the bound; replay: ltsim replay " +
                 (out / "s2" / "refute.json").string()),
      std::string::npos)
      << r.out;
  const Json doc = Json::parse(ReadFile(out / "family.json"));
  EXPECT_EQ(doc["refuted"], true);
  ASSERT_EQ(doc["members"].size(), 4u);
  for (const Json& m : doc["members"]) {
    EXPECT_EQ(m["first_disagreement"], m["meta_first_disagreement"]) << m;
    EXPECT_EQ(m["refutes"], true) << m;
    const Result replay = Run({"replay", m["witness"].get<std::string>()});
    EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
    EXPECT_NE(replay.out.find("refuted true (recorded true)"), std::string::npos) << replay.out;
  }
  // At κ = 2 the bump's sup gap (meta.sup_gap = 2ε) sits on the boundary: decided in 50
  // digits, not separated, so nothing counts; the witnesses still replay.
  const fs::path strict = Path("strict");
  const Result s = Run({"refute", "--bound", "0.1*L/eps", "--family-dir", family.string(),
                        "--out-dir", strict.string()});
  EXPECT_EQ(s.exit_code, 0) << s.out << s.err;
  EXPECT_EQ(Run({"replay", (strict / "s16" / "refute.json").string()}).exit_code, 0);
  // A member censored below its bound limits the verdict (exit 3).
  const Result limited = Run({"refute", "--bound", "L/eps", "--family-dir", family.string(),
                              "--separation", "1.5", "--max-length", "20"});
  EXPECT_EQ(limited.exit_code, 3) << limited.out << limited.err;
}

}  // namespace
}  // namespace ltsim::cli_test
