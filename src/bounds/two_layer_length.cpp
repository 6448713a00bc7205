// The a-priori constants and the proven length of `balanced-blocks` for two-layer pairs
// (docs/theory.md §4.8).
#include "ltsim/bounds/two_layer_length.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ltsim/model/constants.h"

namespace ltsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Vertex enumeration of the first layer's outputs: at most this many vertices D^(H+1).
constexpr double kMaxVertices = 4096;

double Get(const ConstantMap& c, const char* name) {
  const auto it = c.find(name);
  return it == c.end() ? kNaN : it->second;
}

Vector Input(const Transformer& m, int s, int r) {
  return m.embedding.row(s).transpose() + m.positional.row(r).transpose();
}

// Radius of a ball around `centre` holding every column of v.
double RadiusAbout(const Matrix& v, const Vector& centre) {
  return v.cols() == 0 ? 0.0 : (v.colwise() - centre).colwise().norm().maxCoeff();
}

Vector BoxCentre(const Matrix& v) { return (v.rowwise().minCoeff() + v.rowwise().maxCoeff()) / 2; }

// Σ_{i=1..N} ζ̂(i) with ζ̂(i) = 1 for i < 2τ + 2 and min(1, a·i^(−γ)) beyond: at most
// L₀ + a∫_{L₀}^{N} t^(−γ) dt, L₀ = max(2τ + 1, a^(1/γ)) (ζ̂ is non-increasing).
double ZetaSum(double a, double gamma, double tau, double n) {
  const double l0 = std::max(2 * tau + 1, std::pow(a, 1 / gamma));
  if (n <= l0) return n;
  const double integral = std::abs(gamma - 1) < 1e-12
                              ? std::log(n / l0)
                              : (std::pow(n, 1 - gamma) - std::pow(l0, 1 - gamma)) / (1 - gamma);
  return l0 + a * integral;
}

}  // namespace

