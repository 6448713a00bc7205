// The one strict JSON layer: bounded file reads, a depth check before parsing, parse errors
// as file:line:col, duplicate keys and overflowing numbers by key path, typed accessors.
#include "ltsim/io/json.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

namespace ltsim::io {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxReasonLength = 120;
constexpr std::size_t kMaxEcho = 40;

std::string Ellipsis(std::string text, std::size_t max) {
  if (text.size() > max) text = text.substr(0, max) + "...";
  return text;
}

// "LINE:COL" (1-based) of byte offset `offset` of `text`.
std::string LineColumnAt(std::string_view text, std::size_t offset, std::size_t first_line) {
  offset = std::min(offset, text.size());
  const std::size_t line =
      first_line + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  const std::size_t line_start =
      offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  const std::size_t column =
      line_start == std::string_view::npos ? offset + 1 : offset - line_start;
  return std::to_string(line) + ":" + std::to_string(column);
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: "
// prefix nor the "; last read: '...'" echo of the input, which may not even be valid text.
std::string ParseReason(const std::string& what) {
  const std::size_t column = what.find("column ");
  const std::size_t colon = column == std::string::npos ? column : what.find(": ", column);
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  const std::size_t echo = reason.find("; last read: ");
  if (echo != std::string::npos) {
    const std::size_t rest = reason.find("; expected ", echo);
    reason.erase(echo, rest == std::string::npos ? std::string::npos : rest - echo);
  }
  return Ellipsis(reason, kMaxReasonLength);
}

[[noreturn]] void FailAt(const std::string& source, const std::string& path,
                         const std::string& rule) {
  throw InputError(source + ": " + (path.empty() ? rule : path + ": " + rule));
}

// The nesting depth, checked by one scan that skips strings, so that neither the parser
// nor a later dump recurses deeper than the limit whatever the file holds.
void CheckDepth(std::string_view text, const std::string& source, int max_depth,
                std::size_t first_line) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        throw InputError(source + ":" + LineColumnAt(text, i, first_line) +
                         ": JSON nested deeper than " + std::to_string(max_depth) +
                         " levels (docs/formats.md §6.1)");
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

// Follows the parser's position through parse callbacks, so that the errors the DOM cannot
// show (duplicate keys, numbers that overflow a double) still name their key path.
class PathTracker {
 public:
  explicit PathTracker(const std::string& source) : source_(source) {}

  void Observe(Json::parse_event_t event, const Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        frames_.push_back({event == Json::parse_event_t::array_start, "", 0, {}});
        break;
      case Json::parse_event_t::key:
        OnKey(parsed.get<std::string>());
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        [[fallthrough]];
      case Json::parse_event_t::value:
        if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
        break;
    }
  }

  // A number literal too large for a double: the JSON is well-formed but not finite.
  [[noreturn]] void FailNotFinite(const std::string& what) const {
    const std::size_t open = what.find('\'');
    const std::size_t close = what.rfind('\'');
    const std::string literal =
        open < close ? what.substr(open + 1, close - open - 1) : std::string("number");
    std::string path;
    std::string position;
    SplitLocation(path, position);
    FailAt(source_, path,
           position + Ellipsis(literal, kMaxEcho) + " is not finite (too large for a double)");
  }

 private:
  struct Frame {
    bool is_array;
    std::string key;
    std::size_t index;
    std::set<std::string> keys;
  };

  void OnKey(const std::string& key) {
    Frame& frame = frames_.back();
    frame.key = key;
    if (!frame.keys.insert(key).second) {
      std::string path;
      std::string position;
      SplitLocation(path, position);
      FailAt(source_, path + position, "duplicate key");
    }
  }

  // The key path of the current value, its trailing indices written "row r, column c: " or
  // "entry i: " as for the matrices and vectors of a model.
  void SplitLocation(std::string& path, std::string& position) const {
    std::size_t keyed = frames_.size();
    while (keyed > 0 && frames_[keyed - 1].is_array) --keyed;
    for (std::size_t f = 0; f < keyed; ++f) {
      path = frames_[f].is_array ? Element(path, frames_[f].index) : Child(path, frames_[f].key);
    }
    const std::size_t trailing = frames_.size() - keyed;
    if (trailing >= 2) {
      for (std::size_t f = keyed; f + 2 < frames_.size(); ++f)
        path = Element(path, frames_[f].index);
      position = "row " + std::to_string(frames_[frames_.size() - 2].index) + ", column " +
                 std::to_string(frames_.back().index) + ": ";
    } else if (trailing == 1) {
      position = "entry " + std::to_string(frames_.back().index) + ": ";
    }
  }

  const std::string& source_;
  std::vector<Frame> frames_;
};

}  // namespace

