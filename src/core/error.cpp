// Invariant failures abort with the location: they are bugs of ours, not bad input.
#include "ltsim/core/error.h"

#include <cstdio>
#include <cstdlib>

namespace ltsim {

void CheckFailed(const char* file, int line, const char* condition) {
  std::fprintf(stderr, "ltsim: internal check failed at %s:%d: %s\n", file, line, condition);
  std::abort();
}

}  // namespace ltsim
