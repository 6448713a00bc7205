// Input distributions for x: the spec, its checks and JSON, and the explicit registry of
// families (one file each in src/gen/inputs/), seeded and replayable from the spec alone.
#include "ltsim/gen/input_generator.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>
#include <vector>

#include "gen/input_families.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

constexpr std::uint64_t kMaxLength = 1000000000;
constexpr std::uint64_t kStreamedUniform = std::uint64_t{1} << 24;
using inputs::kSparseWindow;

// The registry: every family and its draw (its name is in kInputKindNames, the one table).
struct InputFamily {
  InputKind kind;
  inputs::FamilyDraw draw;
};

constexpr InputFamily kFamilies[] = {
    {InputKind::kUniform, inputs::UniformRuns},   {InputKind::kDirichlet, inputs::DirichletRuns},
    {InputKind::kSparse, inputs::SparseRuns},     {InputKind::kMarkov, inputs::MarkovRuns},
    {InputKind::kPeriodic, inputs::PeriodicRuns}, {InputKind::kStress, inputs::StressRuns},
};

[[noreturn]] void Fail(const std::string& where, const std::string& key, const std::string& rule) {
  throw InputError(where + ": " + key + ": " + rule);
}

void CheckInteger(long long value, long long min, long long max, const std::string& where,
                  const std::string& key) {
  if (value < min || value > max) {
    Fail(where, key,
         "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
             std::to_string(value));
  }
}

std::string NumberText(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

void CheckReal(double value, double min, double max, bool open_min, const std::string& where,
               const std::string& key) {
  const bool above = open_min ? value > min : value >= min;
  if (!std::isfinite(value) || !above || value > max) {
    Fail(where, key,
         std::string("must be finite, ") + (open_min ? "> " : ">= ") + NumberText(min) +
             " and <= " + NumberText(max) + ", got " + NumberText(value));
  }
}

// Every field is checked whatever the kind, so a spec is valid or not on its own.
void ValidateInputSpec(const InputSpec& spec, const std::string& where) {
  CheckInteger(static_cast<long long>(std::min<std::uint64_t>(spec.length, kMaxLength + 1)), 1,
               kMaxLength, where, "length");
  CheckInteger(spec.alphabet, 1, kMaxAlphabet, where, "alphabet");
  CheckReal(spec.alpha, 0.0, 1e6, /*open_min=*/true, where, "alpha");
  CheckInteger(spec.parents, 1, kSparseWindow, where, "parents");
  CheckReal(spec.noise, 0.0, 1.0, /*open_min=*/false, where, "noise");
  CheckInteger(spec.pattern, 1, 1 << 20, where, "pattern");
  CheckInteger(static_cast<long long>(std::min<std::uint64_t>(spec.run_length, kMaxLength + 1)), 1,
               kMaxLength, where, "run_length");
}

// "kind:length=…,alphabet=…,seed=…" plus the parameters the kind uses.
std::string SourceName(const InputSpec& spec, const char* variant) {
  std::string name =
      std::string(InputKindName(spec.kind)) + ":length=" + std::to_string(spec.length) +
      ",alphabet=" + std::to_string(spec.alphabet) + ",seed=" + std::to_string(spec.seed);
  if (spec.kind == InputKind::kDirichlet || spec.kind == InputKind::kMarkov)
    name += ",alpha=" + NumberText(spec.alpha);
  if (spec.kind == InputKind::kSparse) name += ",parents=" + std::to_string(spec.parents);
  if (spec.kind == InputKind::kPeriodic) name += ",pattern=" + std::to_string(spec.pattern);
  if (spec.kind == InputKind::kSparse || spec.kind == InputKind::kPeriodic)
    name += ",noise=" + NumberText(spec.noise);
  if (AdaptsToLength(spec.kind)) name += ",run_length=" + std::to_string(spec.run_length);
  if (variant != nullptr) name += std::string(",variant=") + variant;
  return name;
}

constexpr const char* kKeys[] = {"kind",    "length", "alphabet", "seed",      "alpha",
                                 "parents", "noise",  "pattern",  "run_length"};

const nlohmann::json& Field(const nlohmann::json& json, const char* key, const std::string& where) {
  const auto it = json.find(key);
  if (it == json.end()) Fail(where, key, "missing key");
  return *it;
}

long long IntegerField(const nlohmann::json& json, const char* key, const std::string& where) {
  const nlohmann::json& value = Field(json, key, where);
  if (!value.is_number_integer()) Fail(where, key, "must be an integer");
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > (1ULL << 62))
    Fail(where, key, "is out of range");
  return value.get<long long>();
}

