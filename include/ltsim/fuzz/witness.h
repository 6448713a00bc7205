// Self-contained witness files of refutations, and their replay (`ltsim replay`).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "ltsim/fuzz/case_runner.h"

namespace ltsim {

/// A refutation's evidence as JSON: format "ltsim-witness", version 1, the property, the
/// campaign seed and case id, the whole case (both models inline, x as its generator spec,
/// method, n, ℓ, the simulator's and test function's seeds, ε, C), the numbers observed and
/// z in run-length form ([[token, count], …]).
nlohmann::ordered_json WitnessJson(const CaseSpec& spec, const CaseResult& result,
                                   Property property, std::uint64_t campaign_seed);

/// "<16 hex digits of the FNV-1a hash of the JSON text>.witness.json": named by content.
std::string WitnessFileName(const nlohmann::ordered_json& witness);

/// A witness read back: the case and the property it refuted.
struct Witness {
  CaseSpec spec;
  Property property = Property::kSandwich;
  double recorded_ratio = 0.0;  ///< observed/bound when it was found
};

/// Parses a witness file strictly (InputError naming the file and key).
Witness ReadWitness(const std::string& path);

/// Re-runs the witness's case; true when its property is still refuted. `result` receives
/// the fresh numbers.
bool Reproduces(const Witness& witness, CaseResult& result);

}  // namespace ltsim
