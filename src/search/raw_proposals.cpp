// The raw-T* search's statistics helpers, random pairs, projection and proposals (docs/refute.md).
#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <limits>

#include "ltsim/core/error.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/model/constants.h"
#include "ltsim/threshold/threshold.h"
#include "raw_internal.h"

namespace ltsim::raw {
namespace {

std::uint64_t ClassSize(std::uint64_t far, int period, int r) {
  const std::uint64_t delta = period;
  return far / delta + (r >= 1 && static_cast<std::uint64_t>(r) <= far % delta ? 1 : 0);
}

int UniformInt(Engine& e, int lo, int hi) {
  return boost::random::uniform_int_distribution<int>(lo, hi)(e);
}
double Uniform01(Engine& e) { return boost::random::uniform_01<double>()(e); }
double Normal(Engine& e) { return boost::random::normal_distribution<double>(0.0, 1.0)(e); }
double Grid(Engine& e) { return 0.5 * UniformInt(e, -2, 2); }

TypeCounts Empty(int alphabet, int period, int locality, std::uint64_t length) {
  TypeCounts c;
  c.alphabet = alphabet;
  c.period = period;
  c.locality = locality;
  c.length = length;
  c.suffix.assign(std::min<std::uint64_t>(length, locality + 1), 0);
  c.far.assign(static_cast<std::size_t>(alphabet) * period, 0);
  return c;
}

Vector KeyVector(const Transformer& m, int token, int residue) {
  return (m.embedding.row(token) + m.positional.row(residue)).transpose();
}

void CopyAttention(const Transformer& from, Transformer& to) {
  to.embedding = from.embedding;
  to.positional = from.positional;
  to.layers[0].heads = from.layers[0].heads;
  to.layers[0].attention = from.layers[0].attention;
  to.layers[0].precision_bits = from.layers[0].precision_bits;
}

// Values of w·u over every statistic of lengths 1 … t_short (and their max / min).
std::vector<double> ShortValues(const Transformer& m, const Vector& w, std::uint64_t t_short) {
  std::vector<double> values;
  for (std::uint64_t t = 1; t <= t_short; ++t)
    ForEachStatistic(m.alphabet, m.period, m.locality, t, [&](const TypeCounts& c) {
      values.push_back(w.dot(ResidualBeforeMlp(m, c)));
      return true;
    });
  return values;
}

// Random targets: each head's entry −1, 0 or +1 (mostly 0), the skip's mostly 0; not all 0.
Vector RandomTargets(const Transformer& m, Engine& e) {
  const int types = m.alphabet * m.period;
  Vector t = Vector::Zero(ReadMap(m).rows());
  while (t.cwiseAbs().maxCoeff() == 0.0) {
    for (int i = 0; i < t.size(); ++i) {
      const double p_nonzero = i < types ? 0.15 : 0.35;
      if (Uniform01(e) < p_nonzero) t(i) = Uniform01(e) < 0.5 ? -1.0 : 1.0;
    }
  }
  return t;
}

// The unit direction w whose reads are closest to the targets (minimum-norm least squares,
// Eigen's complete orthogonal decomposition); empty when it vanishes.
Vector DirectionFor(const Transformer& m, const Vector& targets) {
  const Matrix map = ReadMap(m);
  if (targets.size() != map.rows()) return Vector();
  const Vector w = map.completeOrthogonalDecomposition().solve(targets);
  if (!w.allFinite() || !(w.norm() > 1e-9)) return Vector();
  return w / w.norm();
}

Vector ReadoutOrRandom(const Transformer& m, Engine& e) {
  Vector w0 = m.readout_weight.row(0).transpose();
  if (w0.norm() < 1e-6) {
    for (int i = 0; i < m.width; ++i) w0(i) = Normal(e);
  }
  return w0;
}

void ZeroMlp(const PairClass& cls, Transformer& m) {
  if (cls.mlp_width == 0) return;
  m.layers[0].mlp = Mlp{Matrix::Zero(cls.mlp_width, m.width), Vector::Zero(cls.mlp_width),
                        Matrix::Zero(m.width, cls.mlp_width)};
}

// The largest value of w·u found over long statistics (lengths N·2^{0, 6, 12, 20}), and the
// statistic attaining it: a certified lower bound on sup w·u (it is attained there).
double LongMax(const RawSearchOptions& o, const Transformer& f, const Vector& w, Engine& e,
               TypeCounts* argmax, int starts = 2, int moves = 40) {
  double best = -std::numeric_limits<double>::infinity();
  for (int shift : {0, 6, 12, 20}) {
    double value = 0.0;
    const TypeCounts c = MaximiseOverStatistics(
        f.alphabet, f.period, f.locality, o.max_length << shift,
        [&](const TypeCounts& s) {
          const double v = w.dot(ResidualBeforeMlp(f, s));
          return std::isfinite(v) ? v : -std::numeric_limits<double>::infinity();
        },
        starts, moves, e, &value);
    if (value > best) {
      best = value;
      if (argmax) *argmax = c;
    }
  }
  return best;
}

// A unit vector of the readout's direction (or a random one when the readout is ~0).
Vector UnitReadout(const Transformer& m, Engine& e) {
  Vector w0 = ReadoutOrRandom(m, e);
  return w0 / w0.norm();
}

// Scales both readouts (weights and biases) by k, which scales f, g, f − g and L(f), L(g) by k.
void ScaleReadouts(double k, Transformer& f, Transformer& g) {
  for (Transformer* m : {&f, &g}) {
    m->readout_weight *= k;
    m->readout_bias *= k;
  }
}

// k such that max(L(f), L(g)) = L₀ after ScaleReadouts(k) (L is linear in the readout).
double ScaleToBudget(const PairClass& cls, const Transformer& f, const Transformer& g) {
  const double L = std::max(LipschitzConstant(f), LipschitzConstant(g));
  if (!(L > 0) || !std::isfinite(L)) return std::numeric_limits<double>::quiet_NaN();
  return cls.max_lipschitz / L * (1.0 - 1e-9);
}

constexpr double kDelta = 1e-3;  // the shared skip readout, small so that L is spent on c

}  // namespace

// The rows of w ↦ (w·K_κ for every key vector K_κ = E_s + P_r: the skip; then w·O_h·K_κ for
// every head h): the values the residual's direction w reads off each type, directly and
// through each head. f − g built on w·u then depends on the attention weights of the types
// whose targets are non-zero (docs/refute.md).
Matrix ReadMap(const Transformer& m) {
  const int types = m.alphabet * m.period;
  const int heads = static_cast<int>(m.layers[0].heads.size());
  Matrix rows((heads + 1) * types, m.width);
  for (int r = 0; r < m.period; ++r)
    for (int s = 0; s < m.alphabet; ++s) {
      const Vector k = KeyVector(m, s, r);
      rows.row(r * m.alphabet + s) = k.transpose();
      for (int h = 0; h < heads; ++h)
        rows.row((h + 1) * types + r * m.alphabet + s) = (m.layers[0].heads[h].ov * k).transpose();
    }
  return rows;
}

// The one-sided mechanism (the nested family's, docs/families.md, in any direction w):
// f − g = c·ReLU(w·u − z₀), c as large as L(f) ≤ L₀ allows, and z₀ = z_hi − κ′ε/c with z_hi
// the largest w·u found at long lengths, so the pair is separated there (gap κ′ε, κ′ = 1.05κ)
// and disagrees first at the length where w·u first exceeds z_hi − (κ′ − 1)ε/c. T* is large
// when w·u approaches its supremum only slowly in T, e.g. when it needs several heads' ratios
// small at once.
bool HalfSpace(const RawSearchOptions& o, const Vector& w, Transformer& f, Transformer& g,
               Engine& e, TypeCounts* hint, bool thorough) {
  if (o.cls.mlp_width == 0) return false;
  CopyAttention(f, g);
  const Vector w0 = UnitReadout(g, e);
  ZeroMlp(o.cls, f);
  ZeroMlp(o.cls, g);
  for (Transformer* m : {&f, &g}) m->readout_weight.row(0) = kDelta * w0.transpose();
  f.readout_bias.setZero();  // rebuilt from scratch: no bias carried over (and scaled again)
  g.readout_bias.setZero();
  Mlp& mlp = *f.layers[0].mlp;
  mlp.in.row(0) = w.transpose();
  mlp.out.col(0) = w0 / kDelta;  // W·B = 1: f − g = c·ReLU(w·u − z₀) after scaling by c
  const double c = ScaleToBudget(o.cls, f, g);
  if (!std::isfinite(c)) return false;
  ScaleReadouts(c, f, g);
  const double z_hi = thorough ? LongMax(o, f, w, e, hint, 4, 160) : LongMax(o, f, w, e, hint);
  if (!std::isfinite(z_hi)) return false;
  mlp.in_bias(0) = -(z_hi - 1.05 * o.separation * o.eps / c);
  return true;
}

// The two-sided mechanism (the bump family's, in any direction w): z_min is the least w·u
// found (over short and long statistics), c the largest slope L₀ allows, and z* the least
// value of w·u found at a long statistic with z* ≥ z_min + κ′ε/c (κ′ = 1.05κ). Then
// f − g = c·(z − z_min) − 2c·ReLU(z − z*) + c·ReLU(z − 2z* + z_min), a tent on [z_min, 2z* − z_min]
// with its peak c·(z* − z_min) ≥ κ′ε at z*: T* is the first length with a value of w·u in
// (z_min + ε/c, 2z* − z_min − ε/c), a hole above the smallest value that short strings miss.
bool Tent(const RawSearchOptions& o, const Vector& w, Transformer& f, Transformer& g, Engine& e,
          TypeCounts* hint) {
  if (o.cls.mlp_width == 0) return false;
  CopyAttention(f, g);
  const Vector w0 = UnitReadout(g, e);
  ZeroMlp(o.cls, f);
  ZeroMlp(o.cls, g);
  // Built with c = 1, then scaled by the budget: f = δ·w0·u + w·u − 2·ReLU(w·u − z*),
  // g = δ·w0·u − ReLU(w·u − 2z* + z_min) (readout biases below).
  const Vector wf = kDelta * w0 + w;
  f.readout_weight.row(0) = wf.transpose();
  g.readout_weight.row(0) = kDelta * w0.transpose();
  f.readout_bias.setZero();  // rebuilt from scratch: no bias carried over (and scaled again)
  g.readout_bias.setZero();
  Mlp& mf = *f.layers[0].mlp;
  Mlp& mg = *g.layers[0].mlp;
  mf.in.row(0) = w.transpose();
  mf.out.col(0) = -2.0 * wf / wf.squaredNorm();
  mg.in.row(0) = w.transpose();
  mg.out.col(0) = -w0 / kDelta;
  const double c = ScaleToBudget(o.cls, f, g);
  if (!std::isfinite(c)) return false;
  const Vector neg = -w;
  const std::vector<double> short_values = ShortValues(f, w, 3);
  const double z_min = std::min(-LongMax(o, f, neg, e, nullptr),
                                *std::min_element(short_values.begin(), short_values.end()));
  if (!std::isfinite(z_min)) return false;
  const double target = z_min + 1.05 * o.separation * o.eps / c;
  double best = 0.0;
  const TypeCounts peak = MaximiseOverStatistics(
      f.alphabet, f.period, f.locality, o.max_length << 12,
      [&](const TypeCounts& s) {
        const double v = w.dot(ResidualBeforeMlp(f, s));
        if (!std::isfinite(v)) return -std::numeric_limits<double>::infinity();
        return v >= target ? target - v : -1e6 - (target - v);
      },
      3, 60, e, &best);
  if (!(best > -1e6)) return false;  // no long value above the target
  const double z_star = target - best;
  if (hint) *hint = peak;
  mf.in_bias(0) = -z_star;
  mg.in_bias(0) = -(2.0 * z_star - z_min);
  f.readout_bias(0) = g.readout_bias(0) - z_min;
  ScaleReadouts(c, f, g);
  return true;
}

namespace {

// φ_h[t] set so that a suffix slot (t = 0: the query itself) ties the largest far logit for a
// random query: ratios like 1/(C + 1) (nested family, head 1).
bool QueryTie(Transformer& f, Transformer& g, Engine& e) {
  const int h = UniformInt(e, 0, static_cast<int>(f.layers[0].heads.size()) - 1);
  const int s = UniformInt(e, 0, f.alphabet - 1), r = UniformInt(e, 0, f.period - 1);
  const int t = UniformInt(e, 0, f.locality);
  const int key_token = t == 0 ? s : UniformInt(e, 0, f.alphabet - 1);
  const int key_residue = ((r - t) % f.period + f.period) % f.period;
  for (Transformer* m : {&f, &g}) {
    Head& head = m->layers[0].heads[h];
    const Vector mq = head.qk * KeyVector(*m, s, r);
    double a_max = -std::numeric_limits<double>::infinity();
    for (int s2 = 0; s2 < m->alphabet; ++s2)
      for (int r2 = 0; r2 < m->period; ++r2) a_max = std::max(a_max, KeyVector(*m, s2, r2).dot(mq));
    head.bias(t) = a_max - KeyVector(*m, key_token, key_residue).dot(mq);
  }
  return true;
}

// One grid step on a qk or bias entry, the same in f and g.
bool AttentionStep(Transformer& f, Transformer& g, Engine& e) {
  const int h = UniformInt(e, 0, static_cast<int>(f.layers[0].heads.size()) - 1);
  const bool bias = Uniform01(e) < 0.25;
  const int i = UniformInt(e, 0, bias ? f.locality : f.width - 1);
  const int j = UniformInt(e, 0, f.width - 1);
  const double value = Grid(e);
  for (Transformer* m : {&f, &g}) {
    Head& head = m->layers[0].heads[h];
    (bias ? head.bias(i) : head.qk(i, j)) = value;
  }
  return true;
}

// A head's hardmax pattern set directly: a random logit table Λ[q][k] ∈ {0, 1} over the key
// types (token, residue) and random slot biases φ[t] ∈ {−1, 0, 1}, realised as
// qk = K⁺ᵀ·Λ·K⁺ (K the types' key vectors as rows, K⁺ its pseudo-inverse; exact when the key
// vectors are independent), scaled by 1, 2 or 4 for finite and softmax attention. Which key
// types tie for the maximum, and whether the query's own key joins them, decide which count
// ratios the head's output depends on (1/(C + 1) when the query ties a token's keys, C/T when
// a head attends everywhere, …).
bool SetPattern(Transformer& f, Transformer& g, int h, Engine& e) {
  const int types = f.alphabet * f.period;
  Matrix keys(types, f.width);
  for (int r = 0; r < f.period; ++r)
    for (int s = 0; s < f.alphabet; ++s)
      keys.row(r * f.alphabet + s) = KeyVector(f, s, r).transpose();
  Matrix table(types, types);
  for (int q = 0; q < types; ++q)
    for (int k = 0; k < types; ++k) table(q, k) = Uniform01(e) < 0.5 ? 1.0 : 0.0;
  const Matrix pinv = keys.completeOrthogonalDecomposition().pseudoInverse();  // d × types
  const double scale = f.layers[0].attention == Attention::kHardmax
                           ? 1.0
                           : std::vector<double>{1, 2, 4}[UniformInt(e, 0, 2)];
  const Matrix qk = scale * pinv * table * pinv.transpose();
  if (!qk.allFinite()) return false;
  Vector bias(f.locality + 1);
  for (int t = 0; t <= f.locality; ++t) bias(t) = scale * UniformInt(e, -1, 1);
  for (Transformer* m : {&f, &g}) {
    m->layers[0].heads[h].qk = qk;
    m->layers[0].heads[h].bias = bias;
  }
  return true;
}

bool Pattern(Transformer& f, Transformer& g, Engine& e) {
  return SetPattern(f, g, UniformInt(e, 0, static_cast<int>(f.layers[0].heads.size()) - 1), e);
}

bool Gaussian(Transformer& g, Engine& e) {
  const double sigma = std::vector<double>{0.1, 0.03, 0.01}[UniformInt(e, 0, 2)];
  auto step = [&](auto& m) {
    const double scale = std::max(1e-12, m.cwiseAbs().maxCoeff());
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] += sigma * scale * Normal(e);
  };
  if (g.layers[0].mlp) {
    step(g.layers[0].mlp->in);
    step(g.layers[0].mlp->in_bias);
    step(g.layers[0].mlp->out);
  }
  step(g.readout_weight);
  return true;
}

// One head's value matrix (or one embedding / positional entry) moved, in f and g alike: which
// ratios the residual's directions read.
bool ValueStep(Transformer& f, Transformer& g, Engine& e) {
  const int h = UniformInt(e, 0, static_cast<int>(f.layers[0].heads.size()) - 1);
  const int what = UniformInt(e, 0, 2);
  const int i = UniformInt(e, 0, f.width - 1), j = UniformInt(e, 0, f.width - 1);
  const double value = what == 0 ? 0.5 * Normal(e) : Grid(e);
  const int s = UniformInt(e, 0, f.alphabet - 1), r = UniformInt(e, 0, f.period - 1);
  for (Transformer* m : {&f, &g}) {
    if (what == 0)
      m->layers[0].heads[h].ov(i, j) = value;
    else if (what == 1)
      m->embedding(s, j) = value;
    else if (m->period > 1)
      m->positional(r, j) = value;
  }
  return what != 2 || f.period > 1;
}

bool SwitchMode(const PairClass& cls, Transformer& f, Transformer& g, Engine& e) {
  if (cls.modes.size() < 2) return false;
  const Attention mode = cls.modes[UniformInt(e, 0, static_cast<int>(cls.modes.size()) - 1)];
  for (Transformer* m : {&f, &g}) {
    m->layers[0].attention = mode;
    m->layers[0].precision_bits = mode == Attention::kFinite ? cls.precision_bits : 0;
  }
  return true;
}

}  // namespace

