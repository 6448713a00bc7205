// Private: the "iid:length=N,alphabet=S,seed=K[,probs=…]" generator spec (used by OpenSource).
#pragma once

#include <memory>
#include <string>

#include "ltsim/strings/source.h"

namespace ltsim {

/// Parses a spec starting with "iid:"; errors are InputErrors naming the spec and the key.
std::unique_ptr<Source> OpenIidSpec(const std::string& spec);

}  // namespace ltsim
