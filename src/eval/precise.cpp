// The semantics of docs/model.md §3 in 50 digits: one layer from type counts, two layers by a
// streaming pass (docs/design.md §5: a claimed counterexample is re-computed in higher precision).
#include "ltsim/eval/precise.h"

#include <algorithm>
#include <bit>
#include <boost/multiprecision/cpp_int.hpp>
#include <iomanip>
#include <optional>
#include <sstream>

#include "ltsim/core/error.h"
#include "ltsim/model/finite_rounding.h"

namespace ltsim {
namespace {

using Real = PreciseReal;
using PVec = PreciseVector;

// A matrix converted exactly from doubles, row-major.
struct PMat {
  Eigen::Index rows = 0, cols = 0;
  std::vector<Real> a;
};

PMat Convert(const Matrix& m) {
  PMat out{m.rows(), m.cols(), {}};
  out.a.reserve(static_cast<std::size_t>(m.size()));
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) out.a.emplace_back(m(i, j));
  return out;
}

PVec Convert(const Vector& v) { return PVec(v.data(), v.data() + v.size()); }

PVec Mul(const PMat& m, const PVec& v) {
  LTSIM_CHECK(static_cast<Eigen::Index>(v.size()) == m.cols);
  PVec out(static_cast<std::size_t>(m.rows));
  for (Eigen::Index i = 0; i < m.rows; ++i) {
    Real sum = 0;
    for (Eigen::Index j = 0; j < m.cols; ++j) sum += m.a[i * m.cols + j] * v[j];
    out[i] = sum;
  }
  return out;
}

Real Dot(const PVec& a, const PVec& b) {
  Real sum = 0;
  for (std::size_t k = 0; k < a.size(); ++k) sum += a[k] * b[k];
  return sum;
}

void AddScaled(PVec& acc, const Real& w, const PVec& y) {
  for (std::size_t k = 0; k < acc.size(); ++k) acc[k] += w * y[k];
}

struct PHead {
  PMat qk, ov;
  PVec bias;
};

struct PLayer {
  const Layer* layer = nullptr;  // mode, scaling, p
  std::vector<PHead> heads;
  bool mlp = false;
  PMat in, out;
  PVec in_bias;
};

// Per first-layer head, for the streaming pass (D ≤ kMaxTableTypes): logits(q, κ) =
// y⁰_κᵀ M y⁰_q by query type q and key type κ, and for softmax exps(q, κ) = e^logits(q, κ) and
// e^φ[t]. Softmax weights are then e^a / Σ e^a, which equals docs/model.md §3's
// e^(a − a*) / Σ e^(a − a*) exactly (the shift cancels). cpp_bin_float_50's binary exponent
// is an int (e^a overflows for a of order 10^9), so the exps are only tabled when every
// |a| + ln 2^64·|φ[t]| ≤ kMaxTabledExponent; beyond
// (logits up to 10^100 are valid, docs/formats.md §6.1) e^a would overflow to ∞ and ∞/∞ = NaN,
// and the per-key path with the shift by a* is used instead.
constexpr double kMaxTabledExponent = 1e7;
struct HeadTable {
  std::vector<Real> logits, exps, bias_exps;
};

// The model in PreciseReal, with y⁰ of every type (token s, residue r) at index r·S + s.
struct PModel {
  const Transformer* model = nullptr;
  Real theta;
  std::vector<PVec> inputs;
  std::vector<PLayer> layers;
  PMat readout;
  PVec readout_bias;
  std::vector<HeadTable> tables;  // first layer; empty unless BuildTables ran
  // Per first-layer head: (Σ|M|·max|y⁰|², max|φ|), the logit scale of ExactDecisions.
  std::vector<std::pair<Real, Real>> logit_scales;
};

PModel Convert(const Transformer& model) {
  PModel m;
  m.model = &model;
  m.theta = model.tie_tolerance;
  for (int r = 0; r < model.period; ++r)
    for (int s = 0; s < model.alphabet; ++s) {
      PVec y = Convert(Vector(model.embedding.row(s).transpose()));
      const PVec p = Convert(Vector(model.positional.row(r).transpose()));
      for (std::size_t k = 0; k < y.size(); ++k) y[k] += p[k];
      m.inputs.push_back(std::move(y));
    }
  for (const Layer& layer : model.layers) {
    PLayer l;
    l.layer = &layer;
    for (const Head& h : layer.heads)
      l.heads.push_back({Convert(h.qk), Convert(h.ov), Convert(h.bias)});
    if (layer.mlp) {
      l.mlp = true;
      l.in = Convert(layer.mlp->in);
      l.out = Convert(layer.mlp->out);
      l.in_bias = Convert(layer.mlp->in_bias);
    }
    m.layers.push_back(std::move(l));
  }
  m.readout = Convert(model.readout_weight);
  m.readout_bias = Convert(model.readout_bias);
  Real y = 0;
  for (const PVec& input : m.inputs)
    for (const Real& v : input) y = std::max(y, Real(abs(v)));
  for (const Head& head : model.layers.front().heads)
    m.logit_scales.push_back({Real(head.qk.cwiseAbs().sum()) * y * y,
                              Real(head.bias.size() ? head.bias.cwiseAbs().maxCoeff() : 0.0)});
  return m;
}

// Tables cost D² entries a head; past this the streaming pass computes logits per key.
constexpr int kMaxTableTypes = 64;

void BuildTables(PModel& m) {
  const int types = m.model->types();
  const PLayer& l = m.layers.front();
  const bool softmax = l.layer->attention == Attention::kSoftmax;
  for (const PHead& head : l.heads) {
    HeadTable t;
    for (int q = 0; q < types; ++q) {
      const PVec mq = Mul(head.qk, m.inputs[q]);
      for (int k = 0; k < types; ++k) t.logits.push_back(Dot(m.inputs[k], mq));
    }
    Real largest = 0;
    for (const Real& a : t.logits) largest = std::max(largest, Real(abs(a)));
    Real bias = 0;
    for (const Real& phi : head.bias) bias = std::max(bias, Real(abs(phi)));
    if (softmax && largest + 45 * bias <= kMaxTabledExponent) {
      for (const Real& a : t.logits) t.exps.push_back(exp(a));
      for (const Real& phi : head.bias) t.bias_exps.push_back(exp(phi));
    }
    m.tables.push_back(std::move(t));
  }
}

// log₂ i, exact when i is a power of two: the finite rule of docs/model.md §3 compares log₂ w
// with −p, and at i = T_hard = 2^(p/γ) the comparison is an exact equality that must fall as in
// double.
Real Log2(std::uint64_t i) {
  if (std::has_single_bit(i)) return Real(std::countr_zero(i));
  static const Real kLn2 = log(Real(2));
  return log(Real(i)) / kLn2;
}

// What a query at 1-based position i uses of its position: β(i) and log₂ i.
struct Position {
  std::uint64_t i = 1;
  Real log_i, log2_i;
  explicit Position(std::uint64_t position)
      : i(position), log_i(log(Real(position))), log2_i(Log2(position)) {}
  Real Beta(const Layer& layer) const {
    return layer.bias_scaling == BiasScaling::kLog ? log_i : Real(1);
  }
};

// AttentionWeight of layer_math.h, rule for rule, in PreciseReal.
Real Weight(const Layer& layer, const Real& theta, const Real& a, const Real& a_max,
            const Position& at) {
  switch (layer.attention) {
    case Attention::kSoftmax:
      return exp(a - a_max);
    case Attention::kHardmax:
      return a >= a_max - theta ? Real(1) : Real(0);
    case Attention::kFinite: {
      // Dropped exactly when (a* − a)·ln i ≥ p·ln 2 (docs/theory.md §8.6): the 168-bit product
      // decides outside 2^(−150) relative of p, FiniteGapDropped (332 bits, exact for a power of
      // two) within it, as the double evaluators do for their logits.
      const Real log2_w = at.log2_i * (a - a_max);
      static const Real kMargin = ldexp(Real(1), -150);
      const int p = layer.precision_bits;
      const bool dropped =
          log2_w <= -p * (1 + kMargin) ||
          (log2_w < -p * (1 - kMargin) &&
           FiniteGapDropped(RoundingReal(a_max) - RoundingReal(a), static_cast<double>(at.i), p));
      if (dropped) return Real(0);
      static const Real kLn2 = log(Real(2));
      return exp(log2_w * kLn2);
    }
  }
  return Real(0);
}

// y = u + B·ReLU(A u + b).
PVec ApplyMlp(const PLayer& l, PVec u) {
  if (!l.mlp) return u;
  PVec hidden = Mul(l.in, u);
  for (std::size_t k = 0; k < hidden.size(); ++k) {
    hidden[k] += l.in_bias[k];
    if (hidden[k] < 0) hidden[k] = 0;
  }
  const PVec add = Mul(l.out, hidden);
  for (std::size_t k = 0; k < u.size(); ++k) u[k] += add[k];
  return u;
}

PVec Readout(const PModel& m, const PVec& y) {
  PVec out = Mul(m.readout, y);
  for (std::size_t k = 0; k < out.size(); ++k) out[k] += m.readout_bias[k];
  return out;
}

// What the first layer sees at position i: far counts by type (j ≤ i − τ − 1) and the
// window's types, newest (the query, t = 0) first.
struct View {
  const std::vector<std::uint64_t>* far = nullptr;
  std::vector<int> newest_first;
  std::uint64_t length = 0;
};

// Softmax from the tables: weight e^a per key, so no per-key exp (see HeadTable).
PreciseHeadAttention AttendSoftmax(const HeadTable& t, const PHead& head, const View& v,
                                   const Position& at, bool log_scaling) {
  const std::vector<std::uint64_t>& far = *v.far;
  const std::size_t row = static_cast<std::size_t>(v.newest_first.front()) * far.size();
  PreciseHeadAttention out;
  out.far.assign(far.size(), Real(0));
  out.suffix.assign(v.newest_first.size(), Real(0));
  Real total = 0;
  for (std::size_t k = 0; k < far.size(); ++k) {
    if (far[k] == 0) continue;
    out.far[k] = t.exps[row + k] * Real(far[k]);
    total += out.far[k];
  }
  for (std::size_t j = 0; j < out.suffix.size(); ++j) {
    // e^(logit + β·φ[j]) with β = ln i for `log`: e^logit · i^φ[j].
    const Real bias = log_scaling ? Real(exp(at.log_i * head.bias[j])) : t.bias_exps[j];
    out.suffix[j] = t.exps[row + v.newest_first[j]] * bias;
    total += out.suffix[j];
  }
  for (Real& w : out.far) w /= total;
  for (Real& w : out.suffix) w /= total;
  return out;
}

using Rational = boost::multiprecision::cpp_rational;

// The content part of a first-layer logit, (E_s + P_r)ᵀ M_h (E_y + P_r') for key type k and query
// type q, in rational arithmetic (every double converts exactly).
Rational ExactContent(const Transformer& model, std::size_t h, int k, int q) {
  const int S = model.alphabet, d = model.width;
  const Head& head = model.layers.front().heads[h];
  std::vector<Rational> yk(d), yq(d);
  for (int i = 0; i < d; ++i) {
    yk[i] = Rational(model.embedding(k % S, i)) + Rational(model.positional(k / S, i));
    yq[i] = Rational(model.embedding(q % S, i)) + Rational(model.positional(q / S, i));
  }
  Rational sum = 0;
  for (int i = 0; i < d; ++i) {
    if (yk[i] == 0) continue;
    Rational mq = 0;
    for (int l = 0; l < d; ++l)
      if (head.qk(i, l) != 0 && yq[l] != 0) mq += Rational(head.qk(i, l)) * yq[l];
    sum += yk[i] * mq;
  }
  return sum;
}

RoundingReal ToRounding(const Rational& x) {
  return RoundingReal(boost::multiprecision::numerator(x)) /
         RoundingReal(boost::multiprecision::denominator(x));
}

// A first-layer logit exactly: c + β(i)·φ with c and φ rational and β(i) = 1 or ln i. A
// difference of two is exact when their φ are equal (or β = 1); otherwise it involves ln i, and
// is evaluated in 332 bits (RoundingReal), where it is never exactly 0, θ or p/log₂i for i > 1:
// e^q is irrational for a rational q ≠ 0, and ln i/ln 2 is irrational or i is a power of two.
struct ExactLogit {
  Rational content, phi;
  // (this − other) as an exact rational when possible.
  bool ExactDifference(const ExactLogit& other, bool log_scaling, Rational& out) const {
    if (!log_scaling) {
      out = (content + phi) - (other.content + other.phi);
      return true;
    }
    if (phi != other.phi) return false;
    out = content - other.content;
    return true;
  }
  RoundingReal Difference(const ExactLogit& other, const RoundingReal& beta) const {
    return ToRounding(content - other.content) + beta * ToRounding(phi - other.phi);
  }
};

// Whether a finite key an exact gap below the maximum is dropped at position i: exactly for a
// power of two i = 2^m (m·gap ≥ p), else FiniteGapDropped on the gap in 332 bits (docs/theory.md
// §8.6).
bool ExactGapDropped(const Rational& gap, std::uint64_t i, int bits) {
  if (!(gap > 0) || i <= 1) return false;
  if (std::has_single_bit(i)) return gap * std::countr_zero(i) >= bits;
  return FiniteGapDropped(ToRounding(gap), static_cast<double>(i), bits);
}

// The first layer's hardmax and finite decisions that lie within 2^(−140) of the head's logit
// scale of their boundary in the 168-bit logits (whose error is far below that), decided for the
// exact logits of the weights (docs/theory.md §8.7): slot j (far types, then suffix positions) gets
// weight 0 or 1 (hardmax), 0 (finite, dropped), or keeps its 168-bit weight.
class ExactDecisions {
 public:
  ExactDecisions(const PModel& m, std::size_t h, const View& v, const PVec& far_logits,
                 const PVec& suffix_logits, const Real& a_max, const Position& at) {
    const Layer& layer = *m.layers.front().layer;
    if (layer.attention == Attention::kSoftmax) return;
    const bool log_scaling = layer.bias_scaling == BiasScaling::kLog;
    const std::vector<std::uint64_t>& far = *v.far;
    const std::size_t slots = far.size() + suffix_logits.size();
    static const Real kMargin = ldexp(Real(1), -140);
    // The head's logit scale: Σ|M|·max|y|² + β·max|φ|, which the 168-bit logits' error is at most
    // 2^(−150) of (docs/theory.md §8.7).
    const Real scale = m.logit_scales[h].first + at.Beta(layer) * m.logit_scales[h].second;
    const auto logit = [&](std::size_t j) -> const Real& {
      return j < far.size() ? far_logits[j] : suffix_logits[j - far.size()];
    };
    const auto present = [&](std::size_t j) { return j >= far.size() || far[j] > 0; };
    const Real margin = kMargin * (scale + 1);
    const auto near = [&](std::size_t j) {
      const Real gap = a_max - logit(j);
      if (layer.attention == Attention::kHardmax) return abs(gap - m.theta) <= margin;
      return abs(at.log2_i * gap - layer.precision_bits) <= at.log2_i * margin;
    };
    std::vector<std::size_t> close;
    for (std::size_t j = 0; j < slots; ++j)
      if (present(j) && near(j)) close.push_back(j);
    if (close.empty()) return;
    const Transformer& model = *m.model;
    const Head& head = model.layers.front().heads[h];
    const int q = v.newest_first.front();
    const auto exact = [&](std::size_t j) {
      if (j < far.size()) return ExactLogit{ExactContent(model, h, static_cast<int>(j), q), 0};
      const std::size_t t = j - far.size();
      return ExactLogit{ExactContent(model, h, v.newest_first[t], q), Rational(head.bias[t])};
    };
    const RoundingReal beta = log_scaling ? log(RoundingReal(at.i)) : RoundingReal(1);
    // a*: the largest exact logit among the keys within the margin of the 168-bit maximum.
    std::optional<ExactLogit> a_star;
    for (std::size_t j = 0; j < slots; ++j) {
      if (!present(j) || a_max - logit(j) > margin) continue;
      const ExactLogit a = exact(j);
      Rational diff;
      const bool above = !a_star || (a.ExactDifference(*a_star, log_scaling, diff)
                                         ? diff > 0
                                         : a.Difference(*a_star, beta) > 0);
      if (above) a_star = a;
    }
    LTSIM_CHECK(a_star.has_value());
    decided_.assign(slots, -1);
    for (std::size_t j : close) {
      const ExactLogit a = exact(j);
      Rational gap;
      if (a_star->ExactDifference(a, log_scaling, gap)) {
        if (layer.attention == Attention::kHardmax)
          decided_[j] = gap <= Rational(model.tie_tolerance) ? 1 : 0;
        else
          decided_[j] = ExactGapDropped(gap, at.i, layer.precision_bits) ? 0 : 2;
      } else {
        const RoundingReal g = a_star->Difference(a, beta);
        if (layer.attention == Attention::kHardmax)
          decided_[j] = g <= RoundingReal(model.tie_tolerance) ? 1 : 0;
        else
          decided_[j] =
              FiniteGapDropped(g, static_cast<double>(at.i), layer.precision_bits) ? 0 : 2;
      }
    }
  }

