// `ltsim tightness --family-dir` (docs/tightness.md §7).
#pragma once

#include "ltsim/study/tightness.h"

namespace ltsim {

/// One row over the user's family o.family_dir: each member's T* by the exact threshold (meta's
/// T* checked, never used), the upper side the construction's certified length at the member's
/// constants, the paper's exponent the least-squares slope of the registry's thm4.1-length at
/// the members' constants, the verdict as the built-in rows'. Witnesses under out/family/.
TightnessRow RunUserFamilyRow(const TightnessOptions& o);

}  // namespace ltsim
