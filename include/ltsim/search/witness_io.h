// Search witnesses as corpus files: a high-precision recheck, content-hash names, save and replay
// (docs/witnesses.md §3–§4, docs/design.md §5).
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ltsim/io/recheck.h"
#include "ltsim/search/search.h"

namespace ltsim {

/// How close the double objective must be to the high-precision one to "agree" at least:
/// 1e-9 × max(1, |precise|); a decision that flips between the two (a hardmax tie, a finite key
/// dropped, a needed-length step) moves the objective by far more. For sim-ratio and
/// sim-over-eta the tolerance is the larger of that and the double computation's own rounding
/// (1024 ulps of the outputs' size M in sim, of 1 in η): 2u·M/ε for sim-ratio and
/// |objective|·2u·(M/sim + 1/η) for sim-over-eta, u = 1024·2^−53, since a near-copy z makes sim
/// and η differences of nearly equal numbers. The witness records the tolerance used.
inline constexpr double kSearchRecheckTolerance = 1e-9;

/// Tolerance of a replay (as `ltsim search --replay`): |value − stored| ≤ 1e-12·max(1, |stored|).
inline constexpr double kSearchReplayTolerance = 1e-12;

/// The objective of a search candidate recomputed in high precision (eval/precise.h, 50 digits).
/// sim-ratio and sim-over-eta: the `frequency` simulator's z at |z| = n (built in double, as
/// the search builds it), then f(x), f(z), g(x), g(z) — and for sim-over-eta η_achieved per model
/// — in PreciseReal; L(f), L(g) are the double spectral-norm constants. needed-length: the
/// binary search's two deciding comparisons max(sim_f, sim_g) ≤ ε are redone in high precision
/// at the needed n (must hold, unless n = |x|) and at the grid point below it (must fail); the
/// objective's denominator, frequency-length at the pair's constants, is taken from double
/// (`needed`, the length itself, the same without a denominator). x is the candidate's
/// explicit runs when it has them, else its spec's string.
struct SearchRecheck {
  SearchObjective objective = SearchObjective::kSimRatio;
  /// kAgrees (|value − precise| ≤ `tolerance`; for needed-length: both
  /// decisions agree), kDiffers, or kSkipped (no z could be built; `note` says why).
  RecheckStatus status = RecheckStatus::kNone;
  double value = std::numeric_limits<double>::quiet_NaN();  ///< EvaluateObjective in double
  std::string precise_text;  ///< the precise objective, 40 significant digits
  double precise = std::numeric_limits<double>::quiet_NaN();  ///< it, rounded to double
  std::uint64_t z_length = 0;  ///< |z| of the sims recorded below (needed-length: at n)
  std::vector<std::string> f_x, g_x, f_z, g_z;  ///< precise outputs, 40 digits
  /// |value − precise| allowed for "agrees" (sim objectives; see kSearchRecheckTolerance).
  double tolerance = kSearchRecheckTolerance;
  std::string note;

  bool agrees() const { return status == RecheckStatus::kAgrees; }
};

/// Rechecks `candidate` under options.objective, options.eps and options.n. Pure; any thread.
SearchRecheck RecheckSearchCandidate(const SearchOptions& options,
                                     const SearchCandidate& candidate);

/// The `recheck` block of a saved witness: objective, status, value, precise (text), digits
/// (50), tolerance, z_length, values {f_x, g_x, f_z, g_z}, note.
nlohmann::json SearchRecheckToJson(const SearchRecheck& recheck);

/// "<16 hex digits of the FNV-1a hash of witness.dump()>.search.json" (as WitnessFileName of
/// fuzz witnesses): the name is a function of the content, recheck included.
std::string SearchWitnessFileName(const nlohmann::json& witness);

/// SearchWitnessToJson(options, candidate) plus its `recheck` block. InputError when the
/// candidate's objective is not finite (nothing to replay).
nlohmann::json SearchWitnessWithRecheck(const SearchOptions& options,
                                        const SearchCandidate& candidate);

/// What SaveSearchWitness wrote: the file and the recheck recorded in it (the caller formats
/// these; it never reads the file back).
struct SavedSearchWitness {
  std::string path;
  SearchRecheck recheck;
};

/// Rechecks and writes the witness (JSON indented by 2, newline-terminated). `dir_or_path`: an
/// existing directory gets DIR/SearchWitnessFileName(…); anything else is the file's path.
/// InputError (naming the path) when it cannot write, or for a non-finite objective.
SavedSearchWitness SaveSearchWitness(const std::string& dir_or_path, const SearchOptions& options,
                                     const SearchCandidate& candidate);

/// Reads a search witness with or without a `recheck` block: the strict SearchWitnessFromJson
/// on the rest. InputError naming the path and key. `recheck_status` (optional) receives the
/// block's status (kRecheckValueNames), or kNone when the file has none.
SearchWitness ReadSearchWitness(const std::string& path, RecheckStatus* recheck_status = nullptr,
                                nlohmann::json* recheck = nullptr);
/// The same from text (io::ParseJson: depth and number checks); `source` names it in errors.
/// `recheck`, when given, receives the recorded recheck block (null when there is none).
SearchWitness SearchWitnessFromText(const std::string& text, const std::string& source,
                                    RecheckStatus* recheck_status = nullptr,
                                    nlohmann::json* recheck = nullptr);

/// What a replay found.
struct SearchReplay {
  SearchWitness witness;
  double value = std::numeric_limits<double>::quiet_NaN();  ///< the objective now (double)
  double stored = std::numeric_limits<double>::quiet_NaN();
  bool same_value = false;  ///< |value − stored| ≤ kSearchReplayTolerance·max(1, |stored|)
  SearchRecheck recheck;    ///< recomputed now
  RecheckStatus recorded_recheck_status = RecheckStatus::kNone;  ///< kNone: the file had none
  /// Every field of the recorded recheck block that differs from the recomputed one (value,
  /// the 50-digit texts, tolerance, z_length, note, status; fuzz/recorded.h).
  std::vector<std::string> differences;
  /// same_value, the fresh recheck's status is the recorded one (kAgrees when the file has no
  /// recheck block) and no recorded recheck field differs: the witness reproduces.
  bool reproduced = false;
};

/// Re-evaluates a witness file (double objective and high-precision recheck).
SearchReplay ReplaySearchWitness(const std::string& path);

}  // namespace ltsim
