// Names of the layer options and the shape and range rules of docs/model.md §2, checked on a model.
#include "ltsim/model/transformer.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/model/limits.h"

namespace ltsim {
namespace {

// An expected size and the parameter it comes from, printed as "width = 3".
struct Expected {
  long long size;
  std::string label;
};

std::string NumberText(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Checks one model against docs/model.md §2; every message is "<source>: <key path>: <rule>".
// Rows, columns and entries count from 0, like the indices of the key paths.
class Validator {
 public:
  explicit Validator(const std::string& source) : source_(source) {}

  void Check(const Transformer& model) {
    CheckScalars(model);
    const int d = model.width;
    CheckMatrix(model.embedding, "embedding", {model.alphabet, "alphabet"}, {d, "width"});
    CheckMatrix(model.positional, "positional", {model.period, "period"}, {d, "width"});
    if (model.layers.empty()) Fail("layers", "must have at least one layer");
    for (size_t l = 0; l < model.layers.size(); ++l) {
      CheckLayer(model.layers[l], "layers[" + std::to_string(l) + "]", model);
    }
    if (model.readout_weight.rows() < 1) Fail("readout.weight", "has 0 rows, expected at least 1");
    const Expected k{model.readout_weight.rows(), "readout.weight rows"};
    CheckMatrix(model.readout_weight, "readout.weight", k, {d, "width"});
    CheckVector(model.readout_bias, "readout.bias", k);
    CheckMeta(model.meta_json);
    CheckModelLimits(model, source_);
  }

 private:
  [[noreturn]] void Fail(const std::string& path, const std::string& rule) const {
    throw InputError(source_ + ": " + path + ": " + rule);
  }

  void CheckAtLeast(long long value, long long min, const std::string& path) const {
    if (value < min) {
      Fail(path, "must be at least " + std::to_string(min) + ", got " + std::to_string(value));
    }
  }

  void CheckScalars(const Transformer& model) const {
    if (model.alphabet < 1 || model.alphabet > kMaxAlphabet) {
      Fail("alphabet", "must be between 1 and " + std::to_string(kMaxAlphabet) + ", got " +
                           std::to_string(model.alphabet));
    }
    CheckAtLeast(model.width, 1, "width");
    CheckAtLeast(model.period, 1, "period");
    CheckAtLeast(model.locality, 0, "locality");
    if (!std::isfinite(model.tie_tolerance) || model.tie_tolerance < 0) {
      Fail("tie_tolerance",
           "must be finite and at least 0, got " + NumberText(model.tie_tolerance));
    }
  }

  void CheckLayer(const Layer& layer, const std::string& path, const Transformer& model) const {
    if (layer.attention == Attention::kFinite) {
      CheckAtLeast(layer.precision_bits, 1, path + ".precision_bits");
    } else if (layer.precision_bits != 0) {
      Fail(path + ".precision_bits", "only allowed when attention is finite (got " +
                                         std::to_string(layer.precision_bits) + ")");
    }
    const Expected d{model.width, "width"};
    const Expected bias_length{static_cast<long long>(model.locality) + 1, "locality+1"};
    for (size_t h = 0; h < layer.heads.size(); ++h) {
      const Head& head = layer.heads[h];
      const std::string head_path = path + ".heads[" + std::to_string(h) + "]";
      CheckMatrix(head.qk, head_path + ".qk", d, d);
      CheckMatrix(head.ov, head_path + ".ov", d, d);
      CheckVector(head.bias, head_path + ".bias", bias_length);
    }
    if (layer.mlp) CheckMlp(*layer.mlp, path + ".mlp", d);
  }

  void CheckMlp(const Mlp& mlp, const std::string& path, const Expected& d) const {
    if (mlp.in.rows() < 1) Fail(path + ".in", "has 0 rows, expected at least 1");
    const Expected m{mlp.in.rows(), "mlp.in rows"};
    CheckMatrix(mlp.in, path + ".in", m, d);
    CheckVector(mlp.in_bias, path + ".in_bias", m);
    CheckMatrix(mlp.out, path + ".out", d, m);
  }

  void CheckMatrix(const Matrix& matrix, const std::string& path, const Expected& rows,
                   const Expected& cols) const {
    if (matrix.rows() != rows.size) {
      Fail(path, "has " + std::to_string(matrix.rows()) + " rows, expected " + rows.label + " = " +
                     std::to_string(rows.size));
    }
    if (matrix.cols() != cols.size) {
      Fail(path, "has " + std::to_string(matrix.cols()) + " columns, expected " + cols.label +
                     " = " + std::to_string(cols.size));
    }
    for (Eigen::Index r = 0; r < matrix.rows(); ++r) {
      for (Eigen::Index c = 0; c < matrix.cols(); ++c) {
        if (!std::isfinite(matrix(r, c))) {
          Fail(path, "row " + std::to_string(r) + ", column " + std::to_string(c) + ": " +
                         NumberText(matrix(r, c)) + " is not finite");
        }
      }
    }
  }

  void CheckVector(const Vector& vector, const std::string& path, const Expected& size) const {
    if (vector.size() != size.size) {
      Fail(path, "has " + std::to_string(vector.size()) + " entries, expected " + size.label +
                     " = " + std::to_string(size.size));
    }
    for (Eigen::Index i = 0; i < vector.size(); ++i) {
      if (!std::isfinite(vector(i))) {
        Fail(path, "entry " + std::to_string(i) + ": " + NumberText(vector(i)) + " is not finite");
      }
    }
  }

  // `meta` is free-form, but must stay a JSON object so that the model can be written.
  void CheckMeta(const std::string& meta_json) const {
    const auto meta = nlohmann::json::parse(meta_json, nullptr, /*allow_exceptions=*/false);
    if (!meta.is_object()) Fail("meta", "must be the text of a JSON object");
  }

  const std::string& source_;
};

}  // namespace

void ValidateTransformer(const Transformer& model, const std::string& source) {
  Validator(source).Check(model);
}

namespace {

template <class A>
bool SameArray(const A& a, const A& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}

}  // namespace

bool SameFunction(const Transformer& a, const Transformer& b) {
  if (a.alphabet != b.alphabet || a.width != b.width || a.period != b.period ||
      a.locality != b.locality || a.tie_tolerance != b.tie_tolerance ||
      a.layers.size() != b.layers.size())
    return false;
  for (std::size_t l = 0; l < a.layers.size(); ++l) {
    const Layer& x = a.layers[l];
    const Layer& y = b.layers[l];
    if (x.attention != y.attention || x.bias_scaling != y.bias_scaling ||
        x.precision_bits != y.precision_bits || x.heads.size() != y.heads.size() ||
        x.mlp.has_value() != y.mlp.has_value())
      return false;
  }
  // Shapes of the layers agree: compare every weight array in ForEachWeightArray's order.
  std::vector<const Matrix*> ma, mb;
  std::vector<const Vector*> va, vb;
  const auto collect = [](const Transformer& m, std::vector<const Matrix*>& mats,
                          std::vector<const Vector*>& vecs) {
    ForEachWeightArray(m, [&](const auto& array) {
      if constexpr (std::is_same_v<std::decay_t<decltype(array)>, Matrix>)
        mats.push_back(&array);
      else
        vecs.push_back(&array);
    });
  };
  collect(a, ma, va);
  collect(b, mb, vb);
  for (std::size_t i = 0; i < ma.size(); ++i)
    if (!SameArray(*ma[i], *mb[i])) return false;
  for (std::size_t i = 0; i < va.size(); ++i)
    if (!SameArray(*va[i], *vb[i])) return false;
  return true;
}

}  // namespace ltsim