TwoLayerLengthConstants ComputeTwoLayerLengthConstants(const Transformer& model) {
  TwoLayerLengthConstants k;
  if (model.layers.size() != 2) {
    k.reason = "not two layers";
    return k;
  }
  const Layer& first = model.layers[0];
  const Layer& second = model.layers[1];
  if (first.attention != Attention::kSoftmax || second.attention != Attention::kSoftmax) {
    k.reason = "both layers must be softmax";
    return k;
  }
  const int S = model.alphabet, P = model.period, D = model.types();
  const double tau = model.locality;
  for (const Head& g : second.heads)
    if (second.bias_scaling == BiasScaling::kLog && g.bias.maxCoeff() > 0) {
      k.reason = "a log-scaled second layer needs phi_2 <= 0";
      return k;
    }
  // Inputs y⁰ and their centre/radius.
  Matrix inputs(model.width, D);
  for (int r = 0; r < P; ++r)
    for (int s = 0; s < S; ++s) inputs.col(r * S + s) = Input(model, s, r);
  const Vector c0 = BoxCentre(inputs);
  const double lip1 =
      1.0 + (first.mlp ? SpectralNorm(first.mlp->out) * SpectralNorm(first.mlp->in) : 0.0);
  // First-layer heads: regime, γ_h, a_h, r_h, ρ_h.
  double lambda1 = 0, lambda_t = 0, zeta_a = 0, zeta_gamma = kInf;
  for (const Head& h : first.heads) {
    Matrix values(model.width, D);
    double rho = 0;
    for (int q = 0; q < D; ++q) {
      const Vector mq = h.qk * inputs.col(q);
      double lo = kInf, hi = -kInf;
      for (int kk = 0; kk < D; ++kk) {
        const double a = inputs.col(kk).dot(mq);
        lo = std::min(lo, a);
        hi = std::max(hi, a);
      }
      rho = std::max(rho, hi - lo);
      values.col(q) = h.ov * inputs.col(q);
    }
    const double r_h = RadiusAbout(values, BoxCentre(values));
    const double top = h.bias.maxCoeff();
    double gamma = 0, a = 0;
    bool token = false;
    if (first.bias_scaling == BiasScaling::kNone) {
      token = true;
      gamma = 1;
      a = 2 * (tau + 1) * std::exp(rho + std::max(0.0, top));
    } else if (top < 1) {
      token = true;
      gamma = 1 - top;
      a = 2 * (tau + 1) * std::exp(rho);
    } else if (top > 1) {
      double second_top = 1;
      for (Eigen::Index t = 0; t < h.bias.size(); ++t)
        if (h.bias[t] < top) second_top = std::max(second_top, h.bias[t]);
      gamma = top - second_top;
      a = (tau + 1) * std::exp(rho);
    } else {
      k.reason = "a balanced first-layer head (max phi = 1)";
      return k;
    }
    lambda1 += lip1 * r_h;
    if (token) lambda_t += lip1 * r_h * std::exp(rho);
    zeta_a = std::max(zeta_a, a);
    zeta_gamma = std::min(zeta_gamma, gamma);
  }
  if (first.heads.empty()) zeta_gamma = 1;
  // The set Y₁ of first-layer outputs: the vertices y⁰_q + Σ_h O_h y⁰_{κ_h} when there are at most
  // kMaxVertices (then Y₁ lies in their convex hull, or with an MLP₁ in a ball around its image),
  // else a ball from the triangle inequality.
  const int H = static_cast<int>(first.heads.size());
  const double vertices = std::pow(static_cast<double>(D), H + 1);
  Matrix v;  // vertices of u (before MLP₁), when enumerated
  Vector cu;
  double ru = 0;
  if (vertices <= kMaxVertices) {
    const int count = static_cast<int>(vertices);
    v.resize(model.width, count);
    std::vector<Matrix> images;
    for (const Head& h : first.heads) images.push_back(h.ov * inputs);
    for (int i = 0; i < count; ++i) {
      int code = i;
      Vector u = inputs.col(code % D);
      code /= D;
      for (int h = 0; h < H; ++h, code /= D) u += images[static_cast<std::size_t>(h)].col(code % D);
      v.col(i) = u;
    }
    cu = BoxCentre(v);
    ru = RadiusAbout(v, cu);
  } else {
    cu = c0;
    ru = RadiusAbout(inputs, c0);
    for (const Head& h : first.heads) {
      cu += h.ov * c0;
      ru += RadiusAbout(h.ov * inputs, h.ov * c0);
    }
  }
  const bool exact = vertices <= kMaxVertices && !first.mlp;
  Vector c1 = cu;
  if (first.mlp) c1 = cu + first.mlp->out * (first.mlp->in * cu + first.mlp->in_bias).cwiseMax(0.0);
  const double r1 = lip1 * ru;
  double s1 = 0, s2 = 0, s3 = 0, e2 = 1;
  for (const Head& g : second.heads) {
    const double m_norm = SpectralNorm(g.qk), o_norm = SpectralNorm(g.ov);
    double q_sup = 0, range = 0, r_o = 0;
    if (exact) {
      const Matrix mv = g.qk * v;
      q_sup = mv.colwise().norm().maxCoeff();
      const Matrix logits = v.transpose() * mv;  // (key vertex, query vertex)
      range = (logits.colwise().maxCoeff() - logits.colwise().minCoeff()).maxCoeff();
      const Matrix ov = g.ov * v;
      r_o = RadiusAbout(ov, BoxCentre(ov));
    } else {
      q_sup = (g.qk * c1).norm() + m_norm * r1;
      range = 2 * r1 * q_sup;
      r_o = o_norm * r1;
    }
    // A head whose value map is 0 adds nothing to y², so its terms are 0 even where e^(R_g)
    // overflows (a product with a zero factor is 0; inf·0 would make the bound NaN).
    if (std::isnan(range)) range = kInf;  // logits ±∞ at two vertices: no finite range
    const auto times = [](double a, double b) { return a == 0 || b == 0 ? 0.0 : a * b; };
    s1 += times(r_o, times(r1, m_norm));
    s2 += times(std::exp(range), o_norm + times(4 * r_o, q_sup));
    s3 += times(6 * std::exp(range), r_o);
    if (second.bias_scaling == BiasScaling::kNone) e2 = std::max(e2, std::exp(g.bias.maxCoeff()));
  }
  k.omega = ReadoutLipschitz(model);
  k.lambda1 = lambda1;
  k.lambda_t = lambda_t;
  k.zeta_a = zeta_a;
  k.zeta_gamma = zeta_gamma;
  k.s1 = s1;
  k.s2 = s2;
  k.s3 = s3;
  k.e2 = e2;
  return k;
}

