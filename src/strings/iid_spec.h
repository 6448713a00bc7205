// Private: the "iid:length=N,alphabet=S,seed=K[,probs=…]" generator spec (used by OpenSource).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ltsim/strings/source.h"

namespace ltsim {

/// Parses a spec starting with "iid:"; errors are InputErrors naming the spec and the key. A
/// spec without `seed=` takes `default_seed` when given (and is an error otherwise); the
/// source's name spells the seed it used.
std::unique_ptr<Source> OpenIidSpec(const std::string& spec,
                                    std::optional<std::uint64_t> default_seed = std::nullopt);

}  // namespace ltsim
