// The strict JSON layer of model files: parse callbacks that keep the key path, line:column.
#include "model/model_json.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "ltsim/core/error.h"

namespace ltsim::model_json {
namespace {
constexpr std::size_t kMaxReasonLength = 120;
}  // namespace

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string Element(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

[[noreturn]] void Fail(const std::string& source, const std::string& path,
                       const std::string& rule) {
  throw InputError(source + ": " + (path.empty() ? rule : path + ": " + rule));
}

// What was found where something else was expected: "a string", "the number 2.5", ...
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
      return "the number " + value.dump();
  }
}

namespace {

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
        frames_.pop_back();
        [[fallthrough]];
      case Json::parse_event_t::value:
        if (!frames_.empty() && frames_.back().is_array) ++frames_.back().index;
        break;
    }
  }

  // A number literal too large for a double: the JSON is well-formed but not finite.
  [[noreturn]] void FailNotFinite(const std::string& what) const {
    const size_t open = what.find('\'');
    const size_t close = what.rfind('\'');
    const std::string literal =
        open < close ? what.substr(open + 1, close - open - 1) : std::string("number");
    std::string path;
    std::string position;
    SplitLocation(path, position);
    Fail(source_, path, position + literal + " is not finite (too large for a double)");
  }

 private:
  struct Frame {
    bool is_array;
    std::string key;
    size_t index;
    std::set<std::string> keys;
  };

  void OnKey(const std::string& key) {
    Frame& frame = frames_.back();
    frame.key = key;
    if (!frame.keys.insert(key).second) {
      std::string path;
      std::string position;
      SplitLocation(path, position);
      Fail(source_, path + position, "duplicate key");
    }
  }

  // The key path of the current value, its trailing indices written "row r, column c: " or
  // "entry i: " as for the matrices and vectors of the model.
  void SplitLocation(std::string& path, std::string& position) const {
    size_t keyed = frames_.size();
    while (keyed > 0 && frames_[keyed - 1].is_array) --keyed;
    for (size_t f = 0; f < keyed; ++f) {
      path = frames_[f].is_array ? Element(path, frames_[f].index) : Child(path, frames_[f].key);
    }
    const size_t trailing = frames_.size() - keyed;
    if (trailing >= 2) {
      for (size_t f = keyed; f + 2 < frames_.size(); ++f) path = Element(path, frames_[f].index);
      position = "row " + std::to_string(frames_[frames_.size() - 2].index) + ", column " +
                 std::to_string(frames_.back().index) + ": ";
    } else if (trailing == 1) {
      position = "entry " + std::to_string(frames_.back().index) + ": ";
    }
  }

  const std::string& source_;
  std::vector<Frame> frames_;
};

// "LINE:COL" (1-based) of the byte nlohmann reports as the last one it read.
std::string LineColumn(const std::string& text, size_t byte) {
  const size_t offset = std::min(std::max<size_t>(byte, 1) - 1, text.size());
  const size_t line = 1 + std::count(text.begin(), text.begin() + offset, '\n');
  const size_t line_start = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
  const size_t column = line_start == std::string::npos ? offset + 1 : offset - line_start;
  return std::to_string(line) + ":" + std::to_string(column);
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: "
// prefix nor the "; last read: '...'" echo of the input, which may not even be valid text.
std::string ParseReason(const std::string& what) {
  const size_t column = what.find("column ");
  const size_t colon = column == std::string::npos ? column : what.find(": ", column);
  std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
  const size_t echo = reason.find("; last read: ");
  if (echo != std::string::npos) {
    const size_t rest = reason.find("; expected ", echo);
    reason.erase(echo, rest == std::string::npos ? std::string::npos : rest - echo);
  }
  if (reason.size() > kMaxReasonLength) reason = reason.substr(0, kMaxReasonLength) + "...";
  return reason;
}

}  // namespace

Json ParseJson(const std::string& text, const std::string& source) {
  PathTracker tracker(source);
  const Json::parser_callback_t callback = [&tracker](int, Json::parse_event_t event,
                                                      Json& parsed) {
    tracker.Observe(event, parsed);
    return true;
  };
  try {
    return Json::parse(text, callback);
  } catch (const Json::parse_error& error) {
    throw InputError(source + ":" + LineColumn(text, error.byte) +
                     ": invalid JSON: " + ParseReason(error.what()));
  } catch (const Json::out_of_range& error) {
    tracker.FailNotFinite(error.what());
  }
}

std::string ReadText(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw InputError(path + ": cannot open model file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open model file");
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw InputError(path + ": cannot read model file");
  return text;
}

}  // namespace ltsim::model_json