std::uint64_t SeedField(const nlohmann::json& json, const std::string& where) {
  const nlohmann::json& value = Field(json, "seed", where);
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer() && value.get<long long>() >= 0)
    return static_cast<std::uint64_t>(value.get<long long>());
  Fail(where, "seed", "must be an integer between 0 and 2^64 - 1");
}

double RealField(const nlohmann::json& json, const char* key, const std::string& where) {
  const nlohmann::json& value = Field(json, key, where);
  if (!value.is_number()) Fail(where, key, "must be a number");
  return value.get<double>();
}

InputKind KindField(const nlohmann::json& json, const std::string& where) {
  const nlohmann::json& value = Field(json, "kind", where);
  if (!value.is_string()) Fail(where, "kind", "must be a string");
  try {
    return ParseInputKind(value.get<std::string>());
  } catch (const InputError& error) {
    Fail(where, "kind", error.what());
  }
}

void CheckKeys(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object()) throw InputError(where + ": must be a JSON object");
  for (const auto& [key, value] : json.items()) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      Fail(where, key,
           "unknown key (expected kind, length, alphabet, seed, alpha, parents, noise, pattern, "
           "run_length)");
    }
  }
}

}  // namespace

const char* InputKindName(InputKind kind) { return kInputKindNames.Name(kind); }

InputKind ParseInputKind(const std::string& name) { return kInputKindNames.Parse(name); }

// The engine is seeded by StreamSeed(seed, kind name), so kinds sharing a seed are independent.
// The source's name is SourceName's "kind:length=…,…", ending in ",variant=V" for stress
// strings (V = rare-types, suffix-ties, mixed-scale or long-runs).
std::unique_ptr<Source> MakeInput(const InputSpec& spec) {
  ValidateInputSpec(spec, "input spec");
  if (AdaptsToLength(spec.kind))
    return inputs::MakeRunsSource(spec, spec.kind != InputKind::kStride, SourceName(spec, nullptr));
  // Beyond 2^24 tokens a uniform x is streamed from the i.i.d. generator (another string than the
  // in-memory draw of the same seed, never held in memory).
  if (spec.kind == InputKind::kUniform && spec.length > kStreamedUniform)
    return MakeIidSource(spec.length, spec.alphabet, StreamSeed(spec.seed, "uniform"), {});
  FuzzEngine engine(StreamSeed(spec.seed, InputKindName(spec.kind)));
  for (const InputFamily& family : kFamilies) {
    if (family.kind != spec.kind) continue;
    std::string variant;
    inputs::Runs runs = family.draw(spec, engine, variant);
    return MakeRunSource(std::move(runs),
                         SourceName(spec, variant.empty() ? nullptr : variant.c_str()));
  }
  CheckFailed(__FILE__, __LINE__, "unknown input kind");
}

nlohmann::json InputSpecToJson(const InputSpec& spec) {
  nlohmann::json json = {{"kind", InputKindName(spec.kind)},
                         {"length", spec.length},
                         {"alphabet", spec.alphabet},
                         {"seed", spec.seed},
                         {"alpha", spec.alpha},
                         {"parents", spec.parents},
                         {"noise", spec.noise},
                         {"pattern", spec.pattern}};
  if (AdaptsToLength(spec.kind)) json["run_length"] = spec.run_length;
  return json;
}

InputSpec InputSpecFromJson(const nlohmann::json& json, const std::string& where) {
  CheckKeys(json, where);
  InputSpec spec;
  spec.kind = KindField(json, where);
  const long long length = IntegerField(json, "length", where);
  CheckInteger(length, 1, kMaxLength, where, "length");
  spec.length = static_cast<std::uint64_t>(length);
  const long long alphabet = IntegerField(json, "alphabet", where);
  CheckInteger(alphabet, 1, kMaxAlphabet, where, "alphabet");
  spec.alphabet = static_cast<int>(alphabet);
  spec.seed = SeedField(json, where);
  spec.alpha = RealField(json, "alpha", where);
  const long long parents = IntegerField(json, "parents", where);
  CheckInteger(parents, 1, kSparseWindow, where, "parents");
  spec.parents = static_cast<int>(parents);
  spec.noise = RealField(json, "noise", where);
  const long long pattern = IntegerField(json, "pattern", where);
  CheckInteger(pattern, 1, 1 << 20, where, "pattern");
  spec.pattern = static_cast<int>(pattern);
  if (json.contains("run_length")) {  // optional: only the run families write it
    const long long run = IntegerField(json, "run_length", where);
    CheckInteger(run, 1, kMaxLength, where, "run_length");
    spec.run_length = static_cast<std::uint64_t>(run);
  }
  ValidateInputSpec(spec, where);
  return spec;
}

}  // namespace ltsim
