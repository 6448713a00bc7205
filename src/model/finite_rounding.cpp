// The exact rounding decision of `finite` attention (docs/theory.md §8.6).
#include "ltsim/model/finite_rounding.h"

#include <bit>
#include <cmath>
#include <limits>

namespace ltsim {
namespace {

namespace mp = boost::multiprecision;

// 400 bits: m·gap for an integer m ≤ 64 and a 332-bit gap is exact.
using Wide = mp::number<mp::backends::cpp_bin_float<400, mp::backends::digit_base_2>>;

constexpr double kUnit = 0x1p-53;
// The double product log₂(i)·(a_max − a) is within 7 units of roundoff of the exact one (one
// rounding of the difference, at most 4 ulps of glibc's log₂, one of the product): outside 16
// units of p it decides.
constexpr double kFastMargin = 16 * kUnit;
// The 332-bit product is within a few units of 2^−332 of the exact one.
const RoundingReal kSlowMargin = mp::ldexp(RoundingReal(1), -320);

// Whether position is 2^m for an integer m ≥ 1; m is returned.
bool PowerOfTwo(double position, int& m) {
  if (!(position >= 2 && position < 0x1p63) || position != std::floor(position)) return false;
  const auto i = static_cast<std::uint64_t>(position);
  if (!std::has_single_bit(i)) return false;
  m = std::countr_zero(i);
  return true;
}

}  // namespace

bool FiniteGapDropped(const RoundingReal& gap, double position, int bits) {
  if (!(gap > 0) || !(position > 1)) return false;  // w = i^(−gap) ≥ 1 > 2^(−p)
  int m = 0;
  if (PowerOfTwo(position, m)) return Wide(gap) * m >= bits;  // log₂ i = m: exact
  // ln i is irrational for an i that is not a power of two (i^gap = 2^p has no rational solution
  // gap then), so the product is never exactly p; 332 bits decide it unless it lies within
  // 2^(−320) relative of p, where the 332-bit value is taken.
  static const RoundingReal kLn2 = log(RoundingReal(2));
  const RoundingReal product = log(RoundingReal(position)) / kLn2 * gap;
  if (product >= bits * (1 + kSlowMargin)) return true;
  if (product <= bits * (1 - kSlowMargin)) return false;
  return product >= bits;
}

double FiniteLog2Weight(double a, double a_max, double position, int bits) {
  const double log2_w = std::log2(position) * (a - a_max);
  if (!std::isfinite(log2_w))
    return log2_w <= -bits ? -std::numeric_limits<double>::infinity() : log2_w;
  if (log2_w <= -bits * (1 + kFastMargin)) return -std::numeric_limits<double>::infinity();
  if (log2_w > -bits * (1 - kFastMargin)) return log2_w;
  const bool dropped = FiniteGapDropped(RoundingReal(a_max) - RoundingReal(a), position, bits);
  return dropped ? -std::numeric_limits<double>::infinity() : log2_w;
}

bool FiniteKeyDropped(double a, double a_max, double position, int bits) {
  return FiniteLog2Weight(a, a_max, position, bits) == -std::numeric_limits<double>::infinity();
}

std::uint64_t FiniteDropLength(double gap, int bits) {
  if (!(gap > 0) || !std::isfinite(gap) || bits / gap >= 62) return 0;
  auto dropped = [&](std::uint64_t t) {
    return FiniteKeyDropped(-gap, 0.0, static_cast<double>(t), bits);
  };
  std::uint64_t t = static_cast<std::uint64_t>(std::floor(std::exp2(bits / gap)));
  t = std::max<std::uint64_t>(t, 2);
  while (t > 2 && dropped(t - 1)) --t;
  while (!dropped(t)) ++t;
  return t;
}

}  // namespace ltsim
