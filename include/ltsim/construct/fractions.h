// Exact rational arithmetic for closed forms whose T* is the smallest denominator of a fraction
// in an interval (docs/families.md, docs/tightness.md §2).
#pragma once

#include <boost/multiprecision/cpp_int.hpp>
#include <cstdint>

namespace ltsim {

/// An exact rational; constructed from a double it holds that double's value exactly.
using Rational = boost::multiprecision::cpp_rational;

/// The smallest q ≥ 1 such that some p/q (p an integer) lies in the open interval (lo, hi),
/// 0 ≤ lo < hi, in exact arithmetic: the Stern–Brocot (continued fraction) descent, whose
/// simplest fraction in an interval has both the smallest numerator and the smallest
/// denominator. 0 when that q exceeds 2^62.
std::uint64_t SmallestDenominator(const Rational& lo, const Rational& hi);

}  // namespace ltsim
