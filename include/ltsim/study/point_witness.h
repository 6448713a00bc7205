// One point of a study (sweep, experiment, tightness) as a self-contained file that replays with
// one command: `ltsim tightness --replay FILE` (docs/tightness.md §4).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/io/json.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// What the point's number is.
///  first-disagreement: T* of (f, g) at ε, searched exactly up to max_length (censored: none
///    found, T* > max_length); x is the string at T*.
///  needed-length: the smallest grid n at which the frequency simulator meets ε on x for
///    (f, g) (NeededLength; censored: none below |x|).
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
};

/// Fills f_x, g_x, gap_text and recheck_exceeds from x in 50 digits (one-layer pairs).
void RecheckPoint(PointWitness& w);

/// Writes `stem`.point.json (format ltsim-point, version 1) and beside it `stem`.f.json,
/// `stem`.g.json (ordinary model files) and `stem`.x.txt (run-length text); returns the
/// point file's path. InputError when a file cannot be written.
std::string WritePointWitness(const PointWitness& w, const std::string& stem);

/// Longest string and largest searched length a point file may hold (replay evaluates them).
inline constexpr std::uint64_t kMaxPointLength = 100'000'000;

/// Reads a point file strictly (InputError naming the file and key): unknown or missing keys,
/// integers out of range, f and g on different alphabets, tokens outside the alphabet, a
/// string or max_length over kMaxPointLength.
PointWitness ReadPointWitness(const std::string& path);

struct PointReplay {
  std::uint64_t value = 0;  ///< recomputed
  bool censored = false;
  bool reproduced = false;  ///< value and censoring equal the recorded ones (and the recheck)
  std::string detail;
};

/// Recomputes the point's number from the file alone.
PointReplay ReplayPoint(const PointWitness& w);

}  // namespace ltsim
