// Witnesses: a witness that cannot run is bad input
// (exit 2), never "no longer refuted"; numbers and nesting are checked like every format.
#include <nlohmann/json.hpp>

#include "hardening_fixture.h"

namespace ltsim::hardening {
namespace {

using Json = nlohmann::ordered_json;

const std::string kWitness = kSource + "/corpus/witnesses/c33ba7f86c142710.witness.json";
const std::string kSearchWitness = kSource + "/corpus/witnesses/21c121be1db4bb3d.search.json";

class WitnessTest : public HardeningTest {
 protected:
  // The corpus witness with the value at `path` (keys) set to the raw JSON text `raw`.
  std::string Mutated(const std::string& source, const std::vector<std::string>& path,
                      const std::string& raw) {
    Json doc = Json::parse(ReadText(source));
    Json* at = &doc;
    for (std::size_t k = 0; k + 1 < path.size(); ++k) at = &(*at)[path[k]];
    (*at)[path.back()] = "@@";
    std::string text = doc.dump(1);
    text.replace(text.find("\"@@\""), 4, raw);
    return Temp("w" + std::to_string(++count_) + ".json", text);
  }
  int count_ = 0;
};

TEST_F(WitnessTest, AWitnessThatCannotRunIsBadInput) {
  // Each of these replayed as "no longer refuted", exit 0, before (defect 6).
  ExpectInputError({"replay", Mutated(kWitness, {"case_spec", "method"}, "\"bogus\"")},
                   "case_spec.method");
  ExpectInputError({"replay", Mutated(kWitness, {"case_spec", "input", "alphabet"}, "60000")},
                   "case_spec.input");
  ExpectInputError({"replay", Mutated(kWitness, {"case_spec", "target_length"}, "0")},
                   "case_spec.target_length");
  Json doc = Json::parse(ReadText(kWitness));
  Json g = doc["case_spec"]["g"];
  g["alphabet"] = g["alphabet"].get<int>() + 1;
  g["embedding"].push_back(g["embedding"][0]);
  ExpectInputError({"replay", Mutated(kWitness, {"case_spec", "g"}, g.dump())}, "case_spec.g");
}

TEST_F(WitnessTest, IntegersAndNumbersAreChecked) {
  ExpectInputError({"replay", Mutated(kWitness, {"case"}, "-1")}, ": case:");
  ExpectInputError({"replay", Mutated(kWitness, {"version"}, "1.5")}, ": version:");
  ExpectInputError({"replay", Mutated(kWitness, {"case_spec", "epsilon"}, "1e400")},
                   "case_spec.epsilon");
  ExpectInputError({"replay", Mutated(kWitness, {"case_spec", "sim_seed"}, "-2")},
                   "case_spec.sim_seed");
  ExpectInputError({"replay", Mutated(kWitness, {"bogus"}, "1")}, "bogus: unknown key");
}

TEST_F(WitnessTest, ResourceAndNestingLimits) {
  // 4.1 GB before (defect 10).
  ExpectInputError({"replay", Mutated(kWitness, {"case_spec", "input", "length"}, "200000000")},
                   "case_spec.input.length");
  // A stack overflow before (defect 2).
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  ExpectInputError({"replay", Mutated(kWitness, {"z"}, deep)}, "nested deeper than 64");
  ExpectInputError({"search", "--replay", Mutated(kSearchWitness, {"x_runs"}, deep)},
                   "nested deeper than 64");
}

TEST_F(WitnessTest, SearchWitnessWithMismatchedAlphabetsIsBadInput) {
  // "reproduced" before (defect 6).
  Json doc = Json::parse(ReadText(kSearchWitness));
  Json g = doc["g"];
  g["alphabet"] = g["alphabet"].get<int>() + 1;
  g["embedding"].push_back(g["embedding"][0]);
  ExpectInputError({"search", "--replay", Mutated(kSearchWitness, {"g"}, g.dump())}, "alphabet");
  ExpectInputError({"search", "--replay", Mutated(kSearchWitness, {"n"}, "-1")}, ": n:");
  ExpectInputError({"search", "--replay", Mutated(kSearchWitness, {"eps"}, "1e400")}, "eps");
}

}  // namespace
}  // namespace ltsim::hardening