void ForEachStatistic(int alphabet, int period, int locality, std::uint64_t length,
                      const std::function<bool(const TypeCounts&)>& visit) {
  TypeCounts c = Empty(alphabet, period, locality, length);
  for (int r = 0; r < period; ++r) c.far[c.TypeIndex(0, r)] = ClassSize(c.far_length(), period, r);
  while (true) {
    if (!visit(c)) return;
    bool advanced = false;
    for (std::size_t k = c.suffix.size(); k-- > 0 && !advanced;) {
      if (++c.suffix[k] < alphabet)
        advanced = true;
      else
        c.suffix[k] = 0;
    }
    for (int r = period - 1; r >= 0 && !advanced; --r)
      advanced = NextComposition(&c.far[c.TypeIndex(0, r)], alphabet);
    if (!advanced) return;
  }
}

TypeCounts RandomStatistic(int alphabet, int period, int locality, std::uint64_t length,
                           Engine& engine) {
  TypeCounts c = Empty(alphabet, period, locality, length);
  for (auto& s : c.suffix) s = static_cast<Token>(UniformInt(engine, 0, alphabet - 1));
  for (int r = 0; r < period; ++r) {
    const std::uint64_t n = ClassSize(c.far_length(), period, r);
    std::vector<std::uint64_t> cuts = {0, n};
    for (int k = 0; k + 1 < alphabet; ++k) {
      // Log-uniform cut points: rare tokens (counts ≪ n) are as likely as balanced ones.
      const double u = Uniform01(engine);
      const double x =
          Uniform01(engine) < 0.5 ? u * n : std::pow(static_cast<double>(n) + 1, u) - 1;
      cuts.push_back(std::min<std::uint64_t>(n, static_cast<std::uint64_t>(x)));
    }
    std::sort(cuts.begin(), cuts.end());
    std::vector<int> order(alphabet);
    for (int s = 0; s < alphabet; ++s) order[s] = s;
    for (int s = alphabet - 1; s > 0; --s) std::swap(order[s], order[UniformInt(engine, 0, s)]);
    for (int s = 0; s < alphabet; ++s) c.far[c.TypeIndex(order[s], r)] = cuts[s + 1] - cuts[s];
  }
  return c;
}

