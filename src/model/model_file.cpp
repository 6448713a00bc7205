// Strict reader and writer of the `ltsim-model` JSON format (model.md "Model file").
#include "ltsim/model/model_file.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

// Ordered, so that `meta` keeps its key order and the writer follows the spec's key order.
using Json = nlohmann::ordered_json;
using Keys = std::initializer_list<const char*>;

constexpr char kFormatName[] = "ltsim-model";
constexpr int kFormatVersion = 1;
constexpr size_t kMaxReasonLength = 120;

// Key paths look like "layers[0].heads[1].bias"; rows, columns and entries count from 0.
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

// An expected count and the parameter it comes from ("width = 3"); size < 0 means "≥ 1".
struct Expected {
  long long size;
  std::string label;
};

constexpr long long kAnyPositive = -1;

// Turns a parsed document into a Transformer, checking keys, types and shapes as it goes.
class ModelReader {
 public:
  explicit ModelReader(const std::string& source) : source_(source) {}

  Transformer Read(const Json& root) const {
    if (!root.is_object()) Fail("", "expected a JSON object at the top level");
    CheckFormat(root);
    CheckKeys(root, "",
              {"format", "version", "name", "alphabet", "width", "period", "locality",
               "tie_tolerance", "embedding", "positional", "layers", "readout", "meta"},
              {"alphabet", "width", "period", "locality", "embedding", "positional", "layers",
               "readout"});
    Transformer model;
    if (root.contains("name")) model.name = Text(root.at("name"), "name");
    model.alphabet = Int(root.at("alphabet"), "alphabet", 1, kMaxAlphabet);
    model.width = Int(root.at("width"), "width", 1);
    model.period = Int(root.at("period"), "period", 1);
    model.locality = Int(root.at("locality"), "locality", 0);
    if (root.contains("tie_tolerance")) model.tie_tolerance = TieTolerance(root);
    const Expected d{model.width, "width"};
    model.embedding =
        ReadMatrix(root.at("embedding"), "embedding", {model.alphabet, "alphabet"}, d);
    model.positional = ReadMatrix(root.at("positional"), "positional", {model.period, "period"}, d);
    model.layers = ReadLayers(root.at("layers"), "layers", model);
    ReadReadout(root.at("readout"), "readout", model);
    if (root.contains("meta")) model.meta_json = Meta(root.at("meta"));
    return model;
  }

 private:
  [[noreturn]] void Fail(const std::string& path, const std::string& rule) const {
    ltsim::Fail(source_, path, rule);
  }

  // Format and version come first: a file of another format should not fail on its keys.
  void CheckFormat(const Json& root) const {
    if (!root.contains("format")) Fail("format", "missing key");
    const Json& format = root.at("format");
    if (format != kFormatName) {
      Fail("format", std::string("expected \"") + kFormatName + "\", got " + format.dump());
    }
    if (!root.contains("version")) Fail("version", "missing key");
    const Json& version = root.at("version");
    if (!version.is_number_integer() || version != kFormatVersion) {
      Fail("version", "unsupported version " + version.dump() + ", expected " +
                          std::to_string(kFormatVersion));
    }
  }

  void CheckKeys(const Json& object, const std::string& path, Keys allowed, Keys required) const {
    if (!object.is_object()) Fail(path, "expected an object, got " + Describe(object));
    for (const auto& item : object.items()) {
      const bool known = std::any_of(allowed.begin(), allowed.end(),
                                     [&](const char* key) { return item.key() == key; });
      if (!known) Fail(Child(path, item.key()), "unknown key");
    }
    for (const char* key : required) {
      if (!object.contains(key)) Fail(Child(path, key), "missing key");
    }
  }

  int Int(const Json& value, const std::string& path, long long min,
          long long max = INT_MAX) const {
    if (!value.is_number_integer()) Fail(path, "expected an integer, got " + Describe(value));
    const bool too_large =
        value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
    if (too_large || value.get<long long>() < min || value.get<long long>() > max) {
      const std::string range =
          max == INT_MAX ? "at least " + std::to_string(min)
                         : "between " + std::to_string(min) + " and " + std::to_string(max);
      Fail(path, "must be " + range + ", got " + value.dump());
    }
    return static_cast<int>(value.get<long long>());
  }

  double Number(const Json& value, const std::string& path, const std::string& position) const {
    if (!value.is_number()) Fail(path, position + "expected a number, got " + Describe(value));
    return value.get<double>();
  }

  std::string Text(const Json& value, const std::string& path) const {
    if (!value.is_string()) Fail(path, "expected a string, got " + Describe(value));
    return value.get<std::string>();
  }

  double TieTolerance(const Json& root) const {
    const double theta = Number(root.at("tie_tolerance"), "tie_tolerance", "");
    if (!(theta >= 0)) {
      Fail("tie_tolerance",
           "must be finite and at least 0, got " + root.at("tie_tolerance").dump());
    }
    return theta;
  }

  std::string Meta(const Json& meta) const {
    if (!meta.is_object()) Fail("meta", "expected an object, got " + Describe(meta));
    return meta.dump(-1, ' ', false, Json::error_handler_t::replace);
  }