std::string Printable(std::string_view text, std::size_t max) {
  std::string out;
  std::size_t shown = 0;
  const auto escape = [&](const char* format, unsigned value) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, format, value);
    out += buffer;
  };
  for (std::size_t i = 0; i < text.size(); ++shown) {
    if (shown == max) {
      out += "...";
      return out;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n", ++i;
    } else if (c == '\r') {
      out += "\\r", ++i;
    } else if (c == '\t') {
      out += "\\t", ++i;
    } else if (c < 0x20 || c == 0x7f) {
      escape("\\x%02x", c), ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c), ++i;
    } else {
      // One UTF-8 sequence, or its first byte escaped when it is not one.
      const std::size_t n = c >= 0xf0 && c < 0xf5   ? 4
                            : c >= 0xe0             ? 3
                            : c >= 0xc2 && c < 0xe0 ? 2
                                                    : 0;
      bool valid = n > 0 && c < 0xf5 && i + n <= text.size();
      unsigned code = n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
      for (std::size_t k = 1; valid && k < n; ++k) {
        const auto next = static_cast<unsigned char>(text[i + k]);
        valid = (next & 0xc0) == 0x80;
        code = (code << 6) | (next & 0x3f);
      }
      valid = valid && !(n == 3 && (code < 0x800 || (code >= 0xd800 && code < 0xe000))) &&
              !(n == 4 && (code < 0x10000 || code > 0x10ffff));
      if (!valid) {
        escape("\\x%02x", c), ++i;
      } else if (code >= 0x80 && code < 0xa0) {
        escape("\\u%04x", code), i += n;  // C1 controls (CSI is U+009B)
      } else {
        out.append(text.substr(i, n)), i += n;
      }
    }
  }
  return out;
}

std::string Child(const std::string& path, const std::string& key) {
  const std::string shown = Printable(key, 60);
  return path.empty() ? shown : path + "." + shown;
}

std::string Element(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string ReadFile(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) {
    throw InputError(path + ": cannot open " + what);
  }
  if (fs::is_directory(status)) {
    throw InputError(path + ": is a directory, expected a " + what);
  }
  const std::string too_large = path + ": " + what + " larger than the limit of " +
                                std::to_string(max_bytes) + " bytes (docs/formats.md §6.1)";
  if (fs::is_regular_file(status)) {
    const std::uintmax_t size = fs::file_size(path, error);
    if (!error && size > max_bytes) throw InputError(too_large);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open " + what + " (" + std::strerror(errno) + ")");
  // Read in chunks up to the limit: a device or a pipe has no size to check first. The
  // formats read this way (JSON) never hold a NUL byte, so a binary stream (/dev/zero) stops at
  // once.
  std::string text;
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  std::vector<char> chunk(kChunk);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(kChunk));
    const std::size_t got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    if (std::memchr(chunk.data(), '\0', got) != nullptr) {
      const std::size_t at =
          text.size() +
          static_cast<std::size_t>(static_cast<const char*>(std::memchr(chunk.data(), '\0', got)) -
                                   chunk.data());
      throw InputError(path + ": not a text file (a NUL byte at offset " + std::to_string(at) +
                       "), expected a " + what);
    }
    if (text.size() + got > max_bytes) throw InputError(too_large);
    text.append(chunk.data(), got);
  }
  if (in.bad()) throw InputError(path + ": cannot read " + what);
  return text;
}