TypeCounts ScaleStatistic(const TypeCounts& counts, std::uint64_t factor) {
  const std::uint64_t far = counts.far_length() * factor;
  TypeCounts c = counts;
  c.length = far + counts.suffix.size();
  for (int r = 0; r < counts.period; ++r) {
    const std::uint64_t old_n = ClassSize(counts.far_length(), counts.period, r);
    const std::uint64_t n = ClassSize(far, counts.period, r);
    std::uint64_t given = 0;
    std::vector<std::pair<double, int>> remainders;
    for (int s = 0; s < counts.alphabet; ++s) {
      const double share =
          old_n == 0 ? (s == 0 ? 1.0 : 0.0) : static_cast<double>(counts.count(s, r)) / old_n;
      const double exact = share * n;
      const auto whole = static_cast<std::uint64_t>(std::floor(exact));
      c.far[c.TypeIndex(s, r)] = whole;
      given += whole;
      remainders.push_back({-(exact - whole), s});
    }
    std::sort(remainders.begin(), remainders.end());
    for (std::size_t k = 0; given < n; ++k, ++given)
      ++c.far[c.TypeIndex(remainders[k % remainders.size()].second, r)];
  }
  return c;
}

TypeCounts MaximiseOverStatistics(int alphabet, int period, int locality, std::uint64_t length,
                                  const std::function<double(const TypeCounts&)>& score, int starts,
                                  int moves, Engine& engine, double* best) {
  TypeCounts winner;
  double winner_score = -std::numeric_limits<double>::infinity();
  for (int k = 0; k < starts; ++k) {
    TypeCounts c = RandomStatistic(alphabet, period, locality, length, engine);
    double value = score(c);
    for (int step = 0; step < moves; ++step) {
      TypeCounts next = c;
      if (!next.suffix.empty() && UniformInt(engine, 0, 4) == 0) {
        next.suffix[UniformInt(engine, 0, static_cast<int>(next.suffix.size()) - 1)] =
            static_cast<Token>(UniformInt(engine, 0, alphabet - 1));
      } else if (alphabet > 1) {
        const int r = UniformInt(engine, 0, period - 1);
        const int a = UniformInt(engine, 0, alphabet - 1);
        int b = UniformInt(engine, 0, alphabet - 2);
        if (b >= a) ++b;
        const std::uint64_t have = next.count(a, r);
        if (have == 0) continue;
        const int bits = static_cast<int>(std::floor(std::log2(static_cast<double>(have))));
        const std::uint64_t amount = std::uint64_t{1} << UniformInt(engine, 0, bits);
        next.far[next.TypeIndex(a, r)] -= amount;
        next.far[next.TypeIndex(b, r)] += amount;
      }
      const double v = score(next);
      if (v >= value) {
        value = v;
        c = next;
      }
    }
    if (value > winner_score) {
      winner_score = value;
      winner = c;
    }
  }
  if (best) *best = winner_score;
  return winner;
}