  // The weight of a slot whose 168-bit weight is `weight` (logit a, maximum a_max).
  Real Apply(std::size_t slot, const Real& weight, const Layer& layer, const Real& a,
             const Real& a_max, const Position& at) const {
    if (decided_.empty() || decided_[slot] < 0) return weight;
    if (decided_[slot] == 0) return Real(0);
    if (layer.attention == Attention::kHardmax) return Real(1);
    if (weight != 0) return weight;  // kept either way
    static const Real kLn2 = log(Real(2));
    return exp(at.log2_i * (a - a_max) * kLn2);  // kept by the exact logits
  }

 private:
  std::vector<int> decided_;
};

// Head h's attention at the view's last position (one_layer.cpp's AttendHead).
PreciseHeadAttention Attend(const PModel& m, std::size_t h, const View& v) {
  const Layer& layer = *m.layers.front().layer;
  const PHead& head = m.layers.front().heads[h];
  const Position at(v.length);
  const HeadTable* table = m.tables.empty() ? nullptr : &m.tables[h];
  if (table && layer.attention == Attention::kSoftmax && !table->exps.empty())
    return AttendSoftmax(*table, head, v, at, layer.bias_scaling == BiasScaling::kLog);
  const Real beta = at.Beta(layer);
  const std::vector<std::uint64_t>& far = *v.far;
  const std::size_t row = static_cast<std::size_t>(v.newest_first.front()) * far.size();
  const PVec mq = table ? PVec() : Mul(head.qk, m.inputs[v.newest_first.front()]);
  const auto key_logit = [&](std::size_t k) {
    return table ? table->logits[row + k] : Dot(m.inputs[k], mq);
  };
  PVec far_logits(far.size()), suffix_logits(v.newest_first.size());
  bool any = false;
  Real a_max = 0;
  const auto raise = [&](const Real& a) {
    if (!any || a > a_max) a_max = a;
    any = true;
  };
  for (std::size_t k = 0; k < far.size(); ++k) {
    if (far[k] == 0) continue;
    far_logits[k] = key_logit(k);
    raise(far_logits[k]);
  }
  for (std::size_t t = 0; t < suffix_logits.size(); ++t) {
    suffix_logits[t] = key_logit(v.newest_first[t]) + beta * head.bias[t];
    raise(suffix_logits[t]);
  }
  // A decision within the 168-bit logits' rounding of its boundary is taken for the exact
  // logits of the weights instead (docs/theory.md §8.7): `exact` holds 0/1 weights of hardmax
  // and dropped finite keys, −1 where the 168-bit decision stands.
  const ExactDecisions exact(m, h, v, far_logits, suffix_logits, a_max, at);
  PreciseHeadAttention out;
  out.far.assign(far.size(), Real(0));
  out.suffix.assign(suffix_logits.size(), Real(0));
  Real total = 0;
  for (std::size_t k = 0; k < far.size(); ++k) {
    if (far[k] == 0) continue;
    out.far[k] = exact.Apply(k, Weight(layer, m.theta, far_logits[k], a_max, at), layer,
                             far_logits[k], a_max, at) *
                 Real(far[k]);
    total += out.far[k];
  }
  for (std::size_t t = 0; t < suffix_logits.size(); ++t) {
    out.suffix[t] = exact.Apply(far.size() + t, Weight(layer, m.theta, suffix_logits[t], a_max, at),
                                layer, suffix_logits[t], a_max, at);
    total += out.suffix[t];
  }
  LTSIM_CHECK(total > 0);  // the maximal key has weight 1
  for (Real& w : out.far) w /= total;
  for (Real& w : out.suffix) w /= total;
  return out;
}

// y¹ at the view's position: query + Σ_h O_h Σ_j α_j y⁰_j, then the MLP.
PVec FirstLayerAt(const PModel& m, const View& v) {
  const PLayer& l = m.layers.front();
  PVec u = m.inputs[v.newest_first.front()];
  for (std::size_t h = 0; h < l.heads.size(); ++h) {
    const PHead& head = l.heads[h];
    const PreciseHeadAttention a = Attend(m, h, v);
    PVec acc(u.size(), Real(0));
    for (std::size_t k = 0; k < a.far.size(); ++k)
      if (a.far[k] != 0) AddScaled(acc, a.far[k], m.inputs[k]);
    for (std::size_t t = 0; t < a.suffix.size(); ++t)
      if (a.suffix[t] != 0) AddScaled(acc, a.suffix[t], m.inputs[v.newest_first[t]]);
    const PVec add = Mul(head.ov, acc);
    for (std::size_t k = 0; k < u.size(); ++k) u[k] += add[k];
  }
  return ApplyMlp(l, std::move(u));
}

View ViewOf(const Transformer& model, const TypeCounts& counts) {
  LTSIM_CHECK(counts.alphabet == model.alphabet && counts.period == model.period &&
              counts.locality == model.locality && !counts.suffix.empty());
  View v;
  v.far = &counts.far;
  v.length = counts.length;
  const std::size_t m = counts.suffix.size();
  for (std::size_t t = 0; t < m; ++t)
    v.newest_first.push_back(
        counts.TypeIndex(counts.suffix[m - 1 - t], counts.Residue(counts.length - t)));
  return v;
}

// The second layer at T over the keys y¹_1 … y¹_T (two_layer.cpp, without its shortcuts).
PVec SecondLayer(const PModel& m, const std::vector<PVec>& y) {
  const PLayer& l = m.layers[1];
  const Layer& layer = *l.layer;
  const std::uint64_t length = y.size();
  const Position at(length);
  const Real beta = at.Beta(layer);
  const std::uint64_t tau = static_cast<std::uint64_t>(m.model->locality);
  PVec u = y.back();
  PVec logits(y.size());
  for (const PHead& head : l.heads) {
    const PVec mq = Mul(head.qk, y.back());
    Real a_max = 0;
    for (std::size_t j = 0; j < y.size(); ++j) {
      const std::uint64_t t = length - 1 - j;
      logits[j] = Dot(y[j], mq);
      if (t <= tau) logits[j] += beta * head.bias[t];
      if (j == 0 || logits[j] > a_max) a_max = logits[j];
    }
    PVec acc(u.size(), Real(0));
    Real total = 0;
    for (std::size_t j = 0; j < y.size(); ++j) {
      const Real w = Weight(layer, m.theta, logits[j], a_max, at);
      if (w == 0) continue;
      AddScaled(acc, w, y[j]);
      total += w;
    }
    LTSIM_CHECK(total > 0);
    for (Real& a : acc) a /= total;
    const PVec add = Mul(head.ov, acc);
    for (std::size_t k = 0; k < u.size(); ++k) u[k] += add[k];
  }
  return ApplyMlp(l, std::move(u));
}

// y¹_i for i = 1..T, in one pass with running far counts and the τ-suffix.
std::vector<PVec> StreamFirstLayer(const PModel& m, const Source& x) {
  const Transformer& model = *m.model;
  std::vector<std::uint64_t> far(static_cast<std::size_t>(model.types()), 0);
  std::vector<int> window;  // oldest first, at most τ + 1
  std::vector<PVec> y;
  y.reserve(static_cast<std::size_t>(x.length()));
  View v;
  v.far = &far;
  auto reader = x.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    for (std::uint64_t k = 0; k < chunk.length(); ++k) {
      const Token token = chunk.at(chunk.kind == Chunk::Kind::kRun ? 0 : k);
      if (token >= model.alphabet) {
        CheckAlphabet(x, model.alphabet);  // throws, naming the position
        LTSIM_CHECK(false);
      }
      ++v.length;
      if (window.size() == static_cast<std::size_t>(model.locality) + 1) {
        ++far[window.front()];
        window.erase(window.begin());
      }
      window.push_back(static_cast<int>(v.length % model.period) * model.alphabet + token);
      v.newest_first.assign(window.rbegin(), window.rend());
      y.push_back(FirstLayerAt(m, v));
    }
  }
  if (y.empty()) throw InputError(x.name() + ": empty string");
  return y;
}

}  // namespace

