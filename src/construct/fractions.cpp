// The smallest denominator of a fraction in an open interval, exactly (Stern–Brocot descent).
#include "ltsim/construct/fractions.h"

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

using boost::multiprecision::cpp_int;

cpp_int Floor(const Rational& x) {  // x ≥ 0
  return boost::multiprecision::numerator(x) / boost::multiprecision::denominator(x);
}

// The simplest fraction p/q in (lo, hi), hi = +∞ when `unbounded`; lo ≥ 0.
void Simplest(const Rational& lo, const Rational& hi, bool unbounded, cpp_int& p, cpp_int& q) {
  const cpp_int k = Floor(lo);
  if (unbounded || Rational(k + 1) < hi) {  // the integer k + 1 > lo lies inside
    p = k + 1;
    q = 1;
    return;
  }
  // k ≤ lo < hi ≤ k + 1: x = k + 1/y with y in (1/(hi − k), 1/(lo − k)), +∞ when lo = k.
  const Rational lo_k = lo - k, hi_k = hi - k;
  cpp_int p2, q2;
  if (lo_k == 0)
    Simplest(1 / hi_k, Rational(0), true, p2, q2);
  else
    Simplest(1 / hi_k, 1 / lo_k, false, p2, q2);
  p = k * p2 + q2;  // x = k + q2/p2
  q = p2;
}

}  // namespace

std::uint64_t SmallestDenominator(const Rational& lo, const Rational& hi) {
  LTSIM_CHECK(lo >= 0 && lo < hi);
  cpp_int p, q;
  Simplest(lo, hi, false, p, q);
  if (q > cpp_int(std::uint64_t{1} << 62)) return 0;
  return q.convert_to<std::uint64_t>();
}

}  // namespace ltsim
