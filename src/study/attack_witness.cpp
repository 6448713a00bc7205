// Lemma 5.3 point witnesses: write, read strictly, replay (docs/tightness.md §5).
#include "ltsim/study/attack_witness.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "ltsim/core/error.h"
#include "ltsim/io/json.h"
#include "ltsim/io/output_file.h"
#include "ltsim/sim/simulator.h"

namespace ltsim {
namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kFormat = "ltsim-attack-point";
constexpr int kVersion = 1;
constexpr std::uint64_t kMaxLength = 100'000'000;

bool Same(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(a)); }

}  // namespace

std::string WriteAttackWitness(const AttackWitness& w, const std::string& stem) {
  const AttackOptions& o = w.options;
  Json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["kind"] = "statistic-error";
  j["study"] = w.study;
  j["label"] = w.label;
  j["context"] = w.context;
  j["input"] = Json::parse(InputSpecToJson(w.input).dump());
  j["attack"] = {{"method", o.method},
                 {"length", o.length},
                 {"block_length", o.block_length},
                 {"alphabet", o.alphabet},
                 {"locality", o.locality},
                 {"lipschitz", o.lipschitz},
                 {"iterations", o.iterations},
                 {"restarts", o.restarts},
                 {"random_functions", o.random_functions},
                 {"seed", o.seed}};
  j["error"] = w.error;
  j["certified"] = w.certified;
  j["censored"] = w.censored;
  j["replay"] = "ltsim replay THIS_FILE";  // no directory: the same bytes wherever written
  const std::string path = stem + ".attack.json";
  io::WriteFileAtomically(path, j.dump(1) + "\n");
  return path;
}

AttackWitness ReadAttackWitness(const std::string& path) {
  const io::Json j = io::ReadJsonFile(path, "attack point witness");
  const io::JsonReader r(j, path);
  r.Keys({"format", "version", "kind", "study", "label", "context", "input", "attack", "error",
          "certified", "censored", "replay"},
         {"format", "version", "kind", "input", "attack", "error", "certified", "censored"});
  if (r.At("format").String() != kFormat) r.At("format").Fail("must be \"ltsim-attack-point\"");
  r.At("version").Int(kVersion, kVersion);
  if (r.At("kind").String() != "statistic-error") r.At("kind").Fail("must be statistic-error");
  AttackWitness w;
  if (r.Has("study")) w.study = r.At("study").String();
  if (r.Has("label")) w.label = r.At("label").String();
  if (r.Has("context")) {
    if (!r.At("context").json().is_object()) r.At("context").Fail("must be an object");
    w.context = r.At("context").json();
  }
  if (r.Has("replay")) r.At("replay").String();
  w.input = InputSpecFromJson(nlohmann::json::parse(r.At("input").json().dump()), path + ": input");
  if (w.input.length > kMaxLength || w.input.length < 2)
    r.At("input").Fail("length must be in [2, 10^8]");
  const io::JsonReader a = r.At("attack");
  a.Keys({"method", "length", "block_length", "alphabet", "locality", "lipschitz", "iterations",
          "restarts", "random_functions", "seed"},
         {"method", "length", "block_length", "alphabet", "locality", "lipschitz", "iterations",
          "restarts", "random_functions", "seed"});
  AttackOptions& o = w.options;
  o.method = a.At("method").String();
  if (!SimulatorHas(o.method, &SimulatorTraits::model_free))
    a.At("method").Fail("must be " + JoinNames(SimulatorNamesWith(&SimulatorTraits::model_free)) +
                        " (model-free schemes)");
  o.length = a.At("length").UInt(1, w.input.length - 1);
  o.block_length = a.At("block_length").UInt(0, w.input.length);
  o.alphabet = static_cast<int>(a.At("alphabet").Int(1, 64));
  if (o.alphabet != w.input.alphabet)
    a.At("alphabet").Fail("differs from the input's alphabet " + std::to_string(w.input.alphabet));
  o.locality = static_cast<int>(a.At("locality").Int(0, 11));
  o.lipschitz = a.At("lipschitz").Number(0.0, 1e12);
  o.iterations = static_cast<int>(a.At("iterations").Int(0, 1'000'000));
  o.restarts = static_cast<int>(a.At("restarts").Int(1, 1000));
  o.random_functions = static_cast<int>(a.At("random_functions").Int(0, 1000));
  o.seed = a.At("seed").UInt();
  w.error = r.At("error").Number(0.0);
  w.certified = r.At("certified").Number(0.0);
  w.censored = r.At("censored").Bool();
  return w;
}

AttackReplay ReplayAttack(const AttackWitness& w) {
  const auto x = MakeInput(w.input);
  const AttackResult a = AttackStatistic(*x, w.options);
  AttackReplay r;
  r.error = a.adversarial;
  r.certified = a.certified;
  r.censored = a.adversarial <= 1e-12;
  r.reproduced =
      Same(r.error, w.error) && Same(r.certified, w.certified) && r.censored == w.censored;
  return r;
}

}  // namespace ltsim