PreciseVector EvaluatePreciseOneLayer(const Transformer& model, const TypeCounts& counts) {
  LTSIM_CHECK(model.layers.size() == 1);
  const PModel m = Convert(model);
  return Readout(m, FirstLayerAt(m, ViewOf(model, counts)));
}

std::vector<PreciseHeadAttention> PreciseOneLayerAttention(const Transformer& model,
                                                           const TypeCounts& counts) {
  const PModel m = Convert(model);
  const View v = ViewOf(model, counts);
  std::vector<PreciseHeadAttention> out;
  for (std::size_t h = 0; h < m.layers.front().heads.size(); ++h) out.push_back(Attend(m, h, v));
  return out;
}

PreciseReal PreciseAttentionDistance(const Transformer& model, const TypeCounts& x,
                                     const TypeCounts& z) {
  const auto ax = PreciseOneLayerAttention(model, x);
  const auto az = PreciseOneLayerAttention(model, z);
  const auto l1 = [](const std::vector<Real>& a, const std::vector<Real>& b) {
    Real sum = 0;
    for (std::size_t k = 0; k < std::max(a.size(), b.size()); ++k)
      sum += abs((k < a.size() ? a[k] : Real(0)) - (k < b.size() ? b[k] : Real(0)));
    return sum;
  };
  Real eta = 0;
  for (std::size_t h = 0; h < ax.size(); ++h)
    eta = std::max(eta, l1(ax[h].far, az[h].far) + l1(ax[h].suffix, az[h].suffix));
  return eta;
}

