// The witness paths every tightness row records (theorems 4.1, 4.2, 5.2, lemma 5.3 and the
// user-family row).
#pragma once

#include <filesystem>
#include <string>

#include "ltsim/study/tightness.h"

namespace ltsim {

/// A witness file's name relative to the output directory, as tightness.json records it: the
/// outputs are then the same bytes wherever the directory is (docs/tightness.md §4).
inline std::string OutRelative(const TightnessOptions& o, const std::string& path) {
  return std::filesystem::path(path).lexically_relative(o.out).string();
}

}  // namespace ltsim
