// ExpShifted (the second layer's softmax weights) against std::exp, in every implementation this
// machine can run.
#include "eval/vector_exp.h"

#include <gtest/gtest.h>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace ltsim {
namespace {

// Distance in units in the last place of b (both normal and positive).
double Ulps(double a, double b) {
  return std::abs(a - b) / (std::nextafter(b, std::numeric_limits<double>::infinity()) - b);
}

// glibc bounds libmvec's exp by 4 ulp of the exact value and its scalar exp by 1, so the two
// differ by at most 5 ulp where the result is normal (x − shift ≥ −708). The arguments are
// those of softmax weights, x ≤ shift; lengths not a multiple of 8 exercise the scalar tail.
TEST(ExpShifted, EveryVariantWithinFiveUlpOfStdExp) {
  const std::vector<ExpVariant> variants = ExpShiftedVariants();
  EXPECT_STREQ(variants.front().isa, ExpShiftedIsa());
  for (const ExpVariant& variant : variants) {
    boost::random::mt19937_64 engine(11);
    boost::random::uniform_real_distribution<double> wide(-708.0, 0.0), narrow(-1.0, 0.0);
    double worst = 0.0;
    for (int n : {1, 3, 4, 7, 8, 9, 255, 256, 4099}) {
      std::vector<double> x(n), out(n);
      for (int j = 0; j < n; ++j) x[j] = 3.5 + (j % 2 == 0 ? wide(engine) : narrow(engine));
      x[0] = 3.5;  // the maximum itself: weight exactly 1
      variant.fn(x.data(), 3.5, out.data(), n);
      for (int j = 0; j < n; ++j) worst = std::max(worst, Ulps(out[j], std::exp(x[j] - 3.5)));
      EXPECT_EQ(out[0], 1.0) << variant.isa;
    }
    std::printf("ExpShifted %s: max %.2f ulp from std::exp\n", variant.isa, worst);
    EXPECT_LE(worst, 5.0) << variant.isa;
  }
}

// In place (out == x), as the second layer may call it.
TEST(ExpShifted, InPlaceEqualsOutOfPlace) {
  std::vector<double> x(37), out(37);
  for (int j = 0; j < 37; ++j) x[j] = -0.37 * j;
  ExpShifted(x.data(), 0.0, out.data(), 37);
  ExpShifted(x.data(), 0.0, x.data(), 37);
  EXPECT_EQ(x, out);
}

}  // namespace
}  // namespace ltsim
