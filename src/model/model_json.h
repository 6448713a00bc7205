// The vocabulary of the `ltsim-model` reader and writer (private to src/model/): the format's
// name and version, and the strict JSON layer of every format (ltsim::io) under short names.
#pragma once

#include <initializer_list>
#include <string>

#include "ltsim/io/json.h"

namespace ltsim::model_json {

using Json = io::Json;
using Keys = std::initializer_list<const char*>;
using io::Child;
using io::Describe;
using io::Element;

inline constexpr char kFormatName[] = "ltsim-model";
inline constexpr int kFormatVersion = 1;

/// Throws InputError "source: path: rule".
[[noreturn]] void Fail(const std::string& source, const std::string& path, const std::string& rule);

}  // namespace ltsim::model_json
