// Reads and validates the `ltsim-model` JSON format (docs/formats.md "Model files").
#include <algorithm>
#include <climits>
#include <cstdint>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/core/suggest.h"
#include "ltsim/model/limits.h"
#include "ltsim/model/model_file.h"
#include "ltsim/model/safetensors.h"
#include "model/model_json.h"

namespace ltsim {
namespace {

using namespace model_json;

// The value itself when short, else what it is: a 60 KB value must not make a 60 KB message.
std::string Shown(const Json& value) {
  const std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() <= 40 ? text : Describe(value);
}

// Turns a parsed document into a Transformer, checking keys, types and shapes as it goes.
// A safetensors file's configuration (`tensors_` set) has the same keys less the arrays, which
// are tensors; a layer's `heads` is then the number of heads and `mlp` a flag.
class ModelReader {
 public:
  ModelReader(const std::string& source, const std::string& prefix, TensorSource* tensors)
      : source_(source), prefix_(prefix), tensors_(tensors) {}

  Transformer Read(const Json& root) const {
    if (!root.is_object()) Fail("", "expected a JSON object at the top level");
    CheckFormat(root);
    if (tensors_) {
      for (const char* array : {"embedding", "positional", "readout"})
        if (root.contains(array)) Fail(array, "arrays belong in tensors, not in the metadata");
      CheckKeys(root, "",
                {"format", "version", "name", "alphabet", "width", "period", "locality",
                 "tie_tolerance", "layers", "meta"},
                {"alphabet", "width", "period", "locality", "layers"});
    } else {
      CheckKeys(root, "",
                {"format", "version", "name", "alphabet", "width", "period", "locality",
                 "tie_tolerance", "embedding", "positional", "layers", "readout", "meta"},
                {"alphabet", "width", "period", "locality", "embedding", "positional", "layers",
                 "readout"});
    }
    Transformer model;
    if (root.contains("name")) model.name = Text(root.at("name"), "name");
    // The sizes come first and within their limits (docs/formats.md §6.1), so that no
    // matrix is allocated from a size the file does not back up.
    model.alphabet = Int(root.at("alphabet"), "alphabet", 1, kMaxAlphabet);
    model.width = Int(root.at("width"), "width", 1, kMaxWidth);
    model.period = Int(root.at("period"), "period", 1, kMaxPeriod);
    model.locality = Int(root.at("locality"), "locality", 0, kMaxLocality);
    if (static_cast<long long>(model.alphabet) * model.period > kMaxTypes) {
      Fail("period", "alphabet × period = " +
                         std::to_string(static_cast<long long>(model.alphabet) * model.period) +
                         " types, over the limit of " + std::to_string(kMaxTypes) +
                         " (docs/formats.md §6.1)");
    }
    if (root.contains("tie_tolerance")) model.tie_tolerance = TieTolerance(root);
    const Expected d{model.width, "width"};
    if (tensors_) {
      // The configuration (layers and their heads' count) before any tensor is read.
      model.layers = ReadLayers(root.at("layers"), "layers", model);
      if (root.contains("meta")) model.meta_json = Meta(root.at("meta"));
      model.embedding = tensors_->ReadMatrix("embedding", {model.alphabet, "alphabet"}, d);
      model.positional = tensors_->ReadMatrix("positional", {model.period, "period"}, d);
      ReadLayerTensors(model);
      model.readout_weight = tensors_->ReadMatrix("readout.weight", {kAnyPositive, "k"}, d);
      model.readout_bias = tensors_->ReadVector(
          "readout.bias", {static_cast<long long>(model.readout_weight.rows()), "k"});
      return model;
    }
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
    ltsim::Fail(source_, prefix_.empty() || path.empty() ? prefix_ + path : prefix_ + "." + path,
                rule);
  }

  // A safetensors layer's tensors (docs/python.md): each head's qk, ov, bias, the MLP's.
  void ReadLayerTensors(Transformer& model) const {
    const Expected d{model.width, "width"};
    const Expected bias{static_cast<long long>(model.locality) + 1, "locality+1"};
    for (std::size_t l = 0; l < model.layers.size(); ++l) {
      Layer& layer = model.layers[l];
      const std::string prefix = "layers." + std::to_string(l) + ".";
      for (std::size_t h = 0; h < layer.heads.size(); ++h) {
        const std::string head = prefix + "heads." + std::to_string(h) + ".";
        layer.heads[h].qk = tensors_->ReadMatrix(head + "qk", d, d);
        layer.heads[h].ov = tensors_->ReadMatrix(head + "ov", d, d);
        layer.heads[h].bias = tensors_->ReadVector(head + "bias", bias);
      }
      if (layer.mlp) {
        layer.mlp->in = tensors_->ReadMatrix(prefix + "mlp.in", {kAnyPositive, "m"}, d);
        const Expected m{static_cast<long long>(layer.mlp->in.rows()), "m"};
        layer.mlp->in_bias = tensors_->ReadVector(prefix + "mlp.in_bias", m);
        layer.mlp->out = tensors_->ReadMatrix(prefix + "mlp.out", d, m);
      }
    }
  }

  // Format and version come first: a file of another format should not fail on its keys.
  void CheckFormat(const Json& root) const {
    if (!root.contains("format")) Fail("format", "missing key");
    const Json& format = root.at("format");
    if (format != kFormatName) {
      Fail("format", std::string("expected \"") + kFormatName + "\", got " + Shown(format));
    }
    if (!root.contains("version")) Fail("version", "missing key");
    const Json& version = root.at("version");
    if (!version.is_number_integer() || version != kFormatVersion) {
      Fail("version", "unsupported version " + Shown(version) + ", expected " +
                          std::to_string(kFormatVersion));
    }
  }

