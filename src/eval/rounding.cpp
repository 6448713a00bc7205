// The a-priori rounding bound of one-layer evaluation and its decision test (docs/theory.md §8.7).
#include "ltsim/eval/rounding.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/layer_math.h"
#include "ltsim/core/error.h"

namespace ltsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// γ_n = n·u/(1 − n·u): a chain of n roundings multiplies by at most 1 + γ_n (Higham, Lemma 3.1).
double Gamma(double n, double unit) {
  const double nu = n * unit;
  return nu < 0.5 ? nu / (1 - nu) : kInf;
}

// max_i Σ_j |m_ij|: the ∞-norm of |M|.
double RowSum(const Matrix& m) {
  return m.size() == 0 ? 0.0 : m.cwiseAbs().rowwise().sum().maxCoeff();
}

double MaxAbs(const Vector& v) { return v.size() == 0 ? 0.0 : v.cwiseAbs().maxCoeff(); }

// The activations' magnitudes and errors through the layer, given a bound on the ℓ1 error of
// every head's attention distribution (docs/theory.md §8.7, steps 4–6).
struct Propagated {
  double error = 0.0, scale = 0.0;
};

Propagated Propagate(const OneLayerRounding& r, double alpha_error) {
  const double u = r.unit, Y = r.input, e0 = r.input_error;
  const double gK = Gamma(r.depth, u);
  // u = y_q + Σ_h O_h Σ_j α_hj y_j: |û − u|_∞ ≤ e₀ + Σ_h |O_h|(‖Δα_h‖₁(Y + e₀) + e₀) + γ_K·(the
  // same sum in absolute values).
  double heads = 0.0, abs_sum = Y + e0;
  for (double o : r.value_norms) {
    heads += o * (alpha_error * (Y + e0) + e0);
    abs_sum += o * (1 + alpha_error) * (Y + e0);
  }
  Propagated p;
  p.error = e0 + heads + gK * abs_sum;
  p.scale = abs_sum;
  if (r.mlp) {
    const double A = r.mlp_in, B = r.mlp_out, b = r.mlp_bias;
    const double z_scale = A * (p.scale + p.error) + b;
    const double z_error = A * p.error + gK * z_scale;  // ReLU is 1-Lipschitz
    p.error = p.error + B * z_error + gK * (p.scale + p.error + B * z_scale);
    p.scale = p.scale + B * z_scale;
  }
  const double out_scale = r.readout * (p.scale + p.error) + r.readout_bias;
  p.error = r.readout * p.error + gK * out_scale;
  p.scale = out_scale;
  return p;
}

}  // namespace

OneLayerRounding MakeOneLayerRounding(const Transformer& model, std::uint64_t max_length,
                                      std::uint64_t terms, double unit) {
  LTSIM_CHECK(model.layers.size() == 1);
  OneLayerRounding r;
  r.model = &model;
  r.unit = unit;
  const Layer& layer = model.layers.front();
  // Per coordinate i: Y_i = max over types of |E_s,i| + |P_r,i|; Y = max_i Y_i.
  Vector column = Vector::Zero(model.width);
  for (int s = 0; s < model.alphabet; ++s)
    for (int p = 0; p < model.period; ++p)
      column = column.cwiseMax(
          (model.embedding.row(s).cwiseAbs() + model.positional.row(p).cwiseAbs()).transpose());
  const double Y = column.size() ? column.maxCoeff() : 0.0;
  r.input = Y;
  for (const Head& head : layer.heads) r.value_norms.push_back(RowSum(head.ov));
  if (layer.mlp) {
    r.mlp = true;
    r.mlp_in = RowSum(layer.mlp->in);
    r.mlp_out = RowSum(layer.mlp->out);
    r.mlp_bias = MaxAbs(layer.mlp->in_bias);
  }
  r.readout = RowSum(model.readout_weight);
  r.readout_bias = MaxAbs(model.readout_bias);
  r.input_error = unit * Y;  // y⁰ = E_s + P_r: one rounding
  const int d = model.width;
  const int m = layer.mlp ? static_cast<int>(layer.mlp->in.rows()) : 0;
  // The longest chain of roundings in any output: y⁰ (1), a weight and its mass and share (4),
  // the attention sums (terms, or terms·H where every head's slots enter one sum), O·acc or
  // α·(O y) (d + 2), the heads' sum (H + 1), the MLP (d + m + 3) and the readout (d + 2);
  // doubled for any association of the sums.
  const std::uint64_t H = layer.heads.size();
  r.depth =
      static_cast<int>((std::min<std::uint64_t>(terms, 1u << 24) * std::max<std::uint64_t>(H, 1) +
                        3 * static_cast<std::uint64_t>(d) + m + H + 16) *
                       2);
  r.log_length = std::log(static_cast<double>(std::max<std::uint64_t>(max_length, 1)));
  const double beta = layer.bias_scaling == BiasScaling::kLog ? r.log_length : 1.0;
  double delta = 0.0, G = 0.0;
  const Vector column_error = unit * column;  // |Δy_i| ≤ u·Y_i: y⁰ = E_s + P_r, one rounding
  const Vector column_hi = column + column_error;
  for (const Head& head : layer.heads) {
    // a = y_kᵀ M y_q + β·φ: |Δa| ≤ Σ_il |Δy_k,i||M_il||y_q,l| + |y_k,i||M_il||Δy_q,l| + rounding of
    // the two sums (2d + 6 roundings, with β and β·φ) of the same terms in absolute values, each
    // coordinate bounded by its own Y_i (a large coordinate M does not read costs nothing).
    const Matrix m_abs = head.qk.cwiseAbs();
    const double spread = column_error.dot(m_abs * column_hi) + column_hi.dot(m_abs * column_error);
    const double phi = MaxAbs(head.bias);
    const double g = column_hi.dot(m_abs * column_hi) + beta * phi;
    delta = std::max(delta, spread + Gamma(2 * d + 6, unit) * g);
    G = std::max(G, g);
  }
  r.logit = delta;
  r.logit_scale = G;
  r.output_scale = Propagate(r, 0.0).scale;
  return r;
}