Vector ResidualBeforeMlp(const Transformer& model, const TypeCounts& counts) {
  const std::vector<HeadAttention> attention = OneLayerAttention(model, counts);
  const std::size_t m = counts.suffix.size();
  const int query_residue = static_cast<int>(counts.length % model.period);
  Vector u = KeyVector(model, counts.suffix[m - 1], query_residue);
  for (std::size_t h = 0; h < attention.size(); ++h) {
    Vector mix = Vector::Zero(model.width);
    for (int s = 0; s < model.alphabet; ++s)
      for (int r = 0; r < model.period; ++r)
        mix += attention[h].far[counts.TypeIndex(s, r)] * KeyVector(model, s, r);
    for (std::size_t t = 0; t < m; ++t) {
      const std::uint64_t position = counts.length - t;
      mix += attention[h].suffix[t] *
             KeyVector(model, counts.suffix[m - 1 - t], static_cast<int>(position % model.period));
    }
    u += model.layers[0].heads[h].ov * mix;
  }
  return u;
}

double StatisticGap(const Transformer& f, const Transformer& g, const TypeCounts& joint) {
  const Vector a = EvaluateOneLayer(f, Coarsen(joint, f.period, f.locality));
  const Vector b = EvaluateOneLayer(g, Coarsen(joint, g.period, g.locality));
  if (!a.allFinite() || !b.allFinite()) return std::numeric_limits<double>::infinity();
  return (a - b).cwiseAbs().maxCoeff();
}

