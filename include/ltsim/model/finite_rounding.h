// The rounding rule of `finite` attention, decided exactly for the logits given
// (docs/model.md §3, docs/theory.md §8.6).
#pragma once

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cstdint>

namespace ltsim {

/// A binary float of 100 decimal digits (332-bit mantissa): holds the exact difference of two
/// 50-digit logits, and log₂ i to far beyond what the decision below needs.
using RoundingReal = boost::multiprecision::cpp_bin_float_100;

/// Whether a `finite` key with logit `a` is dropped at query position i when the largest logit is
/// `a_max` and the layer has p = `bits` bits: w = i^(a − a_max) ≤ 2^(−p), i.e.
///
///     (a_max − a)·ln i ≥ p·ln 2,
///
/// decided for the exact real difference of the two doubles and the exact ln i, not for their
/// rounded product (docs/theory.md §8.6): a double product within 16 ulps of p is re-decided in
/// 332-bit arithmetic (exactly, through rational arithmetic, when i is a power of two).
/// Non-finite inputs keep the double rule (a NaN gap drops nothing).
bool FiniteKeyDropped(double a, double a_max, double position, int bits);

/// The same decision for an exact gap a_max − a ≥ 0 given in RoundingReal (the 50-digit
/// evaluator's logits, whose difference RoundingReal holds exactly).
bool FiniteGapDropped(const RoundingReal& gap, double position, int bits);

/// log₂ i·(a − a_max) as the evaluators compute it, with the decision above: −∞ when the key is
/// dropped, else the double log₂ w (so 2^result is the weight).
double FiniteLog2Weight(double a, double a_max, double position, int bits);

/// The smallest integer length T ≥ 1 at which a key `gap` below the maximum is dropped with
/// p bits (T ≥ 2^(p/gap) in exact arithmetic, decided by FiniteKeyDropped(−gap, 0, T, p));
/// 0 when gap ≤ 0 or when T would exceed 2^63.
std::uint64_t FiniteDropLength(double gap, int bits);

}  // namespace ltsim
