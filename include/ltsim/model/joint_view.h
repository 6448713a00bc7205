// The joint view of several models: one type space fine enough for all of them
// (docs/theory.md §2.4).
#pragma once

#include <vector>

#include "ltsim/model/transformer.h"

namespace ltsim {

/// The joint view of several models: one type space fine enough for all of them.
struct JointView {
  int alphabet = 0;
  int period = 1;    ///< Δ* = lcm of the periods
  int locality = 0;  ///< τ* = max of the localities
};

/// Δ* and τ* of `models` (at least one); InputError if their alphabets differ.
JointView JointViewOf(const std::vector<const Transformer*>& models);

}  // namespace ltsim