std::pair<Transformer, Transformer> RandomPair(const PairClass& cls, Engine& e) {
  Transformer f;
  f.alphabet = cls.alphabet;
  f.width = cls.width;
  f.period = cls.period;
  f.locality = cls.locality;
  f.embedding = Matrix::Zero(cls.alphabet, cls.width);
  f.positional = Matrix::Zero(cls.period, cls.width);
  // One-hot tokens and residues (when they fit) make the qk entries a table of logits per pair
  // of types, so that grid values tie keys as the families do; otherwise grid embeddings.
  const int one_hot_width = cls.alphabet + (cls.period > 1 ? cls.period : 0);
  if (cls.width >= one_hot_width && Uniform01(e) < 0.6) {
    for (int s = 0; s < cls.alphabet; ++s) f.embedding(s, s) = 1.0;
    if (cls.period > 1)
      for (int r = 0; r < cls.period; ++r) f.positional(r, cls.alphabet + r) = 1.0;
  } else {
    for (Eigen::Index i = 0; i < f.embedding.size(); ++i) f.embedding.data()[i] = Grid(e);
    if (cls.period > 1)
      for (Eigen::Index i = 0; i < f.positional.size(); ++i) f.positional.data()[i] = Grid(e);
  }
  Layer layer;
  layer.attention = cls.modes[UniformInt(e, 0, static_cast<int>(cls.modes.size()) - 1)];
  layer.precision_bits = layer.attention == Attention::kFinite ? cls.precision_bits : 0;
  for (int h = 0; h < cls.heads; ++h) {
    Head head{Matrix::Zero(cls.width, cls.width), Matrix::Zero(cls.width, cls.width),
              Vector::Zero(cls.locality + 1)};
    for (Eigen::Index i = 0; i < head.qk.size(); ++i)
      head.qk.data()[i] = Uniform01(e) < 0.4 ? 0.0 : Grid(e);
    for (Eigen::Index i = 0; i < head.ov.size(); ++i) head.ov.data()[i] = 0.5 * Normal(e);
    for (Eigen::Index i = 0; i < head.bias.size(); ++i)
      head.bias(i) = Uniform01(e) < 0.5 ? 0.0 : Grid(e);
    layer.heads.push_back(head);
  }
  if (cls.mlp_width > 0) {
    Mlp mlp{Matrix::Zero(cls.mlp_width, cls.width), Vector::Zero(cls.mlp_width),
            Matrix::Zero(cls.width, cls.mlp_width)};
    for (Eigen::Index i = 0; i < mlp.in.size(); ++i) mlp.in.data()[i] = Normal(e);
    for (Eigen::Index i = 0; i < mlp.in_bias.size(); ++i) mlp.in_bias(i) = 0.5 * Normal(e);
    for (Eigen::Index i = 0; i < mlp.out.size(); ++i) mlp.out.data()[i] = 0.5 * Normal(e);
    layer.mlp = mlp;
  }
  f.layers.push_back(layer);
  f.readout_weight = Matrix::Zero(1, cls.width);
  f.readout_bias = Vector::Zero(1);
  {
    Transformer copy = f;
    for (int h = 0; h < cls.heads; ++h)
      if (Uniform01(e) < 0.5) SetPattern(f, copy, h, e);
  }
  for (int i = 0; i < cls.width; ++i) f.readout_weight(0, i) = Normal(e);
  f.readout_bias = Vector::Zero(1);
  Transformer g = f;
  if (g.layers[0].mlp) {
    for (Eigen::Index i = 0; i < g.layers[0].mlp->out.size(); ++i)
      g.layers[0].mlp->out.data()[i] += 0.05 * Normal(e);
  }
  for (int i = 0; i < cls.width; ++i) g.readout_weight(0, i) += 0.05 * Normal(e);
  ProjectOntoClass(cls, f);
  ProjectOntoClass(cls, g);
  return {f, g};
}