  void CheckCount(size_t count, const std::string& noun, const Expected& expected,
                  const std::string& path, const std::string& prefix = "has ") const {
    if (expected.size == kAnyPositive ? count == 0 : count != size_t(expected.size)) {
      const std::string want = expected.size == kAnyPositive
                                   ? "at least 1"
                                   : expected.label + " = " + std::to_string(expected.size);
      Fail(path, prefix + std::to_string(count) + " " + noun + ", expected " + want);
    }
  }

  Matrix ReadMatrix(const Json& value, const std::string& path, const Expected& rows,
                    const Expected& cols) const {
    if (!value.is_array()) Fail(path, "expected an array of rows, got " + Describe(value));
    CheckCount(value.size(), "rows", rows, path);
    Matrix matrix(static_cast<Eigen::Index>(value.size()), cols.size);
    for (size_t r = 0; r < value.size(); ++r) {
      const Json& row = value[r];
      const std::string row_name = "row " + std::to_string(r);
      if (!row.is_array()) {
        Fail(path, row_name + ": expected an array of numbers, got " + Describe(row));
      }
      CheckCount(row.size(), "columns", cols, path, row_name + " has ");
      for (size_t c = 0; c < row.size(); ++c) {
        matrix(r, c) = Number(row[c], path, row_name + ", column " + std::to_string(c) + ": ");
      }
    }
    return matrix;
  }

  Vector ReadVector(const Json& value, const std::string& path, const Expected& size) const {
    if (!value.is_array()) Fail(path, "expected an array of numbers, got " + Describe(value));
    CheckCount(value.size(), "entries", size, path);
    Vector vector(static_cast<Eigen::Index>(value.size()));
    for (size_t i = 0; i < value.size(); ++i) {
      vector(i) = Number(value[i], path, "entry " + std::to_string(i) + ": ");
    }
    return vector;
  }

  std::vector<Layer> ReadLayers(const Json& value, const std::string& path,
                                const Transformer& model) const {
    if (!value.is_array()) Fail(path, "expected an array of layers, got " + Describe(value));
    if (value.empty()) Fail(path, "must have at least one layer");
    std::vector<Layer> layers;
    for (size_t l = 0; l < value.size(); ++l) {
      layers.push_back(ReadLayer(value[l], Element(path, l), model));
    }
    return layers;
  }

  Layer ReadLayer(const Json& value, const std::string& path, const Transformer& model) const {
    CheckKeys(value, path, {"attention", "bias_scaling", "precision_bits", "heads", "mlp"},
              {"attention", "heads"});
    Layer layer;
    layer.attention = ReadAttention(value.at("attention"), Child(path, "attention"));
    if (value.contains("bias_scaling")) {
      layer.bias_scaling = ReadBiasScaling(value.at("bias_scaling"), Child(path, "bias_scaling"));
    }
    layer.precision_bits = PrecisionBits(value, path, layer.attention);
    const Json& heads = value.at("heads");
    const std::string heads_path = Child(path, "heads");
    if (!heads.is_array()) Fail(heads_path, "expected an array of heads, got " + Describe(heads));
    for (size_t h = 0; h < heads.size(); ++h) {
      layer.heads.push_back(ReadHead(heads[h], Element(heads_path, h), model));
    }
    if (value.contains("mlp")) layer.mlp = ReadMlp(value.at("mlp"), Child(path, "mlp"), model);
    return layer;
  }

  Attention ReadAttention(const Json& value, const std::string& path) const {
    for (Attention attention : {Attention::kSoftmax, Attention::kHardmax, Attention::kFinite}) {
      if (value == AttentionName(attention)) return attention;
    }
    Fail(path, "expected one of \"softmax\", \"hardmax\", \"finite\", got " + value.dump());
  }

  BiasScaling ReadBiasScaling(const Json& value, const std::string& path) const {
    for (BiasScaling scaling : {BiasScaling::kNone, BiasScaling::kLog}) {
      if (value == BiasScalingName(scaling)) return scaling;
    }
    Fail(path, "expected one of \"none\", \"log\", got " + value.dump());
  }

  int PrecisionBits(const Json& layer, const std::string& path, Attention attention) const {
    const std::string key = Child(path, "precision_bits");
    const bool present = layer.contains("precision_bits");
    if (attention != Attention::kFinite) {
      if (present) Fail(key, "only allowed when attention is finite");
      return 0;
    }
    if (!present) Fail(key, "missing key (required when attention is finite)");
    return Int(layer.at("precision_bits"), key, 1);
  }

  Head ReadHead(const Json& value, const std::string& path, const Transformer& model) const {
    CheckKeys(value, path, {"qk", "ov", "bias"}, {"qk", "ov", "bias"});
    const Expected d{model.width, "width"};
    Head head;
    head.qk = ReadMatrix(value.at("qk"), Child(path, "qk"), d, d);
    head.ov = ReadMatrix(value.at("ov"), Child(path, "ov"), d, d);
    const Expected length{static_cast<long long>(model.locality) + 1, "locality+1"};
    head.bias = ReadVector(value.at("bias"), Child(path, "bias"), length);
    return head;
  }

