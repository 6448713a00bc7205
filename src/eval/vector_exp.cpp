// ExpShifted (vector_exp.h): glibc's libmvec exp, chosen once by the CPU's features.
#include "eval/vector_exp.h"

#include <cmath>

#if defined(LTSIM_HAVE_LIBMVEC) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LTSIM_VECTOR_EXP 1
// The x86-64 vector ABI names of libmvec's exp: 8 lanes on AVX-512 ('e'), 4 on AVX2 ('d').
extern "C" __attribute__((target("avx512f"))) __m512d _ZGVeN8v_exp(__m512d);
extern "C" __attribute__((target("avx2"))) __m256d _ZGVdN4v_exp(__m256d);
#endif

namespace ltsim {
namespace {

void ScalarExp(const double* x, double shift, double* out, int n) {
  for (int j = 0; j < n; ++j) out[j] = std::exp(x[j] - shift);
}

#ifdef LTSIM_VECTOR_EXP
__attribute__((target("avx512f"))) void Avx512Exp(const double* x, double shift, double* out,
                                                  int n) {
  const __m512d s = _mm512_set1_pd(shift);
  int j = 0;
  for (; j + 8 <= n; j += 8)
    _mm512_storeu_pd(out + j, _ZGVeN8v_exp(_mm512_sub_pd(_mm512_loadu_pd(x + j), s)));
  ScalarExp(x + j, shift, out + j, n - j);
}

__attribute__((target("avx2"))) void Avx2Exp(const double* x, double shift, double* out, int n) {
  const __m256d s = _mm256_set1_pd(shift);
  int j = 0;
  for (; j + 4 <= n; j += 4)
    _mm256_storeu_pd(out + j, _ZGVdN4v_exp(_mm256_sub_pd(_mm256_loadu_pd(x + j), s)));
  ScalarExp(x + j, shift, out + j, n - j);
}
#endif

std::vector<ExpVariant> Supported() {
  std::vector<ExpVariant> variants;
#ifdef LTSIM_VECTOR_EXP
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) variants.push_back({"avx512", &Avx512Exp});
  if (__builtin_cpu_supports("avx2")) variants.push_back({"avx2", &Avx2Exp});
#endif
  variants.push_back({"scalar", &ScalarExp});
  return variants;
}

const ExpVariant& Chosen() {
  static const ExpVariant choice = Supported().front();
  return choice;
}

}  // namespace

void ExpShifted(const double* x, double shift, double* out, int n) {
  Chosen().fn(x, shift, out, n);
}

const char* ExpShiftedIsa() { return Chosen().isa; }

std::vector<ExpVariant> ExpShiftedVariants() { return Supported(); }

}  // namespace ltsim