const std::vector<std::string>& ProposalNames() {
  static const std::vector<std::string> names = {
      "half-space", "tent",     "direction-step", "attention-step", "query-tie",
      "value-step", "gaussian", "mode",           "pattern",        "chain"};
  return names;
}

// The largest t such that the statistics of lengths 1 … t number at most `limit`.
std::uint64_t ShortHorizon(const Transformer& m, std::uint64_t limit) {
  std::uint64_t total = 0, t = 0;
  while (t < 4096) {
    const std::uint64_t next = total + CountStatistics(m.alphabet, m.period, m.locality, t + 1);
    if (next > limit) break;
    total = next;
    ++t;
  }
  return std::max<std::uint64_t>(t, 1);
}

// The best of `candidates` random targets for the half-space: the largest lead of the long
// maximum of w·u over the maximum over every string up to the short horizon (≤ 2000
// statistics), i.e. the direction whose supremum is approached only by long strings.
Vector HalfSpaceTargets(const RawSearchOptions& o, const Transformer& f, int candidates,
                        Engine& e) {
  const std::uint64_t horizon = ShortHorizon(f, 400);
  Vector best;
  double best_lead = -std::numeric_limits<double>::infinity();
  for (int k = 0; k < candidates; ++k) {
    const Vector t = RandomTargets(f, e);
    const Vector w = DirectionFor(f, t);
    if (w.size() == 0) continue;
    const std::vector<double> v = ShortValues(f, w, horizon);
    const double lead = LongMax(o, f, w, e, nullptr) - *std::max_element(v.begin(), v.end());
    if (lead > best_lead) {
      best_lead = lead;
      best = t;
    }
  }
  return best.size() ? best : RandomTargets(f, e);
}

