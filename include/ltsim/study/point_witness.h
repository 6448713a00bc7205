// One point of a study (sweep, experiment, tightness) as a self-contained file that replays with
// one command: `ltsim replay FILE` (docs/tightness.md §4, docs/witnesses.md §6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/io/json.h"
#include "ltsim/io/recheck.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// What the point's number is.
///  first-disagreement: T* of (f, g) at ε, searched exactly up to max_length (censored: none
///    found, T* > max_length); x is the string at T*.
///  needed-length: the smallest grid n at which the frequency simulator meets ε on x for
///    (f, g) (NeededLength; censored: none below |x|); with a seeded simulator (`method`
///    markov or blocks, version 2) the smallest grid n at which f's z meets ε for every one
///    of `sim_seeds` seeds (SeededNeededLength of f alone; g is f).
struct PointWitness {
  std::string kind;   ///< "first-disagreement" or "needed-length"
  std::string study;  ///< "tightness", "sweep", "experiment"
  std::string label;  ///< what the number is: "lower side", "simulator on found x", ...
  io::Json context = io::Json::object();  ///< where the point comes from: parameter, value, seed, …
  Transformer f, g;
  double eps = 0.0;
  std::uint64_t max_length = 0;  ///< first-disagreement: the N searched
  std::vector<Run> x;            ///< the string (run-length)
  std::uint64_t value = 0;       ///< T* or needed n (the cap when censored)
  bool censored = false;
  /// first-disagreement, not censored: f and g on x in 50 digits and whether the gap > ε.
  std::vector<double> f_x, g_x;
  std::string gap_text;  ///< the 50-digit gap (decimal text), "" when not rechecked
  bool recheck_exceeds = false;
  /// needed-length only (version 2): the simulator, "frequency" (NeededLength of (f, g)) or a
  /// seeded one, "markov" or "blocks" (SeededNeededLength of f with `sim_seeds` seeds derived
  /// from `sim_seed`).
  std::string method = "frequency";
  int sim_seeds = 0;
  std::uint64_t sim_seed = 0;
  /// needed-length: the 50-digit decisions that fix n (the frequency simulator, one-layer f
  /// and g): max(sim_f, sim_g) ≤ ε at n (when n < |x|) and > ε at the grid point below.
  struct Decision {
    std::uint64_t n = 0;
    std::string max_sim;  ///< 50-digit max(sim_f, sim_g), 40 significant digits; "" if no z
    bool meets = false;   ///< max_sim ≤ ε
  };
  std::vector<Decision> decisions;
  /// needed-length: agrees, differs or skipped (kRecheckValueNames); kNone: no recheck recorded
  RecheckStatus recheck_status = RecheckStatus::kNone;
  std::string recheck_note;
};

/// Rechecks the point in 50 digits. first-disagreement: fills f_x, g_x, gap_text and
/// recheck_exceeds from x (one-layer pairs). needed-length: fills decisions, recheck_status
/// (agrees when every decision comes out as the recorded n needs) and recheck_note; skipped
/// for a seeded simulator or a model that is not one-layer.
void RecheckPoint(PointWitness& w);

/// Writes `stem`.point.json (format ltsim-point: version 1 for first-disagreement, version 2
/// for needed-length) and beside it `stem`.f.json, `stem`.g.json (ordinary model files) and
/// `stem`.x.txt (run-length text); returns the point file's path. InputError when a file
/// cannot be written.
std::string WritePointWitness(const PointWitness& w, const std::string& stem);

/// Longest string and largest searched length a point file may hold (replay evaluates them).
inline constexpr std::uint64_t kMaxPointLength = 100'000'000;

/// Reads a point file (version 1 or 2) strictly (InputError naming the file and key): unknown or
/// missing keys, version-2 keys in a version-1 file, integers out of range, f and g on
/// different alphabets, tokens outside the alphabet, a string or max_length over
/// kMaxPointLength, a seeded simulator with g different from f.
PointWitness ReadPointWitness(const std::string& path);

struct PointReplay {
  std::uint64_t value = 0;  ///< recomputed
  bool censored = false;
  /// value and censoring equal the recorded ones, and the recheck (first-disagreement: the
  /// 50-digit gap; needed-length: the recheck's status)
  bool reproduced = false;
  std::string detail;
  /// Recorded results (x, value, censored, the recheck block) that differ from the recomputed
  /// ones (fuzz/recorded.h); `reproduced` is false when any does.
  std::vector<std::string> differences;
};

/// Recomputes the point's number from the file alone.
PointReplay ReplayPoint(const PointWitness& w);

}  // namespace ltsim
