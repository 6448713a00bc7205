// The vocabulary of the `ltsim-model` reader and writer (private to src/model/): the format's
// name and version, and the strict JSON layer of every format (ltsim::io) under short names.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>

#include "ltsim/core/types.h"
#include "ltsim/io/json.h"
#include "ltsim/model/transformer.h"

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

/// An expected count and the parameter it comes from ("width"); size < 0 means "≥ 1".
struct Expected {
  long long size;
  std::string label;
};
inline constexpr long long kAnyPositive = -1;

/// Where a model's arrays come from when they are not in its JSON document: the tensors of a
/// safetensors file, named as docs/python.md lists them ("layers.0.heads.1.qk").
class TensorSource {
 public:
  virtual ~TensorSource() = default;
  /// Tensor `name` as a matrix of the expected shape; InputError naming it otherwise.
  virtual Matrix ReadMatrix(const std::string& name, const Expected& rows,
                            const Expected& cols) = 0;
  virtual Vector ReadVector(const std::string& name, const Expected& size) = 0;
  /// How many tensors there are (a head needs three: a larger head count cannot be complete).
  virtual std::size_t Count() const = 0;
};

/// The one strict reader of a model's configuration, shared by both model formats: the JSON
/// document of a model file (tensors == nullptr: the arrays are in it), or a safetensors
/// file's `__metadata__.ltsim` (the arrays from `tensors`; each layer's `heads` a count and
/// `mlp` a flag). Same keys, limits, ranges and messages; `prefix` starts every key path
/// ("__metadata__.ltsim"). The model is not yet validated (ValidateTransformer).
Transformer ReadModelDocument(const Json& root, const std::string& source,
                              const std::string& prefix, TensorSource* tensors);

}  // namespace ltsim::model_json