namespace {

// The types' key vectors as rows, in ReadMap's order (type r·S + s).
Matrix KeyRows(const Transformer& m) {
  Matrix keys(m.alphabet * m.period, m.width);
  for (int r = 0; r < m.period; ++r)
    for (int s = 0; s < m.alphabet; ++s)
      keys.row(r * m.alphabet + s) = KeyVector(m, s, r).transpose();
  return keys;
}

// Builds the chain of `heads` (innermost first) with token sets `sets` and query token s0 in f
// and g, and returns its targets (ComposeChain); an empty vector when the key vectors are not
// independent (no logit table is exact) or there are fewer free directions than conditions.
Vector BuildChain(const std::vector<int>& heads, const std::vector<std::vector<char>>& sets, int s0,
                  Transformer& f, Transformer& g) {
  const int types = f.alphabet * f.period;
  const int k = static_cast<int>(heads.size());
  const Matrix keys = KeyRows(f);
  const Matrix pinv = keys.completeOrthogonalDecomposition().pseudoInverse();  // d × types
  if (!pinv.allFinite() ||
      !((keys * pinv - Matrix::Identity(types, types)).cwiseAbs().maxCoeff() < 1e-9))
    return Vector();
  Eigen::JacobiSVD<Matrix> svd(keys, Eigen::ComputeFullV);
  const int free = f.width - static_cast<int>(svd.rank());
  if (free < k) return Vector();
  const Matrix complement = svd.matrixV().rightCols(free);  // orthonormal, ⟂ every key vector
  const double scale = f.layers[0].attention == Attention::kHardmax ? 1.0 : 4.0;
  auto token_of = [&](int type) { return type % f.alphabet; };
  Vector targets = Vector::Zero((static_cast<Eigen::Index>(f.layers[0].heads.size()) + 1) * types);
  for (int type = 0; type < types; ++type)
    if (token_of(type) != s0) targets(type) = -1.0;  // another query token: far below
  std::vector<Head> built(f.layers[0].heads.size());
  for (std::size_t h = 0; h < built.size(); ++h) {
    built[h] = f.layers[0].heads[h];
    built[h].ov.setZero();  // a head outside the chain writes nothing
  }
  for (int j = 0; j < k; ++j) {
    const std::vector<char>& set = sets[j];
    Matrix table(types, types);  // table(key, query): the same for every query
    Vector read(types);
    for (int key = 0; key < types; ++key) {
      table.row(key).setConstant(set[token_of(key)] ? 1.0 : 0.0);
      read(key) =
          j == 0 ? (token_of(key) == s0 ? 1.0 : 0.0) : (sets[j - 1][token_of(key)] ? 1.0 : 0.0);
    }
    Head& head = built[heads[j]];
    head.qk = scale * pinv * table * pinv.transpose();
    head.bias.setZero();
    if (j == 0) head.bias(0) = scale * (set[s0] ? 0.0 : 1.0);  // the query of token s0 ties A₁
    head.ov = complement.col(j) * (pinv * read).transpose();
    for (int key = 0; key < types; ++key) targets((heads[j] + 1) * types + key) = -read(key);
  }
  for (Transformer* m : {&f, &g}) m->layers[0].heads = built;
  return targets;
}

}  // namespace

bool ComposeChain(const RawSearchOptions& o, Memory& memory, Transformer& f, Transformer& g,
                  Engine& e, bool extend, int conditions) {
  const int heads = static_cast<int>(f.layers[0].heads.size());
  const int S = f.alphabet;
  if (S < 2 || o.cls.mlp_width == 0 || conditions > std::min(heads, S)) return false;
  if (conditions <= 0 && heads < 2) return false;
  std::vector<int> chain;
  std::vector<std::vector<char>> sets;
  int s0 = -1;
  const bool have = !memory.chain_heads.empty() &&
                    memory.chain_sets.size() == memory.chain_heads.size() &&
                    memory.chain_query >= 0 && memory.chain_query < S &&
                    static_cast<int>(memory.chain_heads.size()) < std::min(heads, S);
  if (extend && have && conditions <= 0) {
    chain = memory.chain_heads;
    sets = memory.chain_sets;
    s0 = memory.chain_query;
    std::vector<int> unused;
    for (int h = 0; h < heads; ++h)
      if (std::find(chain.begin(), chain.end(), h) == chain.end()) unused.push_back(h);
    const int h_new = unused[UniformInt(e, 0, static_cast<int>(unused.size()) - 1)];
    auto size = [](const std::vector<char>& set) {
      return static_cast<int>(std::count(set.begin(), set.end(), 1));
    };
    const bool outer = size(sets.back()) < S, inner = size(sets.front()) >= 2;
    if (outer && (!inner || Uniform01(e) < 0.5)) {
      // A superset of A_k: one or more tokens added.
      std::vector<char> next = sets.back();
      std::vector<int> missing;
      for (int s = 0; s < S; ++s)
        if (!next[s]) missing.push_back(s);
      const int add = UniformInt(e, 1, static_cast<int>(missing.size()));
      for (int s = static_cast<int>(missing.size()) - 1; s > 0; --s)
        std::swap(missing[s], missing[UniformInt(e, 0, s)]);
      for (int i = 0; i < add; ++i) next[missing[i]] = 1;
      chain.push_back(h_new);
      sets.push_back(next);
    } else if (inner) {
      // A proper non-empty subset of A₁, whose head takes over the query tie.
      std::vector<int> members;
      for (int s = 0; s < S; ++s)
        if (sets.front()[s]) members.push_back(s);
      for (int s = static_cast<int>(members.size()) - 1; s > 0; --s)
        std::swap(members[s], members[UniformInt(e, 0, s)]);
      const int keep = UniformInt(e, 1, static_cast<int>(members.size()) - 1);
      std::vector<char> inner_set(S, 0);
      for (int i = 0; i < keep; ++i) inner_set[members[i]] = 1;
      chain.insert(chain.begin(), h_new);
      sets.insert(sets.begin(), inner_set);
    } else {
      chain.clear();
    }
  }
  if (chain.empty()) {
    // A fresh chain: k conditions on k random heads, sizes 1 ≤ n₁ < … < n_k ≤ S of a random
    // order of the tokens, s₀ outside A₁.
    const int k = conditions > 0 ? conditions : UniformInt(e, 2, std::min(heads, S));
    std::vector<int> order(S), sizes(S), head_order(heads);
    for (int s = 0; s < S; ++s) order[s] = s, sizes[s] = s + 1;
    for (int h = 0; h < heads; ++h) head_order[h] = h;
    for (int s = S - 1; s > 0; --s) std::swap(order[s], order[UniformInt(e, 0, s)]);
    for (int s = S - 1; s > 0; --s) std::swap(sizes[s], sizes[UniformInt(e, 0, s)]);
    for (int h = heads - 1; h > 0; --h) std::swap(head_order[h], head_order[UniformInt(e, 0, h)]);
    sizes.resize(k);
    std::sort(sizes.begin(), sizes.end());
    if (sizes[0] == S) sizes[0] = UniformInt(e, 1, S - 1);  // k = 1: room for s₀ outside A₁
    for (int j = 0; j < k; ++j) {
      std::vector<char> set(S, 0);
      for (int i = 0; i < sizes[j]; ++i) set[order[i]] = 1;
      sets.push_back(set);
      chain.push_back(head_order[j]);
    }
    s0 = order[UniformInt(e, sizes[0], S - 1)];
  }
  Vector targets = BuildChain(chain, sets, s0, f, g);
  if (targets.size() == 0) return false;
  memory.mechanism = 0;
  memory.targets = targets;
  memory.chain_heads = chain;
  memory.chain_sets = sets;
  memory.chain_query = s0;
  return true;
}