double OutputBound(const OneLayerRounding& r, std::uint64_t length) {
  const Layer& layer = r.model->layers.front();
  const double u = r.unit;
  const double log_t = std::log(static_cast<double>(std::max<std::uint64_t>(length, 1)));
  // ρ_w: the log-ratio of a computed weight to the exact one (decisions certain).
  double rho = 0.0;
  switch (layer.attention) {
    case Attention::kHardmax:
      rho = 0.0;
      break;
    case Attention::kSoftmax:
      // exp(â − â*): the logits' errors (2δ), the subtraction (u·2G) and exp (2u).
      rho = 2 * r.logit + 2 * u * r.logit_scale + 2 * u;
      break;
    case Attention::kFinite:
      // 2^(log₂T·(â − â*)) for a kept key (|log₂w| < p): 2δ·ln T, three roundings of log₂w, exp2.
      rho = 2 * r.logit * log_t + 4 * u * layer.precision_bits + 2 * u;
      break;
  }
  // Masses w·n (one rounding) summed (γ_K) and divided (one rounding): every share is the exact
  // share of masses perturbed by e^(±ρ_m), whose ℓ1 distance is at most 2·tanh(ρ_m/2) ≤ ρ_m
  // (docs/theory.md §2.6's lemma), plus the final division's u; weights below 2^−1000 may be
  // subnormal: their shares are below 2^−900 absolutely.
  const double rho_m = rho + Gamma(r.depth, u) + 2 * u;
  const double alpha_error = std::min(2.0, rho_m + 2 * u + 0x1p-900);
  const double bound = Propagate(r, alpha_error).error;
  // Second-order terms (products of errors) are below a relative 1e-6 of the first-order ones.
  return std::isfinite(bound) ? bound * (1 + 1e-6) : kInf;
}

bool DecisionCertain(const OneLayerRounding& r, const Layer& layer, double a, double a_max,
                     double t_lo, double t_hi) {
  const double u = r.unit, delta = r.logit;
  switch (layer.attention) {
    case Attention::kSoftmax:
      return true;
    case Attention::kHardmax: {
      // The exact difference a* − a is within 2δ of the computed one; â* − θ and the compare
      // round once more.
      const double theta = r.model->tie_tolerance;
      const double margin = 2 * delta + 4 * u * (std::abs(a_max) + std::abs(a) + theta);
      return std::abs((a_max - a) - theta) > margin;
    }
    case Attention::kFinite: {
      const double gap = a_max - a;  // ≥ 0; its exact value is within 2δ + u·|gap|
      if (!std::isfinite(gap)) return false;
      const double p = layer.precision_bits;
      const double spread = 2 * delta + 4 * u * (std::abs(a_max) + std::abs(a));
      // Uncertain where log₂T·(gap ± spread) straddles p: log₂T in [p/(gap + spread),
      // p/(gap − spread)], widened by a relative 16u for log₂.
      const double lo = p / (gap + spread) * (1 - 16 * u);
      const double hi = gap - spread > 0 ? p / (gap - spread) * (1 + 16 * u) : kInf;
      const double l_lo = std::log2(t_lo) * (1 - 4 * u), l_hi = std::log2(t_hi) * (1 + 4 * u);
      return l_hi < lo || l_lo > hi;
    }
  }
  return false;
}

double StatisticErrorBound(const OneLayerRounding& r, const TypeCounts& counts) {
  const Transformer& model = *r.model;
  const Layer& layer = model.layers.front();
  const double T = static_cast<double>(counts.length);
  if (layer.attention != Attention::kSoftmax) {
    const double beta = BiasScale(layer.bias_scaling, T);
    const std::size_t m = counts.suffix.size();
    const Vector query = InputVector(model, counts.suffix[m - 1], counts.Residue(counts.length));
    for (const Head& head : layer.heads) {
      const Vector mq = head.qk * query;
      std::vector<double> logits;
      for (int rr = 0; rr < counts.period; ++rr)
        for (int s = 0; s < counts.alphabet; ++s)
          if (counts.count(s, rr) > 0)
            logits.push_back(Logit(InputVector(model, s, rr), mq, head, beta, -1));
      for (std::size_t t = 0; t < m; ++t) {
        const Token s = counts.suffix[m - 1 - t];
        logits.push_back(Logit(InputVector(model, s, counts.Residue(counts.length - t)), mq, head,
                               beta, static_cast<int>(t)));
      }
      const double a_max = *std::max_element(logits.begin(), logits.end());
      for (double a : logits)
        if (!DecisionCertain(r, layer, a, a_max, T, T)) return kInf;
    }
  }
  return OutputBound(r, counts.length);
}

}  // namespace ltsim
