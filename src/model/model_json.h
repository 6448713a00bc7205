// The strict JSON layer of model files: parsing with key paths, line:column errors and the
// shared vocabulary of the reader and the writer (private to src/model/).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

namespace ltsim::model_json {

// Ordered, so that `meta` keeps its key order and the writer follows the key order of
// docs/formats.md §1.
using Json = nlohmann::ordered_json;
using Keys = std::initializer_list<const char*>;

inline constexpr char kFormatName[] = "ltsim-model";
inline constexpr int kFormatVersion = 1;

/// Key paths look like "layers[0].heads[1].bias"; rows, columns and entries count from 0.
std::string Child(const std::string& path, const std::string& key);
std::string Element(const std::string& path, std::size_t index);

/// Throws InputError "source: path: rule".
[[noreturn]] void Fail(const std::string& source, const std::string& path, const std::string& rule);

/// What was found where something else was expected: "a string", "the number 2.5", ...
std::string Describe(const Json& value);

/// Parses `text`; syntax errors name source:LINE:COL, duplicate keys and numbers that overflow
/// a double name their key path.
Json ParseJson(const std::string& text, const std::string& source);

/// The whole file at `path` (InputError if it is a directory or cannot be read).
std::string ReadText(const std::string& path);

}  // namespace ltsim::model_json
