// γ(f), T_hard, L(f), γ_pos and head regimes, exactly as docs/model.md §4 defines them.
#include "ltsim/model/constants.h"

#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ltsim/model/finite_rounding.h"

namespace ltsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Smallest difference > θ between two elements of `values` (sorted in place), or +∞.
double SmallestGap(std::vector<double>& values, double theta) {
  std::sort(values.begin(), values.end());
  double gap = kInf;
  for (std::size_t i = 0; i < values.size(); ++i) {
    // The nearest element more than θ above values[i].
    auto it = std::upper_bound(values.begin() + i, values.end(), values[i] + theta);
    if (it != values.end()) gap = std::min(gap, *it - values[i]);
  }
  return gap;
}

// The distinct far keys E_s + P_r' (equal keys give equal logits, a tie that never counts).
std::vector<Vector> DistinctFarKeys(const Transformer& model) {
  std::vector<Vector> keys;
  keys.reserve(static_cast<std::size_t>(model.types()));
  for (int s = 0; s < model.alphabet; ++s)
    for (int rk = 0; rk < model.period; ++rk)
      keys.push_back((model.embedding.row(s) + model.positional.row(rk)).transpose());
  const auto less = [](const Vector& a, const Vector& b) {
    return std::lexicographical_compare(a.data(), a.data() + a.size(), b.data(),
                                        b.data() + b.size());
  };
  std::sort(keys.begin(), keys.end(), less);
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// The logit set 𝒜 of docs/model.md §4.2 for one head and query type (y, r), given the distinct far
// keys.
std::vector<double> LogitSet(const Transformer& model, const Head& head, int y, int r,
                             const std::vector<Vector>& far_keys) {
  const int period = model.period;
  const Vector query = model.embedding.row(y).transpose() + model.positional.row(r).transpose();
  const Vector mq = head.qk * query;
  std::vector<double> set;
  set.reserve(far_keys.size() + static_cast<std::size_t>(model.alphabet) * model.locality + 1);
  for (const Vector& key : far_keys) set.push_back(key.dot(mq));
  for (int s = 0; s < model.alphabet; ++s) {
    const Vector token = model.embedding.row(s).transpose();
    for (int t = 1; t <= model.locality; ++t) {
      const int rk = ((r - t) % period + period) % period;
      set.push_back((token + model.positional.row(rk).transpose()).dot(mq) + head.bias[t]);
    }
  }
  set.push_back(query.dot(mq) + head.bias[0]);
  return set;
}

// Largest difference in (0, θ] between two elements of `values` (sorted in place), or 0.
double LargestNearTie(std::vector<double>& values, double theta) {
  std::sort(values.begin(), values.end());
  double spread = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    // The largest element at most θ above values[i].
    auto it = std::upper_bound(values.begin() + i, values.end(), values[i] + theta);
    spread = std::max(spread, *(it - 1) - values[i]);
  }
  return spread;
}

// Applies `visit` to the logit set 𝒜_h(y, r) of every first-layer head and query type.
template <class Visit>
void ForEachLogitSet(const Transformer& model, Visit visit) {
  const std::vector<Vector> far_keys = DistinctFarKeys(model);
  for (const Head& head : model.layers.front().heads)
    for (int y = 0; y < model.alphabet; ++y)
      for (int r = 0; r < model.period; ++r) {
        std::vector<double> set = LogitSet(model, head, y, r, far_keys);
        visit(set);
      }
}

}  // namespace

const char* HeadRegimeName(HeadRegime regime) {
  switch (regime) {
    case HeadRegime::kTokenDominated:
      return "token-dominated";
    case HeadRegime::kBalanced:
      return "balanced";
    case HeadRegime::kPositionDominated:
      return "position-dominated";
  }
  return "?";
}

double LogitMarginWork(const Transformer& model) {
  const double set = static_cast<double>(model.types()) +
                     static_cast<double>(model.alphabet) * model.locality + 1.0;
  return static_cast<double>(model.layers.front().heads.size()) * model.types() * set;
}

double LogitMargin(const Transformer& model) {
  if (LogitMarginWork(model) > kMaxLogitMarginWork) return std::numeric_limits<double>::quiet_NaN();
  double margin = kInf;
  ForEachLogitSet(model, [&](std::vector<double>& set) {
    margin = std::min(margin, SmallestGap(set, model.tie_tolerance));
  });
  return margin;
}