Json ParseJson(std::string_view text, const std::string& source, const JsonLimits& limits,
               std::size_t first_line) {
  if (text.size() > limits.max_bytes) {
    throw InputError(source + ": JSON text larger than the limit of " +
                     std::to_string(limits.max_bytes) + " bytes (docs/formats.md §6.1)");
  }
  CheckDepth(text, source, limits.max_depth, first_line);
  // A line of a .jsonl file: its duplicate-key and overflow errors name FILE:LINE too.
  const std::string where = first_line == 1 ? source : source + ":" + std::to_string(first_line);
  PathTracker tracker(where);
  const Json::parser_callback_t callback = [&tracker](int, Json::parse_event_t event,
                                                      Json& parsed) {
    tracker.Observe(event, parsed);
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), callback);
  } catch (const Json::parse_error& error) {
    const std::size_t byte = error.byte == 0 ? 0 : error.byte - 1;
    throw InputError(source + ":" + LineColumnAt(text, byte, first_line) +
                     ": invalid JSON: " + ParseReason(error.what()));
  } catch (const Json::out_of_range& error) {
    tracker.FailNotFinite(error.what());
  }
}

Json ReadJsonFile(const std::string& path, const std::string& what, const JsonLimits& limits) {
  return ParseJson(ReadFile(path, what, limits.max_bytes), path, limits);
}

std::string Describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::null:
      return "null";
    default:
      return "the number " + Ellipsis(value.dump(), kMaxEcho);
  }
}

JsonReader::JsonReader(const Json& value, std::string source, std::string path)
    : value_(&value), source_(std::move(source)), path_(std::move(path)) {}

void JsonReader::Fail(const std::string& rule) const { FailAt(source_, path_, rule); }

const JsonReader& JsonReader::Keys(std::initializer_list<const char*> allowed,
                                   std::initializer_list<const char*> required) const {
  if (!value_->is_object()) Fail("expected an object, got " + Describe(*value_));
  for (const auto& item : value_->items()) {
    const bool known = std::any_of(allowed.begin(), allowed.end(),
                                   [&](const char* key) { return item.key() == key; });
    if (!known) {
      FailAt(source_, Child(path_, item.key()), "unknown key");
    }
  }
  for (const char* key : required) {
    if (!value_->contains(key)) FailAt(source_, Child(path_, key), "missing key");
  }
  return *this;
}

bool JsonReader::Has(const char* key) const {
  if (!value_->is_object()) Fail("expected an object, got " + Describe(*value_));
  return value_->contains(key);
}

JsonReader JsonReader::At(const char* key) const {
  if (!Has(key)) FailAt(source_, Child(path_, key), "missing key");
  return JsonReader(value_->at(key), source_, Child(path_, key));
}

std::vector<JsonReader> JsonReader::Array(std::size_t min, std::size_t max) const {
  if (!value_->is_array()) Fail("expected an array, got " + Describe(*value_));
  const std::size_t size = value_->size();
  if (size < min || size > max) {
    const std::string range =
        max == std::numeric_limits<std::size_t>::max()
            ? "at least " + std::to_string(min)
            : (min == max ? std::to_string(min)
                          : "between " + std::to_string(min) + " and " + std::to_string(max));
    Fail("has " + std::to_string(size) + " elements, expected " + range);
  }
  std::vector<JsonReader> out;
  out.reserve(size);
  for (std::size_t i = 0; i < size; ++i) out.emplace_back((*value_)[i], source_, Element(path_, i));
  return out;
}

namespace {
template <typename T>
std::string RangeText(T min, T max) {
  if (max == std::numeric_limits<T>::max()) return "at least " + std::to_string(min);
  if (min == std::numeric_limits<T>::min()) return "at most " + std::to_string(max);
  return "between " + std::to_string(min) + " and " + std::to_string(max);
}
}  // namespace

