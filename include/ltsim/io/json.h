// The one strict JSON layer: every JSON file ltsim reads (models, witnesses of both kinds,
// campaign.json, cases.jsonl lines) goes through ParseJson and JsonReader, so every format
// gives the same errors: file:line:col for syntax, the key path for meaning (docs/formats.md §6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/io/names.h"

namespace ltsim::io {

/// Parsed documents keep their key order (a model's `meta`, a witness's sections).
using Json = nlohmann::ordered_json;

/// Largest JSON file ltsim reads (checked before reading it; docs/formats.md §6.1).
inline constexpr std::uint64_t kMaxJsonBytes = std::uint64_t{256} << 20;
/// Deepest nesting of arrays and objects (checked before parsing: the parser and the
/// writer recurse). The deepest ltsim format, a model inside a witness, needs 9.
inline constexpr int kMaxJsonDepth = 64;

/// Limits of one read.
struct JsonLimits {
  std::uint64_t max_bytes = kMaxJsonBytes;
  int max_depth = kMaxJsonDepth;
};

/// The whole of a regular file (or a device or pipe, read up to the limit), checked to be
/// at most `max_bytes` before anything is allocated for it. InputError naming `path` and
/// `what` ("model file") when it is missing, a directory, unreadable or too large.
std::string ReadFile(const std::string& path, const std::string& what, std::uint64_t max_bytes);

/// Parses `text` strictly: syntax errors as "SOURCE:LINE:COL: invalid JSON: reason",
/// duplicate keys and numbers too large for a double by key path, nesting deeper than
/// `limits.max_depth` refused before parsing. `first_line` numbers the text's first line
/// (a line of a .jsonl file).
Json ParseJson(std::string_view text, const std::string& source, const JsonLimits& limits = {},
               std::size_t first_line = 1);

/// ReadFile then ParseJson.
Json ReadJsonFile(const std::string& path, const std::string& what, const JsonLimits& limits = {});

/// What a value is, for "expected X, got Y" messages: "a string", "the number 2.5", ...
/// (a number is shown cut to 40 characters, a string never: it may be long or not text).
std::string Describe(const Json& value);

/// `text` as a one-line message may show it: control characters (C0, DEL, C1: newlines and
/// terminal escape sequences) and bytes that are not UTF-8 escaped (\n, \x1b, \u009b), cut
/// after `max` characters with "..." (a key, a tensor name or a value from a file may be
/// anything).
std::string Printable(std::string_view text, std::size_t max = 60);

/// Joins key paths: Child("layers[0]", "heads") = "layers[0].heads", Element("a", 2) = "a[2]"
/// (the key shown Printable: it may come from the file).
std::string Child(const std::string& path, const std::string& key);
std::string Element(const std::string& path, std::size_t index);

/// A read-only view of one value of a parsed document, with its source and key path, whose
/// accessors enforce the value's type and range and fail as "SOURCE: PATH: rule".
class JsonReader {
 public:
  JsonReader(const Json& value, std::string source, std::string path = "");

  const Json& json() const { return *value_; }
  const std::string& source() const { return source_; }
  const std::string& path() const { return path_; }

  /// Requires an object whose keys are all in `allowed` and include every `required` one.
  const JsonReader& Keys(std::initializer_list<const char*> allowed,
                         std::initializer_list<const char*> required) const;
  /// Requires an object; true when it has `key`.
  bool Has(const char* key) const;
  /// The value at `key` ("missing key" when absent).
  JsonReader At(const char* key) const;
  /// Requires an array of min..max elements; its elements.
  std::vector<JsonReader> Array(std::size_t min = 0,
                                std::size_t max = std::numeric_limits<std::size_t>::max()) const;

  /// An integer literal in [min, max] (2.5, 1e30, -1 for an unsigned field are refused).
  std::int64_t Int(std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                   std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  std::uint64_t UInt(std::uint64_t min = 0,
                     std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const;
  /// A finite number in [min, max].
  double Number(double min = -std::numeric_limits<double>::max(),
                double max = std::numeric_limits<double>::max()) const;
  /// A finite number > 0 (and ≤ max).
  double Positive(double max = std::numeric_limits<double>::max()) const;
  std::string String() const;
  bool Bool() const;
  /// A string naming one of `table`'s values.
  template <typename E, std::size_t N>
  E Enum(const NameTable<E, N>& table) const {
    const std::string name = String();
    try {
      return table.Parse(name);
    } catch (const InputError& error) {
      Fail(error.what());
    }
  }

  /// Throws InputError "SOURCE: PATH: rule".
  [[noreturn]] void Fail(const std::string& rule) const;

 private:
  const Json* value_;
  std::string source_;
  std::string path_;
};

}  // namespace ltsim::io

namespace ltsim::io {

/// Calls `line(text, number, terminated)` for each line of the file at `path` in order
/// (number from 0; `terminated` false only for a last line without '\n'), reading in
/// chunks so the file never has to fit in memory. A line longer than `max_line_bytes` is an
/// InputError naming "PATH:LINE"; so are a missing file and a directory.
void ForEachLine(const std::string& path, const std::string& what, std::size_t max_line_bytes,
                 const std::function<void(std::string_view, std::uint64_t, bool)>& line);

/// The same over an open file descriptor (read from offset 0 with pread, so the descriptor's
/// position is untouched); `path` names it in messages.
void ForEachLine(int fd, const std::string& path, const std::string& what,
                 std::size_t max_line_bytes,
                 const std::function<void(std::string_view, std::uint64_t, bool)>& line);

}  // namespace ltsim::io