double NearTieSpread(const Transformer& model) {
  if (LogitMarginWork(model) > kMaxLogitMarginWork) return std::numeric_limits<double>::quiet_NaN();
  double spread = 0.0;
  ForEachLogitSet(model, [&](std::vector<double>& set) {
    spread = std::max(spread, LargestNearTie(set, model.tie_tolerance));
  });
  return spread;
}

double Log2SplitLength(const Transformer& model) {
  const Layer& layer = model.layers.front();
  if (layer.attention != Attention::kFinite) return std::numeric_limits<double>::quiet_NaN();
  const double nu = NearTieSpread(model);
  if (std::isnan(nu)) return nu;
  return nu == 0.0 ? kInf : layer.precision_bits / nu;
}

bool InFiniteHardmaxWindow(const Transformer& model, double length) {
  const Layer& layer = model.layers.front();
  if (layer.attention != Attention::kFinite || layer.bias_scaling != BiasScaling::kNone)
    return false;
  const double gamma = LogitMargin(model), nu = NearTieSpread(model);
  if (std::isnan(gamma) || std::isnan(nu)) return false;
  // γ and ν are rounded differences of two double logits: one ulp below γ and above ν hold the
  // exact ones, and the rule is monotone in the gap, so a key exactly γ below the maximum is
  // dropped and one ν below kept (FiniteKeyDropped decides exactly, docs/theory.md §8.6).
  const int p = layer.precision_bits;
  const bool past_hard =
      std::isinf(gamma) || FiniteKeyDropped(-std::nextafter(gamma, 0.0), 0.0, length, p);
  const bool before_split =
      nu == 0.0 || !FiniteKeyDropped(-std::nextafter(nu, kInf), 0.0, length, p);
  return past_hard && before_split;
}

double FiniteHardmaxDistance(const Transformer& model, double length) {
  const Layer& layer = model.layers.front();
  if (layer.attention != Attention::kFinite) return std::numeric_limits<double>::quiet_NaN();
  if (!InFiniteHardmaxWindow(model, length)) return kInf;  // no bound claimed outside
  const double nu = NearTieSpread(model);
  // 2·tanh(ν ln T/4), rounded up by a relative 1e-15 (tanh and the products round).
  return nu == 0.0 ? 0.0 : 2.0 * std::tanh(nu * std::log(length) / 4.0) * (1 + 1e-15);
}

double Log2HardmaxLength(const Transformer& model) {
  const Layer& layer = model.layers.front();
  if (layer.attention != Attention::kFinite) return std::numeric_limits<double>::quiet_NaN();
  const double gamma = LogitMargin(model);
  return std::isinf(gamma) ? 0.0 : layer.precision_bits / gamma;
}

double HardmaxLength(const Transformer& model) {
  const double log2_length = Log2HardmaxLength(model);
  return std::isnan(log2_length) ? log2_length : std::exp2(log2_length);
}

double ReadoutLipschitz(const Transformer& model) {
  const Layer& last = model.layers.back();
  const double product = last.mlp ? SpectralNorm(last.mlp->out) * SpectralNorm(last.mlp->in) : 0.0;
  double best = 0.0;
  for (Eigen::Index k = 0; k < model.readout_weight.rows(); ++k) {
    const double w = model.readout_weight.row(k).norm();
    double mlp = 0.0;
    if (last.mlp) {
      const Vector through = (model.readout_weight.row(k) * last.mlp->out).transpose();
      double units = 0.0;
      for (Eigen::Index j = 0; j < through.size(); ++j)
        units += std::abs(through[j]) * last.mlp->in.row(j).norm();
      mlp = std::min(w * product, units);
    }
    best = std::max(best, w + mlp);
  }
  return best;
}

double SpectralNorm(const Matrix& m) {
  if (m.size() == 0) return 0.0;
  Eigen::JacobiSVD<Matrix> svd(m);
  return svd.singularValues()(0);
}

namespace {

double InputRadius(const Transformer& model) {
  double radius = 0.0;
  for (int s = 0; s < model.alphabet; ++s)
    for (int r = 0; r < model.period; ++r)
      radius = std::max(radius, (model.embedding.row(s) + model.positional.row(r)).norm());
  return radius;
}

}  // namespace