std::int64_t JsonReader::Int(std::int64_t min, std::int64_t max) const {
  if (!value_->is_number_integer()) Fail("expected an integer, got " + Describe(*value_));
  const bool too_large = value_->is_number_unsigned() &&
                         value_->get<std::uint64_t>() >
                             static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const std::int64_t v = too_large ? 0 : value_->get<std::int64_t>();
  if (too_large || v < min || v > max) {
    Fail("must be an integer " + RangeText(min, max) + ", got " + Describe(*value_));
  }
  return v;
}

std::uint64_t JsonReader::UInt(std::uint64_t min, std::uint64_t max) const {
  if (!value_->is_number_integer()) Fail("expected an integer, got " + Describe(*value_));
  const bool negative = !value_->is_number_unsigned() && value_->get<std::int64_t>() < 0;
  const std::uint64_t v = negative ? 0 : value_->get<std::uint64_t>();
  if (negative || v < min || v > max) {
    Fail("must be an integer " + RangeText(min, max) + ", got " + Describe(*value_));
  }
  return v;
}

double JsonReader::Number(double min, double max) const {
  if (!value_->is_number()) Fail("expected a number, got " + Describe(*value_));
  const double v = value_->get<double>();
  if (!std::isfinite(v)) Fail("must be finite, got " + Describe(*value_));
  if (v < min || v > max) {
    std::string range;
    if (min == -std::numeric_limits<double>::max()) {
      range = "at most " + Json(max).dump();
    } else if (max == std::numeric_limits<double>::max()) {
      range = "at least " + Json(min).dump();
    } else {
      range = "between " + Json(min).dump() + " and " + Json(max).dump();
    }
    Fail("must be " + range + ", got " + Describe(*value_));
  }
  return v;
}

double JsonReader::Positive(double max) const {
  const double v = Number(-std::numeric_limits<double>::max(), max);
  if (!(v > 0)) Fail("must be positive, got " + Describe(*value_));
  return v;
}

std::string JsonReader::String() const {
  if (!value_->is_string()) Fail("expected a string, got " + Describe(*value_));
  return value_->get<std::string>();
}

bool JsonReader::Bool() const {
  if (!value_->is_boolean()) Fail("expected true or false, got " + Describe(*value_));
  return value_->get<bool>();
}

}  // namespace ltsim::io

namespace ltsim::io {

void ForEachLine(const std::string& path, const std::string& what, std::size_t max_line_bytes,
                 const std::function<void(std::string_view, std::uint64_t, bool)>& line) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) {
    throw InputError(path + ": cannot open " + what);
  }
  if (std::filesystem::is_directory(status)) {
    throw InputError(path + ": is a directory, expected a " + what);
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open " + what);
  try {
    ForEachLine(fd, path, what, max_line_bytes, line);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

void ForEachLine(int fd, const std::string& path, const std::string& what,
                 std::size_t max_line_bytes,
                 const std::function<void(std::string_view, std::uint64_t, bool)>& line) {
  std::string current;
  std::uint64_t number = 0;
  std::vector<char> chunk(std::size_t{1} << 16);
  for (off_t offset = 0;;) {
    const ssize_t read = ::pread(fd, chunk.data(), chunk.size(), offset);
    if (read < 0) {
      if (errno == EINTR) continue;
      throw InputError(path + ": cannot read " + what);
    }
    if (read == 0) break;
    offset += read;
    const std::size_t got = static_cast<std::size_t>(read);
    for (std::size_t at = 0; at < got;) {
      const char* newline =
          static_cast<const char*>(std::memchr(chunk.data() + at, '\n', got - at));
      const std::size_t end = newline ? static_cast<std::size_t>(newline - chunk.data()) : got;
      if (current.size() + (end - at) > max_line_bytes) {
        throw InputError(path + ":" + std::to_string(number + 1) + ": line longer than " +
                         std::to_string(max_line_bytes) + " bytes (docs/formats.md §6.1)");
      }
      current.append(chunk.data() + at, end - at);
      if (!newline) break;
      line(current, number++, true);
      current.clear();
      at = end + 1;
    }
  }
  if (!current.empty()) line(current, number, false);
}

}  // namespace ltsim::io
