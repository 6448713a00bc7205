// Self-contained witness files of refutations, and their replay (`ltsim replay`).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ltsim/fuzz/case_runner.h"

namespace ltsim {

/// A refutation's evidence as JSON: format "ltsim-witness", version 1, the property, the
/// campaign seed and case id, the whole case (both models inline, x as its generator spec,
/// method, n, ℓ, the simulator's and test function's seeds, ε, C), the numbers observed and
/// z in run-length form ([[token, count], …]), and the high-precision `recheck` block
/// (RecheckJson) of that property.
nlohmann::ordered_json WitnessJson(const CaseSpec& spec, const CaseResult& result,
                                   Property property, std::uint64_t campaign_seed);

/// A recheck as JSON: `status` (confirmed, unconfirmed, skipped, none); for skipped/none the
/// `reason`; otherwise `digits` (50), `observed` and `bound` as 40-significant-digit decimal
/// strings, `note` (what was taken from the double run) and `values` {f_x, g_x, f_z, g_z}.
nlohmann::ordered_json RecheckJson(const Recheck& recheck);

/// One label for case lines: "confirmed", "unconfirmed" or "skipped (reason)".
std::string RecheckLabel(const Recheck& recheck);

/// "<16 hex digits of the FNV-1a hash of the JSON text>.witness.json": named by content.
std::string WitnessFileName(const nlohmann::ordered_json& witness);

/// "<16 hex digits of Fnv1a(text)><suffix>": the content-hash name of any witness file.
std::string ContentHashFileName(const std::string& text, const std::string& suffix);

/// A witness read back: the case and the property it refuted.
struct Witness {
  CaseSpec spec;
  Property property = Property::kSandwich;
  double recorded_ratio = 0.0;  ///< observed/bound when it was found
  /// The recorded recheck status ("confirmed", "skipped (\"…\")"); empty for witnesses
  /// written before rechecks existed.
  std::string recorded_recheck;
  std::uint64_t campaign_seed = 0;  ///< `seed`, as recorded (0 when absent)
  /// The file's recorded results (observed, bound, ratio, numbers, recheck, z), as written.
  nlohmann::ordered_json recorded = nlohmann::ordered_json::object();
};

/// Parses a witness file strictly (io/json.h: InputError naming the file and key path): also
/// a witness that cannot run (an unknown method, models of different alphabets or outputs,
/// an input alphabet larger than the models', n = 0, an input over the length limit).
Witness ReadWitness(const std::string& path);
/// The same, from a parsed document (`source` names it in errors).
Witness WitnessFromJson(const nlohmann::ordered_json& doc, const std::string& source);

/// Re-runs the witness's case (RunCase, so with the high-precision recheck); true when its
/// property is still refuted after the recheck (confirmed or skipped, see
/// result.outcome(property).recheck). `result` receives the fresh numbers. InputError when
/// the case cannot run or does not check the property: no verdict either way.
bool Reproduces(const Witness& witness, CaseResult& result);

/// Every recorded result of the witness (observed, bound, ratio, the numbers block, the recheck
/// block with its 50-digit texts, z) that differs from the one recomputed in `result`
/// (CompareRecorded, fuzz/recorded.h); empty when all agree. A field the file does not record is
/// not compared.
std::vector<std::string> WitnessDifferences(const Witness& witness, const CaseResult& result);

}  // namespace ltsim