  Mlp ReadMlp(const Json& value, const std::string& path, const Transformer& model) const {
    CheckKeys(value, path, {"in", "in_bias", "out"}, {"in", "in_bias", "out"});
    const Expected d{model.width, "width"};
    Mlp mlp;
    mlp.in = ReadMatrix(value.at("in"), Child(path, "in"), {kAnyPositive, ""}, d);
    const Expected m{mlp.in.rows(), "mlp.in rows"};
    mlp.in_bias = ReadVector(value.at("in_bias"), Child(path, "in_bias"), m);
    mlp.out = ReadMatrix(value.at("out"), Child(path, "out"), d, m);
    return mlp;
  }

  void ReadReadout(const Json& value, const std::string& path, Transformer& model) const {
    CheckKeys(value, path, {"weight", "bias"}, {"weight", "bias"});
    const Expected d{model.width, "width"};
    model.readout_weight =
        ReadMatrix(value.at("weight"), Child(path, "weight"), {kAnyPositive, ""}, d);
    const Expected k{model.readout_weight.rows(), "readout.weight rows"};
    model.readout_bias = ReadVector(value.at("bias"), Child(path, "bias"), k);
  }

  const std::string& source_;
};

Json MatrixJson(const Matrix& matrix) {
  Json rows = Json::array();
  for (Eigen::Index r = 0; r < matrix.rows(); ++r) {
    Json row = Json::array();
    for (Eigen::Index c = 0; c < matrix.cols(); ++c) row.push_back(matrix(r, c));
    rows.push_back(std::move(row));
  }
  return rows;
}

Json VectorJson(const Vector& vector) {
  Json entries = Json::array();
  for (Eigen::Index i = 0; i < vector.size(); ++i) entries.push_back(vector(i));
  return entries;
}

Json LayerJson(const Layer& layer) {
  Json json = Json::object();
  json["attention"] = AttentionName(layer.attention);
  json["bias_scaling"] = BiasScalingName(layer.bias_scaling);
  if (layer.attention == Attention::kFinite) json["precision_bits"] = layer.precision_bits;
  json["heads"] = Json::array();
  for (const Head& head : layer.heads) {
    json["heads"].push_back({{"qk", MatrixJson(head.qk)},
                             {"ov", MatrixJson(head.ov)},
                             {"bias", VectorJson(head.bias)}});
  }
  if (layer.mlp) {
    json["mlp"] = {{"in", MatrixJson(layer.mlp->in)},
                   {"in_bias", VectorJson(layer.mlp->in_bias)},
                   {"out", MatrixJson(layer.mlp->out)}};
  }
  return json;
}

Json ModelJson(const Transformer& model) {
  Json json = Json::object();
  json["format"] = kFormatName;
  json["version"] = kFormatVersion;
  if (!model.name.empty()) json["name"] = model.name;
  json["alphabet"] = model.alphabet;
  json["width"] = model.width;
  json["period"] = model.period;
  json["locality"] = model.locality;
  json["tie_tolerance"] = model.tie_tolerance;
  json["embedding"] = MatrixJson(model.embedding);
  json["positional"] = MatrixJson(model.positional);
  json["layers"] = Json::array();
  for (const Layer& layer : model.layers) json["layers"].push_back(LayerJson(layer));
  json["readout"] = {{"weight", MatrixJson(model.readout_weight)},
                     {"bias", VectorJson(model.readout_bias)}};
  json["meta"] = Json::parse(model.meta_json);
  return json;
}

std::string Scalar(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Pretty-printing with every array or object of scalars (a matrix row, a bias) on one line.
void Emit(const Json& value, int indent, std::string& out) {
  if (!value.is_structured()) {
    out += Scalar(value);
    return;
  }
  const bool object = value.is_object();
  const bool flat = std::none_of(value.begin(), value.end(),
                                 [](const Json& element) { return element.is_structured(); });
  out += object ? '{' : '[';
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it != value.begin()) out += flat ? ", " : ",";
    if (!flat) out += '\n' + std::string(indent + 2, ' ');
    if (object) out += Scalar(it.key()) + ": ";
    Emit(it.value(), indent + 2, out);
  }
  if (!flat) out += '\n' + std::string(indent, ' ');
  out += object ? '}' : ']';
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

}  // namespace

Transformer ParseModel(const std::string& text, const std::string& source) {
  const Transformer model = ModelReader(source).Read(ParseJson(text, source));
  ValidateTransformer(model, source);
  return model;
}

Transformer ReadModel(const std::string& path) { return ParseModel(ReadText(path), path); }

std::string ModelToJson(const Transformer& model) {
  ValidateTransformer(model, "model");
  std::string out;
  Emit(ModelJson(model), 0, out);
  return out + '\n';
}

void WriteModel(const Transformer& model, const std::string& path) {
  ValidateTransformer(model, path);
  const std::string text = ModelToJson(model);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(path + ": cannot open model file for writing");
  out << text;
  out.close();
  if (!out) throw InputError(path + ": cannot write model file");
}

}  // namespace ltsim