double LipschitzConstant(const Transformer& model) {
  if (model.layers.size() != 1) return std::numeric_limits<double>::quiet_NaN();
  const Layer& layer = model.layers.front();
  double heads = 0.0;
  for (const Head& head : layer.heads) heads += SpectralNorm(head.ov);
  // ‖W‖·(1 + ‖B‖‖A‖)·Σ‖O_h‖·R, associated as MagnitudeBound's u + ‖B‖(‖A‖u) (u = R·Σ‖O_h‖)
  // so that every partial product is at most one of that bound's terms (spectral ≤
  // Frobenius): finite for every accepted model, and 0 when R or Σ‖O_h‖ is 0.
  const double u = InputRadius(model) * heads;
  const double mlp =
      layer.mlp ? SpectralNorm(layer.mlp->out) * (SpectralNorm(layer.mlp->in) * u) : 0.0;
  return SpectralNorm(model.readout_weight) * (u + mlp);
}

namespace {

// ln(1 + ‖B‖‖A‖) of a layer's MLP without overflow in the product (both norms are doubles for
// an accepted model, their product need not be).
double LogOnePlusGain(const Layer& layer) {
  if (!layer.mlp) return 0.0;
  const double a = SpectralNorm(layer.mlp->in), b = SpectralNorm(layer.mlp->out);
  const double gain = a * b;
  return std::isfinite(gain) ? std::log1p(gain) : std::log(a) + std::log(b);
}

}  // namespace

double LogComplexity(const Transformer& model) {
  if (model.layers.size() > 2) return std::numeric_limits<double>::quiet_NaN();
  const double r0 = InputRadius(model);
  const Layer& first = model.layers.front();
  double exponent = 0.0;
  double values = 0.0;
  for (const Head& head : first.heads) {
    const double o = SpectralNorm(head.ov);
    exponent += SpectralNorm(head.qk) * r0 * r0 + o * r0 + head.bias.cwiseAbs().maxCoeff();
    values += o;
  }
  // In logs, and r₁ = u + ‖B‖(‖A‖u) + ‖B‖‖b‖ (u = R₀(1 + Σ‖O_h‖)) associated like
  // MagnitudeBound: finite for every accepted model, where the product form could be ∞ or
  // 0·∞ (docs/formats.md §6.1).
  const double u = r0 * (1.0 + values);
  const double r1 = first.mlp
                        ? u + SpectralNorm(first.mlp->out) * (SpectralNorm(first.mlp->in) * u) +
                              SpectralNorm(first.mlp->out) * first.mlp->in_bias.norm()
                        : u;
  double log_poly = std::log1p(SpectralNorm(model.readout_weight));
  if (model.layers.size() == 1) return exponent + log_poly + LogOnePlusGain(first) + std::log1p(r0);
  const Layer& second = model.layers[1];
  double second_m = 0.0;
  double second_o = 0.0;
  for (const Head& head : second.heads) {
    second_m = std::max(second_m, SpectralNorm(head.qk));
    second_o += SpectralNorm(head.ov);
  }
  exponent += second_m * r1 * r1;
  log_poly += std::log1p(second_o) + LogOnePlusGain(second) + std::log1p(r1);
  return exponent + log_poly;
}

double Complexity(const Transformer& model) { return std::exp(LogComplexity(model)); }

double PositionalMargin(const Transformer& model) {
  double margin = kInf;
  for (const Head& head : model.layers.front().heads) {
    std::vector<double> set(head.bias.data(), head.bias.data() + head.bias.size());
    set.push_back(1.0);
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    if (set.size() >= 2) margin = std::min(margin, set[set.size() - 1] - set[set.size() - 2]);
  }
  return margin;
}

std::vector<HeadRegime> HeadRegimes(const Transformer& model) {
  std::vector<HeadRegime> regimes;
  for (const Head& head : model.layers.front().heads) {
    const double top = head.bias.maxCoeff();
    regimes.push_back(top < 1.0   ? HeadRegime::kTokenDominated
                      : top > 1.0 ? HeadRegime::kPositionDominated
                                  : HeadRegime::kBalanced);
  }
  return regimes;
}

}  // namespace ltsim