bool PreciseEvaluable(const Transformer& model, std::uint64_t length, std::string* reason) {
  const auto refuse = [&](const std::string& why) {
    if (reason) *reason = why;
    return false;
  };
  if (model.layers.size() == 1) return true;
  if (model.layers.size() != 2)
    return refuse("high-precision evaluation supports one or two layers, not " +
                  std::to_string(model.layers.size()));
  if (length > kPreciseTwoLayerLimit)
    return refuse("a two-layer model's high-precision pass is limited to " +
                  std::to_string(kPreciseTwoLayerLimit) + " tokens (x has " +
                  std::to_string(length) + ")");
  return true;
}

PreciseVector EvaluatePrecise(const Transformer& model, const Source& x) {
  std::string reason;
  if (!PreciseEvaluable(model, x.length(), &reason)) throw InputError(x.name() + ": " + reason);
  if (model.layers.size() == 1)
    return EvaluatePreciseOneLayer(model,
                                   CountTypes(x, model.alphabet, model.period, model.locality));
  PModel m = Convert(model);
  if (model.types() <= kMaxTableTypes) BuildTables(m);
  return Readout(m, SecondLayer(m, StreamFirstLayer(m, x)));
}

std::vector<double> ToDouble(const PreciseVector& v) {
  std::vector<double> out;
  for (const Real& r : v) out.push_back(r.convert_to<double>());
  return out;
}

PreciseReal PreciseSupDistance(const PreciseVector& a, const PreciseVector& b) {
  LTSIM_CHECK(a.size() == b.size());
  Real d = 0;
  for (std::size_t k = 0; k < a.size(); ++k) d = std::max(d, Real(abs(a[k] - b[k])));
  return d;
}

std::string PreciseText(const PreciseReal& value, int digits) {
  std::ostringstream out;
  out << std::scientific << std::setprecision(digits - 1) << value;
  return out.str();
}

bool PreciseLessOrClose(const PreciseReal& a, const PreciseReal& b) {
  return a <= b + Real(1e-12) * (1 + abs(a) + abs(b));
}

}  // namespace ltsim
