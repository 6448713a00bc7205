// Exact byte form of a Transformer: field by field, in declaration order.
#include "ltsim/model/model_bytes.h"

namespace ltsim {

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
    out.Put(layer.attention);
    out.Put(layer.bias_scaling);
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
  m.embedding = in.GetMatrix();
  m.positional = in.GetMatrix();
  m.layers.resize(in.Get<std::uint64_t>());
  for (Layer& layer : m.layers) {
    layer.attention = in.Get<Attention>();
    layer.bias_scaling = in.Get<BiasScaling>();
    layer.precision_bits = in.Get<int>();
    layer.heads.resize(in.Get<std::uint64_t>());
    for (Head& head : layer.heads) {
      head.qk = in.GetMatrix();
      head.ov = in.GetMatrix();
      head.bias = in.GetEigenVector();
    }
    if (in.Get<bool>()) {
      Mlp mlp;
      mlp.in = in.GetMatrix();
      mlp.in_bias = in.GetEigenVector();
      mlp.out = in.GetMatrix();
      layer.mlp = std::move(mlp);
    }
  }
  m.readout_weight = in.GetMatrix();
  m.readout_bias = in.GetEigenVector();
  m.meta_json = in.GetString();
  return m;
}

}  // namespace ltsim
