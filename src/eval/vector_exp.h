// e^(x − shift) over an array, with glibc's vector exp where the CPU has AVX2 or AVX-512.
#pragma once

#include <vector>

namespace ltsim {

/// out[j] = exp(x[j] − shift) for j < n (x and out may be the same array). On x86-64 with
/// libmvec (glibc's vector math library) and AVX-512 or AVX2 this is its 8- or 4-wide exp,
/// which glibc bounds by 4 ulp (tests/unit/eval/vector_exp_test.cpp measures it against
/// std::exp), so the last bits of a result may differ between machines of different ISA;
/// elsewhere std::exp.
void ExpShifted(const double* x, double shift, double* out, int n);

/// Which implementation ExpShifted uses on this machine: "avx512", "avx2" or "scalar".
const char* ExpShiftedIsa();

/// Every implementation this machine can run, the chosen one first (for tests).
struct ExpVariant {
  const char* isa;
  void (*fn)(const double* x, double shift, double* out, int n);
};
std::vector<ExpVariant> ExpShiftedVariants();

}  // namespace ltsim
