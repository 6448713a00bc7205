// Exact byte form of a Transformer: field by field, in declaration order.
#include "ltsim/model/model_bytes.h"

#include <cstdint>

#include "ltsim/model/limits.h"

namespace ltsim {
namespace {

// An enum stored as its underlying int: read as that int and range-checked, never loaded as
// a value the enum does not have.
template <typename E>
E GetEnum(ByteReader& in, int last) {
  static_assert(sizeof(E) == sizeof(int));
  const int value = in.Get<int>();
  in.Require(value >= 0 && value <= last, "malformed model (an enum out of range)");
  return static_cast<E>(value);
}

bool Shape(const Matrix& m, Eigen::Index rows, Eigen::Index cols) {
  return m.rows() == rows && m.cols() == cols;
}

}  // namespace

void PutModel(ByteWriter& out, const Transformer& m) {
  out.PutString(m.name);
  out.Put(m.alphabet);
  out.Put(m.width);
  out.Put(m.period);
  out.Put(m.locality);
  out.Put(m.tie_tolerance);
  out.PutMatrix(m.embedding);
  out.PutMatrix(m.positional);
  out.Put<std::uint64_t>(m.layers.size());
  for (const Layer& layer : m.layers) {
    out.Put(static_cast<int>(layer.attention));
    out.Put(static_cast<int>(layer.bias_scaling));
    out.Put(layer.precision_bits);
    out.Put<std::uint64_t>(layer.heads.size());
    for (const Head& head : layer.heads) {
      out.PutMatrix(head.qk);
      out.PutMatrix(head.ov);
      out.PutEigenVector(head.bias);
    }
    out.Put<bool>(layer.mlp.has_value());
    if (layer.mlp) {
      out.PutMatrix(layer.mlp->in);
      out.PutEigenVector(layer.mlp->in_bias);
      out.PutMatrix(layer.mlp->out);
    }
  }
  out.PutMatrix(m.readout_weight);
  out.PutEigenVector(m.readout_bias);
  out.PutString(m.meta_json);
}

Transformer GetModel(ByteReader& in) {
  Transformer m;
  m.name = in.GetString();
  m.alphabet = in.Get<int>();
  m.width = in.Get<int>();
  m.period = in.Get<int>();
  m.locality = in.Get<int>();
  m.tie_tolerance = in.Get<double>();
  // Every size is checked before it shapes anything: bytes read from a file (a shard) may
  // hold any numbers (ByteReader::Require reports them as input there).
  in.Require(m.alphabet >= 1 && m.alphabet <= kMaxAlphabet && m.width >= 1 &&
                 m.width <= kMaxWidth && m.period >= 1 && m.period <= kMaxPeriod &&
                 m.locality >= 0 && m.locality <= kMaxLocality,
             "malformed model (a size out of range)");
  const Eigen::Index d = m.width;
  m.embedding = in.GetMatrix();
  m.positional = in.GetMatrix();
  in.Require(Shape(m.embedding, m.alphabet, d) && Shape(m.positional, m.period, d),
             "malformed model (embedding or positional shape)");
  const auto layers = in.Get<std::uint64_t>();
  in.Require(layers >= 1 && layers <= static_cast<std::uint64_t>(kMaxLayers),
             "malformed model (layer count)");
  m.layers.resize(layers);
  for (Layer& layer : m.layers) {
    layer.attention = GetEnum<Attention>(in, static_cast<int>(Attention::kFinite));
    layer.bias_scaling = GetEnum<BiasScaling>(in, static_cast<int>(BiasScaling::kLog));
    layer.precision_bits = in.Get<int>();
    const auto heads = in.Get<std::uint64_t>();
    in.Require(heads >= 1 && heads <= static_cast<std::uint64_t>(kMaxHeads),
               "malformed model (head count)");
    layer.heads.resize(heads);
    for (Head& head : layer.heads) {
      head.qk = in.GetMatrix();
      head.ov = in.GetMatrix();
      head.bias = in.GetEigenVector();
      in.Require(Shape(head.qk, d, d) && Shape(head.ov, d, d) &&
                     head.bias.size() == static_cast<Eigen::Index>(m.locality) + 1,
                 "malformed model (head shape)");
    }
    if (in.Get<bool>()) {
      Mlp mlp;
      mlp.in = in.GetMatrix();
      mlp.in_bias = in.GetEigenVector();
      mlp.out = in.GetMatrix();
      in.Require(mlp.in.rows() >= 1 && mlp.in.cols() == d && mlp.in_bias.size() == mlp.in.rows() &&
                     Shape(mlp.out, d, mlp.in.rows()),
                 "malformed model (MLP shape)");
      layer.mlp = std::move(mlp);
    }
  }
  m.readout_weight = in.GetMatrix();
  m.readout_bias = in.GetEigenVector();
  in.Require(m.readout_weight.rows() >= 1 && m.readout_weight.cols() == d &&
                 m.readout_bias.size() == m.readout_weight.rows(),
             "malformed model (readout shape)");
  m.meta_json = in.GetString();
  // A model read back from a file gets a model file's checks (finite weights within the
  // bound, docs/formats.md §6.1) before anything evaluates it.
  if (in.from_file()) ValidateTransformer(m, in.where());
  return m;
}

}  // namespace ltsim