const std::vector<double>& ProposalWeights() {
  // half-space, tent, direction-step, attention-step, query-tie, value-step, gaussian, mode,
  // pattern, chain: the moves that change which ratios w·u reads (targets, ties, patterns,
  // composed conditions) most often.
  static const std::vector<double> weights = {2, 1, 2, 2, 2, 1, 1, 1, 2, 3};
  return weights;
}

bool ApplyMechanism(const RawSearchOptions& o, Memory& memory, Transformer& f, Transformer& g,
                    Engine& e, TypeCounts* hint) {
  if (memory.mechanism < 0 || memory.targets.size() != ReadMap(f).rows()) {
    memory.mechanism = UniformInt(e, 0, 1);
    memory.targets = memory.mechanism == 0 ? HalfSpaceTargets(o, f, 8, e) : RandomTargets(f, e);
  }
  const Vector w = DirectionFor(f, memory.targets);
  if (w.size() == 0) return false;
  return memory.mechanism == 0 ? HalfSpace(o, w, f, g, e, hint, !memory.chain_heads.empty())
                               : Tent(o, w, f, g, e, hint);
}

bool Propose(int kind, const RawSearchOptions& o, Memory& memory, Transformer& f, Transformer& g,
             Engine& e, TypeCounts* hint) {
  switch (kind) {
    case 0:
    case 1:
      memory.chain_heads.clear();
      memory.chain_sets.clear();
      memory.chain_query = -1;
      memory.mechanism = kind;
      memory.targets = kind == 0 ? HalfSpaceTargets(o, f, 8, e) : RandomTargets(f, e);
      return ApplyMechanism(o, memory, f, g, e, hint);
    case 2: {  // one target changed, or all moved a little
      if (memory.targets.size() == 0) return false;
      Vector& t = memory.targets;
      if (Uniform01(e) < 0.6) {
        t(UniformInt(e, 0, static_cast<int>(t.size()) - 1)) = UniformInt(e, -1, 1);
      } else {
        const double sigma = std::vector<double>{0.3, 0.1, 0.03}[UniformInt(e, 0, 2)];
        for (int i = 0; i < t.size(); ++i) t(i) += sigma * Normal(e);
      }
      if (!(t.cwiseAbs().maxCoeff() > 0)) return false;
      return ApplyMechanism(o, memory, f, g, e, hint);
    }
    case 3:
      return AttentionStep(f, g, e) && ApplyMechanism(o, memory, f, g, e, hint);
    case 4:
      return QueryTie(f, g, e) && ApplyMechanism(o, memory, f, g, e, hint);
    case 5:
      return ValueStep(f, g, e) && ApplyMechanism(o, memory, f, g, e, hint);
    case 6:
      return Gaussian(g, e);
    case 7:
      return SwitchMode(o.cls, f, g, e) && ApplyMechanism(o, memory, f, g, e, hint);
    case 8:
      return Pattern(f, g, e) && ApplyMechanism(o, memory, f, g, e, hint);
    case 9:  // one more condition on the climb's chain (or a fresh chain)
      return ComposeChain(o, memory, f, g, e, Uniform01(e) < 0.75) &&
             ApplyMechanism(o, memory, f, g, e, hint);
  }
  return false;
}

}  // namespace ltsim::raw
