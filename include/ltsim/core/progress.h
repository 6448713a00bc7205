// The hook long computations report progress through; the command line draws it.
#pragma once

#include <cstdint>
#include <functional>

namespace ltsim {

/// `done` of `total` units of a long computation (restarts, points, statistics…). May be
/// called from several threads at once: the receiver serialises. An empty function is
/// allowed and means "nobody is watching".
using ProgressCallback = std::function<void(std::uint64_t done, std::uint64_t total)>;

}  // namespace ltsim