  void CheckKeys(const Json& object, const std::string& path, Keys allowed, Keys required) const {
    if (!object.is_object()) Fail(path, "expected an object, got " + Describe(object));
    for (const auto& item : object.items()) {
      const bool known = std::any_of(allowed.begin(), allowed.end(),
                                     [&](const char* key) { return item.key() == key; });
      if (!known)
        Fail(Child(path, item.key()),
             "unknown key" + DidYouMean(item.key(), {allowed.begin(), allowed.end()}));
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
    // Every row's shape before the matrix is allocated: its size is then what the file holds.
    for (size_t r = 0; r < value.size(); ++r) {
      const Json& row = value[r];
      const std::string row_name = "row " + std::to_string(r);
      if (!row.is_array()) {
        Fail(path, row_name + ": expected an array of numbers, got " + Describe(row));
      }
      CheckCount(row.size(), "columns", cols, path, row_name + " has ");
    }
    const Eigen::Index columns = value.empty() ? 0 : static_cast<Eigen::Index>(value[0].size());
    Matrix matrix(static_cast<Eigen::Index>(value.size()), columns);
    for (size_t r = 0; r < value.size(); ++r) {
      const Json& row = value[r];
      const std::string row_name = "row " + std::to_string(r);
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
    if (value.size() > static_cast<size_t>(kMaxLayers)) {
      Fail(path, "has " + std::to_string(value.size()) + " layers, over the limit of " +
                     std::to_string(kMaxLayers) + " (docs/formats.md §6.1)");
    }
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
    if (tensors_) {
      ConfigureHeadsAndMlp(value, path, layer);
      return layer;
    }
    if (!heads.is_array()) Fail(heads_path, "expected an array of heads, got " + Describe(heads));
    if (heads.empty()) Fail(heads_path, "must have at least one head");
    if (heads.size() > static_cast<size_t>(kMaxHeads)) {
      Fail(heads_path, "has " + std::to_string(heads.size()) + " heads, over the limit of " +
                           std::to_string(kMaxHeads) + " (docs/formats.md §6.1)");
    }
    for (size_t h = 0; h < heads.size(); ++h) {
      layer.heads.push_back(ReadHead(heads[h], Element(heads_path, h), model));
    }
    if (value.contains("mlp")) layer.mlp = ReadMlp(value.at("mlp"), Child(path, "mlp"), model);
    return layer;
  }

  // A safetensors layer: `heads` counts the heads (1 … kMaxHeads, and no more than the file
  // has tensors for), `mlp` says whether it has an MLP; the arrays are read later.
  void ConfigureHeadsAndMlp(const Json& value, const std::string& path, Layer& layer) const {
    const Json& heads = value.at("heads");
    const std::string heads_path = Child(path, "heads");
    if (!heads.is_number_integer())
      Fail(heads_path, "expected the number of heads, got " + Describe(heads));
    if (heads.is_number_unsigned() && heads.get<std::uint64_t>() > tensors_->Count())
      Fail(heads_path, "more heads than the file has tensors");
    layer.heads.resize(static_cast<std::size_t>(Int(heads, heads_path, 1, kMaxHeads)));
    if (value.contains("mlp")) {
      const Json& mlp = value.at("mlp");
      if (!mlp.is_boolean())
        Fail(Child(path, "mlp"), "expected true or false, got " + Describe(mlp));
      if (mlp.get<bool>()) layer.mlp = Mlp{};
    }
  }

  Attention ReadAttention(const Json& value, const std::string& path) const {
    return io::JsonReader(value, source_, Prefixed(path)).Enum(kAttentionNames);
  }

  BiasScaling ReadBiasScaling(const Json& value, const std::string& path) const {
    return io::JsonReader(value, source_, Prefixed(path)).Enum(kBiasScalingNames);
  }

  int PrecisionBits(const Json& layer, const std::string& path, Attention attention) const {
    const std::string key = Child(path, "precision_bits");
    const bool present = layer.contains("precision_bits");
    if (attention != Attention::kFinite) {
      if (present) Fail(key, "only allowed when attention is finite");
      return 0;
    }
    if (!present) Fail(key, "missing key (required when attention is finite)");
    return Int(layer.at("precision_bits"), key, 1, kMaxPrecisionBits);
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

  std::string Prefixed(const std::string& path) const {
    return prefix_.empty() ? path : prefix_ + "." + path;
  }

  const std::string& source_;
  const std::string& prefix_;
  TensorSource* tensors_;
};

}  // namespace

Transformer model_json::ReadModelDocument(const Json& root, const std::string& source,
                                          const std::string& prefix, TensorSource* tensors) {
  return ModelReader(source, prefix, tensors).Read(root);
}

Transformer ModelFromJson(const io::Json& json, const std::string& source) {
  const Transformer model = ReadModelDocument(json, source, "", nullptr);
  ValidateTransformer(model, source);
  return model;
}

Transformer ParseModel(const std::string& text, const std::string& source) {
  return ModelFromJson(io::ParseJson(text, source), source);
}

Transformer ReadModel(const std::string& path) {
  if (IsSafetensorsPath(path)) return ReadSafetensorsModel(path);
  return ModelFromJson(io::ReadJsonFile(path, "model file"), path);
}

}  // namespace ltsim
