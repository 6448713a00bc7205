// Writes the `ltsim-model` JSON format, one matrix row or bias per line.
#include <algorithm>
#include <fstream>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/io/output_file.h"
#include "ltsim/model/model_file.h"
#include "model/model_json.h"

namespace ltsim {
namespace {

using namespace model_json;

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

Json ModelJsonUnchecked(const Transformer& model) {
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

}  // namespace

std::string ModelToJson(const Transformer& model) {
  ValidateTransformer(model, "model");
  std::string out;
  Emit(ModelJsonUnchecked(model), 0, out);
  return out + '\n';
}

nlohmann::ordered_json ModelToJsonValue(const Transformer& model) {
  ValidateTransformer(model, "model");
  return ModelJsonUnchecked(model);
}

void WriteModel(const Transformer& model, const std::string& path) {
  ValidateTransformer(model, path);
  // A temporary file renamed over `path`: never a half-written or truncated model.
  io::WriteFileAtomically(path, ModelToJson(model));
}

}  // namespace ltsim
