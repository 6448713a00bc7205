// LTSIM_KERNEL_CLONES: compile a function for AVX-512, AVX2 and the baseline ISA, the copy
// chosen at load time (glibc's ifunc; elsewhere one copy). The files using it are compiled
// without FMA contraction (CMakeLists.txt), so code of elementwise + and · in a fixed order
// gives the same bits in every copy.
#pragma once

#include <cstddef>  // defines __GLIBC__ through <features.h> on glibc

#if defined(__x86_64__) && defined(__GNUC__) && defined(__GLIBC__)
#define LTSIM_KERNEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LTSIM_KERNEL_CLONES
#endif