double TwoLayerSimulationBound(const ConstantMap& c, double n, double block, double eps0,
                               double delta) {
  const double omega = Get(c, "tl_omega");
  if (std::isnan(omega)) return kNaN;
  const double S = Get(c, "S"), P = Get(c, "Delta"), tau = Get(c, "tau");
  const double lambda1 = Get(c, "tl_lambda1"), lambda_t = Get(c, "tl_lambda_t");
  const double a = Get(c, "tl_zeta_a"), gamma = Get(c, "tl_zeta_gamma");
  const double s1 = Get(c, "tl_s1"), s2 = Get(c, "tl_s2"), s3 = Get(c, "tl_s3");
  const double e2 = Get(c, "tl_e2");
  // K: the windows of the joint view (S^(τ+1)·Δ long ones, τ + 1 short ones) plus the cardinality.
  const double K = std::pow(S, tau + 1) * P + tau + 2;
  const double low = n - block - P - (tau + 1);  // n'' ≤ |z| − τ − 1 and ≤ Nℓ
  if (!(low >= 2 * tau + 2) || block < P) return kInf;
  const bool token = lambda_t > 0;
  const double segments = token ? 1 + std::ceil(std::log(1 / eps0) / std::log1p(delta)) : 1;
  const double unmatched = (2 * tau * n / block + 2 * segments * K * block + 4 * block + 4 * P +
                            4 * (tau + 1) * e2 + 2 * tau + 2) /
                           low;
  double histogram = 0;
  if (token) {
    const double nu0 = eps0 * low;
    histogram = K * block <= nu0 / 2 ? 2 * (eps0 + block / low) + 4 * delta +
                                           (16 * K * block + 6 * block + 6 * (tau + 1)) / nu0
                                     : 2.0;
  }
  const double last_histogram = (K * block + 2 * block + 2 * P) / low;
  const double zeta_last = std::min(1.0, a * std::pow(low, -gamma));
  const double zeta_mean = e2 * ZetaSum(a, gamma, tau, n) / low;
  // A product with a zero factor is 0 even when the other overflowed (the term is absent).
  const auto times = [](double a, double b) { return a == 0 || b == 0 ? 0.0 : a * b; };
  const double c_last = times(2 * lambda_t, last_histogram) + times(4 * lambda1, zeta_last);
  const double coupled = times(4 * lambda1, zeta_mean) + times(2 * lambda_t, histogram);
  return times(omega, times(c_last, 1 + s1) + times(s2, coupled) + times(s3, unmatched));
}

TwoLayerPlan TwoLayerLengthPlan(const ConstantMap& c) {
  TwoLayerPlan plan;
  const double eps = Get(c, "eps");
  if (std::isnan(Get(c, "tl_omega")) || !(eps > 0)) {
    plan.n = plan.bound = kNaN;
    return plan;
  }
  const double P = Get(c, "Delta");
  const bool token = Get(c, "tl_lambda_t") > 0;
  // The best parameters at n: ℓ on Δ·⌈2^(j/2)⌉; for each ℓ, ε₀ = 2^(−e) and δ = 2^(−d) by two
  // rounds of coordinate descent over e ∈ [1, 30] and d ∈ [0, 20] (any choice gives a valid
  // bound; the search only makes it small).
  auto best = [&](double n) {
    TwoLayerPlan p;
    p.n = n;
    const auto consider = [&](double block, int e, int d) {
      const double eps0 = token ? std::exp2(-e) : 1, delta = token ? std::exp2(-d) : 1;
      const double b = TwoLayerSimulationBound(c, n, block, eps0, delta);
      if (b < p.bound) {
        p.bound = b;
        p.block = block;
        p.eps0 = token ? eps0 : 0;
        p.delta = token ? delta : 0;
      }
      return b;
    };
    for (int j = 0; j < 2 * 200; ++j) {
      const double block = P * std::ceil(std::exp2(j / 2.0));
      if (block > n) break;
      if (!token) {
        consider(block, 0, 0);
        continue;
      }
      int e = 10, d = 6;
      for (int round = 0; round < 2; ++round) {
        double low = std::numeric_limits<double>::infinity();
        for (int k = 1; k <= 30; ++k) {
          const double b = consider(block, k, d);
          if (b < low) low = b, e = k;
        }
        low = std::numeric_limits<double>::infinity();
        for (int k = 0; k <= 20; ++k) {
          const double b = consider(block, e, k);
          if (b < low) low = b, d = k;
        }
      }
    }
    return p;
  };
  // The grid n = 2^(j/16): the first j up to 10^300 whose best bound is ≤ ε, by bisection
  // (the bound falls with n; the answer is checked at the n returned).
  int lo = 0, hi = 16 * 997;
  if (!(best(std::exp2(hi / 16.0)).bound <= eps)) return plan;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (best(std::exp2(mid / 16.0)).bound <= eps ? hi : lo) = mid;
  }
  plan = best(std::ceil(std::exp2(hi / 16.0)));
  if (!(plan.bound <= eps)) plan.n = kInf;
  return plan;
}

}  // namespace ltsim
