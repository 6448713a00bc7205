// The certified-T* search over two-layer pairs and `refute --layers 2` (docs/refute.md §8).
#include "ltsim/search/two_layer_refute.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <mutex>

#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/precise.h"
#include "ltsim/fuzz/recorded.h"
#include "ltsim/io/json.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/model_file.h"
#include "ltsim/search/raw_threshold_search.h"
#include "ltsim/search/refute.h"
#include "ltsim/strings/sources.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim {
namespace {

using Engine = boost::random::mt19937_64;

// Largest length a probe string may have: the 50-digit two-layer evaluator's limit.
constexpr std::uint64_t kProbeMaxLength = kPreciseTwoLayerLimit;
// The mechanism's margin: the probe maximum sits at 1.05κε (docs/refute.md §8.2).
constexpr double kMargin = 1.05;

double Uniform(Engine& e, double lo, double hi) {
  return boost::random::uniform_real_distribution<double>(lo, hi)(e);
}
int Pick(Engine& e, int n) { return boost::random::uniform_int_distribution<int>(0, n - 1)(e); }
double Normal(Engine& e) { return boost::random::normal_distribution<double>(0.0, 1.0)(e); }

bool Bounded(Attention a) { return a == Attention::kSoftmax || a == Attention::kFinite; }

double InputRadius0(const Transformer& m) {
  double r = 0.0;
  for (int s = 0; s < m.alphabet; ++s)
    for (int p = 0; p < m.period; ++p)
      r = std::max(r, (m.embedding.row(s) + m.positional.row(p)).norm());
  return r;
}

std::uint64_t Length(const std::vector<Run>& runs) {
  std::uint64_t n = 0;
  for (const Run& r : runs) n += r.count;
  return n;
}

Vector Eval(const Transformer& m, const std::vector<Run>& runs) {
  return Evaluate(m, *MakeRunSource(runs, "probe"));
}

double Gap(const Transformer& f, const Transformer& g, const std::vector<Run>& runs) {
  const Vector a = Eval(f, runs), b = Eval(g, runs);
  if (!a.allFinite() || !b.allFinite()) return std::numeric_limits<double>::infinity();
  return (a - b).cwiseAbs().maxCoeff();
}

// Adds a run, merging with the last one of the same token; zero counts are dropped.
void Push(std::vector<Run>& runs, int token, std::uint64_t count) {
  if (count == 0) return;
  if (!runs.empty() && runs.back().token == token)
    runs.back().count += count;
  else
    runs.push_back({static_cast<Token>(token), count});
}

// Each run scaled by k (the last run kept: it holds the final window).
std::vector<Run> Scaled(const std::vector<Run>& runs, std::uint64_t k, std::uint64_t cap) {
  std::vector<Run> out;
  for (std::size_t i = 0; i < runs.size(); ++i)
    Push(out, runs[i].token, i + 1 == runs.size() ? runs[i].count : runs[i].count * k);
  return Length(out) <= cap ? out : std::vector<Run>{};
}

// The long probe strings of a class at N (docs/refute.md §8.2): a^p b^q c for every tokens
// a, b, c and p/T on a grid, plus `random` strings of random runs, at T = 16, 32, … below 4N and
// at N, 2N, 4N (≤ kProbeMaxLength).
std::vector<std::vector<Run>> LongProbes(int alphabet, std::uint64_t n, Engine& engine,
                                         int random) {
  std::vector<std::vector<Run>> probes;
  const double shares[] = {0.0, 1.0 / 16, 0.25, 0.5, 0.75, 15.0 / 16};
  std::vector<std::uint64_t> lengths;
  for (std::uint64_t t = 16; t < 4 * n && t < kProbeMaxLength; t *= 2) lengths.push_back(t);
  for (std::uint64_t t : {n, 2 * n, 4 * n}) lengths.push_back(std::min(t, kProbeMaxLength));
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  for (std::uint64_t t : lengths) {
    if (t < 3) continue;
    for (int a = 0; a < alphabet; ++a)
      for (int b = 0; b < alphabet; ++b)
        for (int c = 0; c < alphabet; ++c)
          for (double share : shares) {
            if (a == b && share > 0) continue;
            std::vector<Run> runs;
            const auto p = static_cast<std::uint64_t>(std::floor(share * (t - 1)));
            Push(runs, a, p);
            Push(runs, b, t - 1 - p);
            Push(runs, c, 1);
            probes.push_back(runs);
          }
    for (int k = 0; k < random; ++k) {
      std::vector<Run> runs;
      // Runs of random lengths (geometric-ish), so both mixed and blocky strings occur.
      const double mean = std::exp(Uniform(engine, 0.0, std::log(static_cast<double>(t) / 2)));
      std::uint64_t left = t;
      while (left > 0) {
        const auto len = std::min<std::uint64_t>(
            left, 1 + static_cast<std::uint64_t>(-mean * std::log(Uniform(engine, 1e-12, 1.0))));
        Push(runs, Pick(engine, alphabet), len);
        left -= len;
      }
      probes.push_back(runs);
    }
  }
  return probes;
}

// Every string of every length ≤ T_s, T_s the largest with Σ_{t ≤ T_s} S^t ≤ 1100.
std::vector<std::vector<Run>> ShortProbes(int alphabet) {
  std::vector<std::vector<Run>> probes;
  std::uint64_t total = 0, count = 1;
  for (int t = 1; t <= 16; ++t) {
    count *= static_cast<std::uint64_t>(alphabet);
    if (total + count > 1100) break;
    total += count;
    for (std::uint64_t code = 0; code < count; ++code) {
      std::vector<Run> runs;
      std::uint64_t c = code;
      for (int i = 0; i < t; ++i) {
        Push(runs, static_cast<int>(c % alphabet), 1);
        c /= alphabet;
      }
      probes.push_back(runs);
    }
  }
  return probes;
}

// The residual u entering the second layer's MLP, for every probe: a copy of the model without
// that MLP whose readout is the identity.
std::vector<Vector> Residuals(const Transformer& model, const std::vector<std::vector<Run>>& xs) {
  Transformer probe = model;
  probe.layers[1].mlp.reset();
  probe.readout_weight = Matrix::Identity(model.width, model.width);
  probe.readout_bias = Vector::Zero(model.width);
  std::vector<Vector> u;
  u.reserve(xs.size());
  for (const auto& x : xs) u.push_back(Eval(probe, x));
  return u;
}

// The coordinate the mechanism's unit writes to and the readout reads (docs/refute.md §8.2).
int OutCoordinate(const TwoLayerClass& cls) { return cls.width - 1; }

}  // namespace

double FirstLayerRadius(const Transformer& m) {
  const Layer& first = m.layers.front();
  double ov = 0.0;
  for (const Head& h : first.heads) ov += SpectralNorm(h.ov);
  const double r0 = InputRadius0(m);
  const double ba = first.mlp ? SpectralNorm(first.mlp->out) * SpectralNorm(first.mlp->in) : 0.0;
  const double bb = first.mlp ? SpectralNorm(first.mlp->out) * first.mlp->in_bias.norm() : 0.0;
  return r0 * (1.0 + ov) * (1.0 + ba) + bb;
}

double OutputScale(const Transformer& m) {
  double ov = 0.0;
  for (const Head& h : m.layers.back().heads) ov += SpectralNorm(h.ov);
  return ReadoutLipschitz(m) * FirstLayerRadius(m) * (1.0 + ov);
}

double LayerLogitScale(const Transformer& m, int layer) {
  const double r = layer == 0 ? InputRadius0(m) : FirstLayerRadius(m);
  double scale = 0.0;
  for (const Head& h : m.layers[layer].heads)
    scale = std::max(scale, SpectralNorm(h.qk) * r * r +
                                (h.bias.size() > 0 ? h.bias.cwiseAbs().maxCoeff() : 0.0));
  return scale;
}

void ValidateTwoLayerClass(const TwoLayerClass& c) {
  auto range = [](const char* flag, long long v, long long lo, long long hi) {
    if (v < lo || v > hi)
      throw InputError(fmt::format("{}: {} is outside [{}, {}] for --layers 2", flag, v, lo, hi));
  };
  range("--alphabet", c.alphabet, 2, 4);
  range("--period", c.period, 1, 4);
  range("--locality", c.locality, 0, 3);
  range("--heads", c.heads, 1, 4);
  range("--second-heads", c.second_heads, 1, 4);
  range("--mlp-width", c.mlp_width, 1, 8);
  range("--width", c.width, 2, 32);
  if (c.width < c.alphabet + 1)
    throw InputError(fmt::format(
        "--width: {} is too small for --layers 2 with --alphabet {} (at least alphabet + 1: one "
        "coordinate a token and the output coordinate)",
        c.width, c.alphabet));
  if (c.modes.empty() || c.second_modes.empty())
    throw InputError("--modes: at least one mode for each layer");
  if (!(c.max_scale > 0) || !std::isfinite(c.max_scale))
    throw InputError("--max-lipschitz: must be a finite number > 0 (L0 of the output scale)");
  if (!(c.max_logit > 0)) throw InputError("--max-logit: must be > 0");
  range("--precision", c.precision_bits, 1, 52);
}

bool InTwoLayerClass(const TwoLayerClass& c, const Transformer& m) {
  if (m.layers.size() != 2 || m.alphabet != c.alphabet || m.period != c.period ||
      m.locality != c.locality || m.width != c.width || m.outputs() != 1)
    return false;
  const Layer& a = m.layers[0];
  const Layer& b = m.layers[1];
  if (static_cast<int>(a.heads.size()) != c.heads ||
      static_cast<int>(b.heads.size()) != c.second_heads || a.bias_scaling != c.bias_scaling ||
      b.bias_scaling != BiasScaling::kNone)
    return false;
  auto allowed = [](const std::vector<Attention>& modes, Attention x) {
    return std::find(modes.begin(), modes.end(), x) != modes.end();
  };
  if (!allowed(c.modes, a.attention) || !allowed(c.second_modes, b.attention)) return false;
  if (!a.mlp || !b.mlp || a.mlp->in.rows() != c.mlp_width || b.mlp->in.rows() != c.mlp_width)
    return false;
  const double tol = 1.0 + 1e-9;
  if (!(OutputScale(m) <= c.max_scale * tol)) return false;
  for (int l = 0; l < 2; ++l)
    if (Bounded(m.layers[l].attention) && std::isfinite(c.max_logit) &&
        !(LayerLogitScale(m, l) <= c.max_logit * tol))
      return false;
  return true;
}

namespace {

// ---- the pair and its mechanism -------------------------------------------------------------

// A climb's memory: the direction w of the residual the mechanism reads, and strings to probe.
struct Memory {
  Vector w;
  std::vector<std::vector<Run>> hints;
};

Layer EmptyLayer(const TwoLayerClass& c, int heads, Attention mode, BiasScaling scaling) {
  Layer layer;
  layer.attention = mode;
  layer.bias_scaling = scaling;
  layer.precision_bits = mode == Attention::kFinite ? c.precision_bits : 0;
  for (int h = 0; h < heads; ++h)
    layer.heads.push_back({Matrix::Zero(c.width, c.width), Matrix::Zero(c.width, c.width),
                           Vector::Zero(c.locality + 1)});
  layer.mlp = Mlp{Matrix::Zero(c.mlp_width, c.width), Vector::Zero(c.mlp_width),
                  Matrix::Zero(c.width, c.mlp_width)};
  return layer;
}

double GridValue(Engine& e) {
  static const double grid[] = {-2, -1, -0.5, 0, 0.5, 1, 2};
  return grid[Pick(e, 7)];
}

// A random model of the class's shared part (everything but the mechanism): one-hot token
// embeddings, heads with grid logits and biases that copy one coordinate into another, an MLP
// unit on two coordinates (docs/refute.md §8.2).
Transformer RandomShared(const TwoLayerClass& c, Engine& e) {
  Transformer m;
  m.name = "refute --layers 2";
  m.alphabet = c.alphabet;
  m.width = c.width;
  m.period = c.period;
  m.locality = c.locality;
  m.embedding = Matrix::Zero(c.alphabet, c.width);
  for (int s = 0; s < c.alphabet; ++s) m.embedding(s, s) = 1.0;
  m.positional = Matrix::Zero(c.period, c.width);
  m.layers.push_back(
      EmptyLayer(c, c.heads, c.modes[Pick(e, static_cast<int>(c.modes.size()))], c.bias_scaling));
  m.layers.push_back(EmptyLayer(c, c.second_heads,
                                c.second_modes[Pick(e, static_cast<int>(c.second_modes.size()))],
                                BiasScaling::kNone));
  const int out = OutCoordinate(c);
  auto coordinate = [&] { return Pick(e, out); };  // never the output coordinate
  for (int l = 0; l < 2; ++l) {
    for (Head& h : m.layers[l].heads) {
      for (int k = 0; k < 2; ++k) h.qk(coordinate(), coordinate()) = GridValue(e);
      for (int t = 0; t <= c.locality; ++t)
        if (Pick(e, 2) == 0) h.bias(t) = GridValue(e);
      h.ov(coordinate(), coordinate()) = (Pick(e, 2) == 0 ? 1.0 : -1.0);
    }
  }
  Mlp& mlp = *m.layers[0].mlp;
  mlp.in(0, coordinate()) = 1.0;
  mlp.in(0, coordinate()) = -1.0;
  mlp.out(coordinate(), 0) = 1.0;
  m.readout_weight = Matrix::Zero(1, c.width);
  m.readout_bias = Vector::Zero(1);
  return m;
}

// Scales a softmax or finite layer's logits (qk and bias) so that LayerLogitScale ≤ B.
void ProjectLogits(const TwoLayerClass& c, Transformer& m) {
  if (!std::isfinite(c.max_logit)) return;
  for (int l = 0; l < 2; ++l) {
    if (!Bounded(m.layers[l].attention)) continue;
    const double scale = LayerLogitScale(m, l);
    if (scale <= c.max_logit) continue;
    const double k = c.max_logit / scale * (1.0 - 1e-12);
    for (Head& h : m.layers[l].heads) {
      h.qk *= k;
      h.bias *= k;
    }
  }
}

// The probe strings, their lengths and residuals for one shared model: every short string and
// the long probes (docs/refute.md §8.2).
struct Probes {
  std::vector<std::vector<Run>> strings;
  std::vector<std::uint64_t> lengths;
  std::vector<Vector> u;
};

Probes MakeProbes(const TwoLayerSearchOptions& o, const Transformer& shared, const Memory& memory,
                  Engine& engine) {
  Probes p;
  p.strings = ShortProbes(o.cls.alphabet);
  for (auto& x : LongProbes(o.cls.alphabet, o.max_length, engine, 2)) p.strings.push_back(x);
  for (const auto& h : memory.hints)
    if (!h.empty() && Length(h) <= kProbeMaxLength) p.strings.push_back(h);
  for (const auto& x : p.strings) p.lengths.push_back(Length(x));
  p.u = Residuals(shared, p.strings);
  return p;
}

// max over probes of w·u (and its index).
std::pair<double, int> MaxDot(const Vector& w, const std::vector<Vector>& us) {
  double best = -std::numeric_limits<double>::infinity();
  int at = -1;
  for (std::size_t i = 0; i < us.size(); ++i) {
    if (!us[i].allFinite()) continue;
    const double z = w.dot(us[i]);
    if (z > best) best = z, at = static_cast<int>(i);
  }
  return {best, at};
}

Vector RandomDirection(int width, int out, Engine& e) {
  Vector w = Vector::Zero(width);
  const int nonzero = 1 + Pick(e, 3);
  for (int k = 0; k < nonzero; ++k) w(Pick(e, out)) = Pick(e, 2) == 0 ? 1.0 : -1.0;
  if (Pick(e, 3) == 0)
    for (int i = 0; i < out; ++i) w(i) += 0.3 * Normal(e);
  if (w.norm() == 0) w(0) = 1.0;
  return w / w.norm();
}

// The mechanism's slope c: the largest the output scale L₀ allows for a unit direction w (it does
// not depend on w: Ω(f) = c·(1 + ‖w‖)).
double Slope(const TwoLayerSearchOptions& o, Transformer f) {
  const int out = OutCoordinate(o.cls);
  Mlp& mlp = *f.layers[1].mlp;
  mlp.in.setZero();
  mlp.out.setZero();
  mlp.in(0, 0) = 1.0;
  mlp.out(out, 0) = 1.0;
  f.readout_weight.setZero();
  f.readout_weight(0, out) = 1.0;
  const double scale = OutputScale(f);
  return scale > 0 ? o.cls.max_scale / scale * (1.0 - 1e-9) : 1.0;
}

// The probes' prediction of T* for direction w and slope c (a surrogate, never reported): with
// z_hi the largest w·u over the probes and θ = z_hi − (1.05κ − 1)ε/c, the shortest probe with
// w·u > θ, plus a fraction < 0.5 for how far the probes shorter than it stay below θ.
double Predict(const TwoLayerSearchOptions& o, const Vector& w, double c, const Probes& p) {
  const double z_hi = MaxDot(w, p.u).first;
  if (!std::isfinite(z_hi)) return 0.0;
  const double theta = z_hi - (kMargin * o.separation - 1.0) * o.eps / c;
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < p.u.size(); ++i)
    if (p.u[i].allFinite() && w.dot(p.u[i]) > theta) first = std::min(first, p.lengths[i]);
  double below = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < p.u.size(); ++i)
    if (p.u[i].allFinite() && p.lengths[i] < first) below = std::max(below, w.dot(p.u[i]));
  const double margin = std::isfinite(below) ? (theta - below) * c / o.eps : 1.0;
  return static_cast<double>(first) + 0.5 * std::clamp(margin, 0.0, 0.999);
}

// The half-space mechanism on direction w (docs/refute.md §8.2): f − g = c·ReLU(w·u − z₀),
// z₀ = z_hi − 1.05κε/c, z_hi the largest w·u over the probes (its string goes to `hint`), c the
// largest the output scale L₀ allows. f and g share every other weight.
void BuildMechanism(const TwoLayerSearchOptions& o, const Vector& w, double c, const Probes& probes,
                    Transformer& f, Transformer& g, std::vector<Run>* hint) {
  const int out = OutCoordinate(o.cls);
  const auto [z_hi, at] = MaxDot(w, probes.u);
  Mlp& mlp = *f.layers[1].mlp;
  mlp.in.setZero();
  mlp.in_bias.setZero();
  mlp.out.setZero();
  mlp.in.row(0) = w.transpose();
  mlp.out(out, 0) = 1.0;
  f.readout_weight.setZero();
  f.readout_weight(0, out) = c;
  f.readout_bias.setZero();
  mlp.in_bias(0) = std::isfinite(z_hi) ? -(z_hi - kMargin * o.separation * o.eps / c) : 0.0;
  g = f;
  g.layers[1].mlp->out.setZero();
  if (hint) *hint = at >= 0 ? probes.strings[at] : std::vector<Run>{};
}

// Best of 8 random directions by the probes' prediction.
Vector FreshDirection(const TwoLayerSearchOptions& o, double c, const Probes& probes, Engine& e) {
  Vector best;
  double score = -1.0;
  for (int k = 0; k < 8; ++k) {
    const Vector w = RandomDirection(o.cls.width, OutCoordinate(o.cls), e);
    const double s = Predict(o, w, c, probes);
    if (best.size() == 0 || s > score) best = w, score = s;
  }
  return best;
}

// Rebuilds the mechanism on f's current shared weights (a fresh direction when `fresh`); returns
// the probes' prediction of T*.
double Rebuild(const TwoLayerSearchOptions& o, Memory& memory, Transformer& f, Transformer& g,
               Engine& e, bool fresh, std::vector<Run>* hint) {
  ProjectLogits(o.cls, f);
  const Probes probes = MakeProbes(o, f, memory, e);
  const double c = Slope(o, f);
  if (fresh || memory.w.size() != o.cls.width) memory.w = FreshDirection(o, c, probes, e);
  BuildMechanism(o, memory.w, c, probes, f, g, hint);
  return Predict(o, memory.w, c, probes);
}

const std::vector<std::string> kProposalNames = {"direction",  "direction-step", "attention-step",
                                                 "value-step", "mode",           "logit-scale",
                                                 "gaussian"};
const std::vector<double> kProposalWeights = {1, 2, 4, 3, 1, 2, 1};

// Applies proposal `kind` to the shared weights of f (then the mechanism is rebuilt); false when
// it does not apply.
bool Propose(int kind, const TwoLayerSearchOptions& o, Memory& memory, Transformer& f,
             Transformer& g, Engine& e, std::vector<Run>* hint, double* predicted) {
  const TwoLayerClass& c = o.cls;
  const int out = OutCoordinate(c);
  bool fresh = false;
  switch (kind) {
    case 0:
      fresh = true;
      break;
    case 1: {
      if (memory.w.size() != c.width) return false;
      Vector w = memory.w;
      if (Pick(e, 2) == 0)
        w(Pick(e, out)) = Pick(e, 3) - 1.0;
      else
        for (int i = 0; i < out; ++i) w(i) += 0.3 * Normal(e);
      w(out) = 0.0;
      if (w.norm() == 0) return false;
      memory.w = w / w.norm();
      break;
    }
    case 2: {
      Layer& layer = f.layers[Pick(e, 2)];
      Head& h = layer.heads[Pick(e, static_cast<int>(layer.heads.size()))];
      const int what = Pick(e, 3);
      if (what == 0)
        h.qk(Pick(e, out), Pick(e, out)) = GridValue(e) * (1 + Pick(e, 3));
      else if (what == 1)
        h.bias(Pick(e, c.locality + 1)) = GridValue(e) * (1 + Pick(e, 3));
      else {
        const double k = Pick(e, 2) == 0 ? 0.5 : 2.0;
        h.qk *= k;
        h.bias *= k;
      }
      break;
    }
    case 3: {
      const int what = Pick(e, 5);
      const double v = GridValue(e);
      if (what == 0) {
        f.embedding(Pick(e, c.alphabet), Pick(e, out)) = v;
      } else if (what == 1) {
        f.positional(Pick(e, c.period), Pick(e, out)) = v;
      } else if (what <= 3) {
        Layer& layer = f.layers[what - 2];
        layer.heads[Pick(e, static_cast<int>(layer.heads.size()))].ov(Pick(e, out), Pick(e, out)) =
            v;
      } else {
        Mlp& mlp = *f.layers[0].mlp;
        const int unit = Pick(e, c.mlp_width), part = Pick(e, 3);
        if (part == 0) mlp.in(unit, Pick(e, out)) = v;
        if (part == 1) mlp.in_bias(unit) = v;
        if (part == 2) mlp.out(Pick(e, out), unit) = v;
      }
      break;
    }
    case 4: {
      const int l = Pick(e, 2);
      const auto& modes = l == 0 ? c.modes : c.second_modes;
      if (modes.size() < 2) return false;
      Attention next = modes[Pick(e, static_cast<int>(modes.size()))];
      if (next == f.layers[l].attention) return false;
      f.layers[l].attention = next;
      f.layers[l].precision_bits = next == Attention::kFinite ? c.precision_bits : 0;
      break;
    }
    case 5: {
      const int l = Pick(e, 2);
      double k = std::exp(0.5 * Normal(e));
      if (Bounded(f.layers[l].attention) && std::isfinite(c.max_logit) && Pick(e, 2) == 0) {
        const double scale = LayerLogitScale(f, l);
        if (!(scale > 0)) return false;
        k = c.max_logit / scale;  // to the class's boundary
      }
      for (Head& h : f.layers[l].heads) {
        h.qk *= k;
        h.bias *= k;
      }
      break;
    }
    case 6: {
      const int l = Pick(e, 2);
      const double sigma = 0.2;
      for (Head& h : f.layers[l].heads) {
        for (Matrix* a : {&h.qk, &h.ov})
          for (int i = 0; i < out; ++i)
            for (int j = 0; j < out; ++j)
              if ((*a)(i, j) != 0.0) (*a)(i, j) *= 1.0 + sigma * Normal(e);
        for (int t = 0; t < h.bias.size(); ++t)
          if (h.bias(t) != 0.0) h.bias(t) *= 1.0 + sigma * Normal(e);
      }
      break;
    }
    default:
      return false;
  }
  *predicted = Rebuild(o, memory, f, g, e, fresh, hint);
  return true;
}

// ---- evaluation -----------------------------------------------------------------------------

double Score(const TwoLayerSearchOptions& o, const TwoLayerEvaluation& ev) {
  if (!ev.valid) return -1.0;
  const double t = ev.first_disagreement ? static_cast<double>(*ev.first_disagreement)
                                         : static_cast<double>(ev.checked_up_to + 1);
  // A run the evaluation cap stopped is certified only up to where it stopped; the climbs prefer
  // pairs whose T* the path search decides (its lower bound counts half).
  if (ev.capped) return 0.5 * t * (ev.separated ? 1.0 : 0.0);
  if (ev.separated) {
    // Ties in T* are broken by how far the largest gap at T* stays below the supremum found:
    // a pair whose gap at T* barely exceeds ε is closer to a larger T* (a fraction < 0.5, so
    // the order by T* is kept).
    if (!ev.first_disagreement || !(ev.sup_gap > o.eps)) return t;
    return t + 0.5 * std::clamp((ev.sup_gap - ev.gap) / (ev.sup_gap - o.eps), 0.0, 0.999);
  }
  const double q = std::clamp((ev.sup_gap - o.eps) / ((o.separation - 1.0) * o.eps), 0.0, 1.0);
  return 0.5 * t * q * q;
}

ThresholdOptions ThresholdFor(double eps, std::uint64_t n, std::uint64_t cap, int threads) {
  ThresholdOptions t;
  t.epsilon = eps;
  t.max_length = n;
  t.threads = threads;
  t.max_evaluations = cap;
  t.two_layer_paths = true;
  t.samples_per_length = 1;
  return t;
}

}  // namespace

TwoLayerEvaluation EvaluateTwoLayerPair(const TwoLayerSearchOptions& o, const Transformer& f,
                                        const Transformer& g,
                                        const std::vector<std::vector<Run>>& hints) {
  TwoLayerEvaluation ev;
  if (!InTwoLayerClass(o.cls, f) || !InTwoLayerClass(o.cls, g)) {
    ev.note = "outside the class";
    return ev;
  }
  ThresholdResult t;
  try {
    t = FindThreshold(f, g, ThresholdFor(o.eps, o.max_length, o.threshold_evaluations, 1));
  } catch (const std::exception& error) {
    ev.note = error.what();
    return ev;
  }
  if (t.method != ThresholdMethod::kPaths) {
    ev.note = "the path search did not run";
    return ev;
  }
  ev.threshold_evaluations = t.evaluations;
  // Only what the path search decided counts (never the random sampler beyond its limit).
  const std::uint64_t exact = std::min(t.checked_up_to, t.exhaustive_up_to);
  if (t.first_disagreement && *t.first_disagreement <= exact) {
    ev.first_disagreement = t.first_disagreement;
    ev.witness = t.witness;
    ev.gap = t.gap;
    ev.checked_up_to = *t.first_disagreement;
  } else {
    ev.checked_up_to = t.first_disagreement ? *t.first_disagreement - 1 : exact;
    ev.checked_up_to = std::min(ev.checked_up_to, exact);
    ev.capped = ev.checked_up_to < o.max_length;
    if (ev.capped)
      ev.censored_by =
          t.stopped == ThresholdStop::kEvaluations && t.exhaustive_up_to >= t.checked_up_to
              ? "threshold_evaluations"
              : "path_search_length";
  }
  if (ev.checked_up_to == 0) {
    ev.note = "the path search decided no length";
    return ev;
  }
  ev.valid = true;
  // Separation: the hints, the witness scaled up, and the long probes' a^p b^q c strings.
  std::vector<std::vector<Run>> tries = hints;
  for (std::uint64_t k : {2, 4, 16})
    if (!ev.witness.empty()) tries.push_back(Scaled(ev.witness, k, kProbeMaxLength));
  Engine engine(StreamSeed(o.seed, "two-layer-separation", t.evaluations));
  for (auto& p : LongProbes(o.cls.alphabet, o.max_length, engine, 0)) tries.push_back(p);
  for (const auto& x : tries) {
    if (x.empty() || Length(x) > kProbeMaxLength) continue;
    const double gap = Gap(f, g, x);
    if (std::isfinite(gap) && gap > ev.sup_gap) ev.sup_gap = gap, ev.sup_string = x;
    if (ev.sup_gap >= o.separation * o.eps) break;
  }
  ev.separated = ev.sup_gap >= o.separation * o.eps;
  ev.score = Score(o, ev);
  return ev;
}

std::uint64_t TwoLayerPastNLimit() { return kProbeMaxLength; }

bool CertifyTwoLayerPastN(const TwoLayerSearchOptions& o, const Transformer& f,
                          const Transformer& g, TwoLayerEvaluation& ev, std::uint64_t target,
                          double seconds) {
  if (!ev.valid || ev.first_disagreement || ev.capped) return false;
  const bool timed = seconds > 0;
  // Without a time budget one bounded run: to 4N, with 16 times the search's evaluation cap.
  target = std::min({target, TwoLayerPastNLimit(), timed ? target : 4 * o.max_length});
  if (ev.checked_up_to >= target) return false;
  const std::uint64_t cap =
      timed ? std::numeric_limits<std::uint64_t>::max() : 16 * o.threshold_evaluations;
  ThresholdOptions options = ThresholdFor(o.eps, target, cap, 1);
  options.time_budget = timed ? seconds : 0.0;
  ThresholdResult t;
  try {
    t = FindThreshold(f, g, options);
  } catch (const std::exception&) {
    return false;  // beyond the threshold's limits for this pair: nothing more is certified
  }
  if (t.method != ThresholdMethod::kPaths) return false;
  const std::uint64_t exact = std::min(t.checked_up_to, t.exhaustive_up_to);
  const bool found = t.first_disagreement && *t.first_disagreement <= exact;
  const std::uint64_t checked =
      found ? *t.first_disagreement
            : std::min(t.first_disagreement ? *t.first_disagreement - 1 : exact, exact);
  if (!found && checked <= ev.checked_up_to) return false;
  ev.threshold_evaluations += t.evaluations;
  ev.checked_up_to = checked;
  if (found) {
    ev.first_disagreement = t.first_disagreement;
    ev.witness = t.witness;
    ev.gap = t.gap;
  }
  // A run the time budget stopped is replayed to where it stopped (its windows up to there are
  // those of any longer run); otherwise to its own length.
  ev.past_n_max_length = t.stopped == ThresholdStop::kTimeBudget && !found ? checked : target;
  ev.past_n_max_evaluations = cap;
  ev.score = Score(o, ev);
  return true;
}

const std::vector<std::string>& TwoLayerProposalNames() { return kProposalNames; }

namespace {

// Whether a candidate pair may replace the current one: a refuting pair is never replaced by a
// non-refuting one and always replaces one; otherwise the score must not decrease.
bool Keeps(const TwoLayerSearchOptions& o, const Transformer& nf, const Transformer& ng,
           const TwoLayerEvaluation& candidate, const Transformer& f, const Transformer& g,
           const TwoLayerEvaluation& current) {
  if (!candidate.valid) return false;
  if (o.refutes) {
    const bool was = current.valid && o.refutes(f, g, current), is = o.refutes(nf, ng, candidate);
    if (was != is) return is;
  }
  return candidate.score >= current.score;
}

int DrawKind(Engine& e) {
  double total = 0;
  for (double w : kProposalWeights) total += w;
  double x = Uniform(e, 0.0, total);
  for (std::size_t k = 0; k < kProposalWeights.size(); ++k) {
    if (x < kProposalWeights[k]) return static_cast<int>(k);
    x -= kProposalWeights[k];
  }
  return 0;
}

std::vector<std::vector<Run>> HintsOf(const TwoLayerEvaluation& ev, const std::vector<Run>& hint) {
  std::vector<std::vector<Run>> hints;
  if (!hint.empty()) hints.push_back(hint);
  if (!ev.sup_string.empty()) hints.push_back(ev.sup_string);
  return hints;
}

// Candidates drawn per random start and per proposal; the probes' prediction picks the one
// evaluated.
constexpr int kScreened = 4;
constexpr int kScreenedProposals = 8;

// A random start: the best of kScreened random pairs by the probes' prediction.
void RandomStart(const TwoLayerSearchOptions& o, Engine& e, Memory& memory, Transformer& f,
                 Transformer& g, std::vector<Run>& hint) {
  double best = -1.0;
  for (int k = 0; k < kScreened; ++k) {
    Memory m;
    Transformer nf = RandomShared(o.cls, e), ng;
    std::vector<Run> h;
    const double predicted = Rebuild(o, m, nf, ng, e, true, &h);
    if (predicted > best) {
      best = predicted;
      memory = std::move(m);
      f = std::move(nf);
      g = std::move(ng);
      hint = std::move(h);
    }
  }
}

// One random start, number i of the run: drawn from StreamSeed(seed, "two-layer-start", i) and
// evaluated (the random baseline is nothing but these).
struct Start {
  TwoLayerClimb climb;
  Memory memory;
};

Start EvaluateStart(const TwoLayerSearchOptions& o, int index) {
  Start s;
  s.climb.index = index;
  s.climb.applied.assign(kProposalNames.size(), 0);
  s.climb.accepted.assign(kProposalNames.size(), 0);
  Engine e(StreamSeed(o.seed, "two-layer-start", static_cast<std::uint64_t>(index)));
  std::vector<Run> hint;
  RandomStart(o, e, s.memory, s.climb.f, s.climb.g, hint);
  s.climb.best = EvaluateTwoLayerPair(o, s.climb.f, s.climb.g, HintsOf({}, hint));
  s.climb.trajectory.push_back(s.climb.best.score);
  return s;
}

// A hill climb of `proposals` proposals from a start, with the randomness of
// StreamSeed(seed, "two-layer-climb", index).
TwoLayerClimb Climb(const TwoLayerSearchOptions& o, int index, const Start& from, int proposals,
                    const std::function<bool()>& stop) {
  TwoLayerClimb climb = from.climb;
  climb.index = index;
  climb.trajectory.clear();
  Engine e(StreamSeed(o.seed, "two-layer-climb", static_cast<std::uint64_t>(index)));
  Memory kept = from.memory;
  for (int it = 0; it < proposals; ++it) {
    if (stop && stop()) break;
    const int kind = DrawKind(e);
    // kScreenedProposals variants of one kind of proposal; the probes' prediction picks one to
    // certify.
    double best_prediction = -1.0;
    Memory m;
    Transformer nf, ng;
    std::vector<Run> h;
    for (int k = 0; k < kScreenedProposals; ++k) {
      Memory cm = kept;
      cm.hints = HintsOf(climb.best, {});
      if (!climb.best.witness.empty())
        cm.hints.push_back(Scaled(climb.best.witness, 4, kProbeMaxLength));
      Transformer cf = climb.f, cg = climb.g;
      std::vector<Run> ch;
      double predicted = -1.0;
      if (!Propose(kind, o, cm, cf, cg, e, &ch, &predicted)) continue;
      if (predicted > best_prediction) {
        best_prediction = predicted;
        m = std::move(cm);
        nf = std::move(cf);
        ng = std::move(cg);
        h = std::move(ch);
      }
    }
    if (best_prediction < 0) continue;
    ++climb.applied[kind];
    const TwoLayerEvaluation ev = EvaluateTwoLayerPair(o, nf, ng, HintsOf(climb.best, h));
    if (Keeps(o, nf, ng, ev, climb.f, climb.g, climb.best)) {
      if (ev.score > climb.best.score) ++climb.accepted[kind];
      climb.f = std::move(nf);
      climb.g = std::move(ng);
      climb.best = ev;
      kept = m;
    }
    climb.trajectory.push_back(climb.best.score);
  }
  return climb;
}

// Simplifies the best pair (docs/refute.md §8.3): per weight array of f and then g, entries below
// 1% of its largest set to 0, then every entry rounded to 3 significant digits; a move is kept
// when the pair stays in the class and the score does not decrease.
int Shrink(const TwoLayerSearchOptions& o, TwoLayerClimb& climb, std::uint64_t budget,
           std::uint64_t* spent, const std::function<bool()>& stop) {
  int kept = 0;
  auto round3 = [](double x) {
    if (x == 0 || !std::isfinite(x)) return x;
    const double p = std::pow(10.0, 2 - std::floor(std::log10(std::abs(x))));
    return std::round(x * p) / p;
  };
  for (int pass = 0; pass < 2; ++pass)
    for (int which = 0; which < 2; ++which) {
      int array = 0;
      while (true) {
        if (*spent >= budget || (stop && stop())) return kept;
        Transformer nf = climb.f, ng = climb.g;
        Transformer& target = which == 0 ? nf : ng;
        int k = 0;
        bool changed = false, exists = false;
        ForEachWeightArray(target, [&](auto& a) {
          if (k++ != array) return;
          exists = true;
          const double largest = a.size() ? a.cwiseAbs().maxCoeff() : 0.0;
          for (Eigen::Index i = 0; i < a.size(); ++i) {
            double& x = a.data()[i];
            const double y = pass == 0 ? (std::abs(x) < 0.01 * largest ? 0.0 : x) : round3(x);
            if (y != x) x = y, changed = true;
          }
        });
        if (!exists) break;
        ++array;
        if (!changed) continue;
        ++*spent;
        const TwoLayerEvaluation ev = EvaluateTwoLayerPair(o, nf, ng, HintsOf(climb.best, {}));
        if (Keeps(o, nf, ng, ev, climb.f, climb.g, climb.best)) {
          climb.f = std::move(nf);
          climb.g = std::move(ng);
          climb.best = ev;
          ++kept;
        }
      }
    }
  return kept;
}

// The 50-digit recheck: gap > ε at the witness, ≥ κε at the separating string.
void Recheck(const TwoLayerSearchOptions& o, const Transformer& f, const Transformer& g,
             const TwoLayerEvaluation& ev, RecheckStatus* status, std::string* gap,
             std::string* sup_gap) {
  bool ok = true;
  auto precise = [&](const std::vector<Run>& x) {
    const auto source = MakeRunSource(x, "recheck");
    return PreciseSupDistance(EvaluatePrecise(f, *source), EvaluatePrecise(g, *source));
  };
  if (!ev.witness.empty()) {
    const PreciseReal p = precise(ev.witness);
    *gap = PreciseText(p);
    ok = ok && p > PreciseReal(o.eps);
  }
  if (!ev.sup_string.empty()) {
    const PreciseReal p = precise(ev.sup_string);
    *sup_gap = PreciseText(p);
    ok = ok && (p >= PreciseReal(o.separation * o.eps)) == ev.separated;
  }
  *status = ok ? RecheckStatus::kAgrees : RecheckStatus::kDiffers;
}

}  // namespace

void ValidateTwoLayerSearch(const TwoLayerSearchOptions& o) {
  ValidateTwoLayerClass(o.cls);
  if (o.max_length < 1 || o.max_length > 5000)
    throw InputError(fmt::format(
        "--max-length: {} is outside [1, 5000] for --layers 2 (probe strings reach 4N and the "
        "50-digit two-layer evaluator stops at {})",
        o.max_length, kPreciseTwoLayerLimit));
  if (o.budget < 1) throw InputError("--budget: at least 1 evaluation");
  if (o.budget > kMaxTwoLayerBudget)
    throw InputError(
        fmt::format("--budget: {} is above {} evaluations", o.budget, kMaxTwoLayerBudget));
  if (o.iterations < 0) throw InputError("--iterations: must be ≥ 0");
  if (o.threshold_evaluations < 1)
    throw InputError(
        "--threshold-evaluations: at least 1 (a cap of 0 certifies nothing and cannot be "
        "replayed)");
  if (!(o.eps > 0) || !std::isfinite(o.eps)) throw InputError("--eps: must be finite and > 0");
  if (!(o.separation > 1) || !std::isfinite(o.separation))
    throw InputError("--separation: must be finite and > 1");
}

TwoLayerSearchResult RunTwoLayerSearch(const TwoLayerSearchOptions& o) {
  ValidateTwoLayerSearch(o);
  TwoLayerSearchResult result;
  result.options = o;
  const std::uint64_t shrink_budget =
      o.random_only ? 0 : std::min<std::uint64_t>(o.shrink_budget, o.budget / 10);
  // Random starts first (a third of the budget; the baseline: all of it), then climbs of about
  // `iterations` proposals from the best starts (docs/refute.md §8.3).
  // `--iterations 0`: no climbs, every evaluation but shrinking a random start.
  const std::uint64_t usable = std::max<std::uint64_t>(1, o.budget - shrink_budget);
  const int starts = static_cast<int>(o.random_only       ? o.budget
                                      : o.iterations == 0 ? usable
                                                          : std::max<std::uint64_t>(1, usable / 3));
  const std::uint64_t rest = o.random_only ? 0 : usable - static_cast<std::uint64_t>(starts);
  const int climbs = rest == 0 ? 0
                               : static_cast<int>(std::clamp<std::uint64_t>(
                                     rest / static_cast<std::uint64_t>(std::max(1, o.iterations)),
                                     1, static_cast<std::uint64_t>(starts)));
  const int proposals = climbs > 0 ? static_cast<int>(rest / climbs) : 0;
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  std::atomic<bool> timed_out{false};
  const std::function<bool()> stop = [&] {
    if (o.time_budget <= 0 || elapsed() < o.time_budget) return false;
    timed_out = true;
    return true;
  };
  std::atomic<int> done{0};
  std::atomic<std::uint64_t> spent{0};
  std::mutex report;
  double best_so_far = -1.0;
  auto finished = [&](const TwoLayerClimb& c) {
    spent += c.trajectory.size();
    const int n = ++done;
    if (o.progress) {
      const std::lock_guard<std::mutex> lock(report);
      best_so_far = std::max(best_so_far, c.best.score);
      o.progress(n, starts + climbs, spent.load(), best_so_far);
    }
  };
  std::vector<Start> firsts(starts);
  auto not_run = [](TwoLayerClimb& c, int i) {
    c.index = i;
    c.best.note = "not run: the time budget ran out first";
    c.best.score = -2.0;
  };
  tbb::task_arena arena(o.threads > 0 ? o.threads : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(0, starts, [&](int i) {
      // Start 0 is always evaluated, so a result has at least one evaluated pair.
      if (i > 0 && stop()) return not_run(firsts[i].climb, i);
      firsts[i] = EvaluateStart(o, i);
      finished(firsts[i].climb);
    });
  });
  // The climbs start from the best starts (by score, the lower index on ties).
  std::vector<int> order(starts);
  for (int i = 0; i < starts; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return firsts[a].climb.best.score > firsts[b].climb.best.score;
  });
  std::vector<TwoLayerClimb> climbed(climbs);
  arena.execute([&] {
    tbb::parallel_for(0, climbs, [&](int j) {
      if (stop()) return not_run(climbed[j], starts + j);
      climbed[j] = Climb(o, starts + j, firsts[order[j]], proposals, stop);
      finished(climbed[j]);
    });
  });
  for (Start& s : firsts) result.climbs.push_back(std::move(s.climb));
  for (TwoLayerClimb& c : climbed) result.climbs.push_back(std::move(c));
  std::vector<TwoLayerEvaluation> pairs;
  std::vector<bool> refuting;
  for (const TwoLayerClimb& c : result.climbs) {
    result.evaluations += c.trajectory.size();
    pairs.push_back(c.best);
    refuting.push_back(o.refutes && c.best.valid && o.refutes(c.f, c.g, c.best));
  }
  result.best = SelectTwoLayerBest(pairs, refuting);
  TwoLayerClimb& best = result.climbs[result.best];
  if (shrink_budget > 0)
    result.shrink_accepted = Shrink(o, best, shrink_budget, &result.shrink_evaluations, stop);
  result.evaluations += result.shrink_evaluations;
  Recheck(o, best.f, best.g, best.best, &result.recheck_status, &result.recheck_gap,
          &result.recheck_sup_gap);
  result.stopped_by_time = timed_out.load();
  result.seconds = elapsed();
  return result;
}

namespace {

ConstantMap PairWithEps(const Transformer& f, const Transformer& g, double eps) {
  ConstantMap c = PairConstants(f, g);
  c["eps"] = eps;
  return c;
}

double LowerBound(const TwoLayerEvaluation& ev) {
  return ev.first_disagreement ? static_cast<double>(*ev.first_disagreement)
                               : static_cast<double>(ev.checked_up_to + 1);
}

}  // namespace

void ValidateTwoLayerRefuteBound(const std::string& bound) {
  if (bound.empty()) throw InputError("--bound: an expression is required");
  // Every constant PairConstants gives a two-layer pair, plus eps, at 1 (parse errors and unknown
  // names throw here), then with those undefined for two layers set to NaN.
  ConstantMap probe;
  for (const char* name :
       {"L",        "Delta",      "S",           "tau",       "gamma",           "p",
        "C",        "gamma_pos",  "D",           "H",         "near_tie_spread", "eps",
        "tl_omega", "tl_lambda1", "tl_lambda_t", "tl_zeta_a", "tl_zeta_gamma",   "tl_s1",
        "tl_s2",    "tl_s3",      "tl_e2"})
    probe[name] = 1.0;
  EvaluateRefuteBound(bound, probe);
  for (const char* name : {"L", "gamma"}) probe[name] = std::nan("");
  if (std::isnan(EvaluateRefuteBound(bound, probe)))
    throw InputError(fmt::format(
        "--bound: '{}' is undefined for every two-layer pair (L and gamma are not defined for two "
        "layers; use C, S, Delta, tau, p, D, H, gamma_pos, eps or the tl_* constants)",
        bound));
}

bool TwoLayerRefutes(const TwoLayerEvaluation& ev, double bound_value) {
  return ev.valid && ev.separated && std::isfinite(bound_value) && bound_value > 0 &&
         LowerBound(ev) > bound_value;
}

int SelectTwoLayerBest(const std::vector<TwoLayerEvaluation>& pairs,
                       const std::vector<bool>& refuting) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(pairs.size()); ++i) {
    const bool r = refuting[i], rb = refuting[best];
    if (r != rb ? r : pairs[i].score > pairs[best].score) best = i;
  }
  return best;
}

std::vector<int> TwoLayerCensoredBelowBound(const std::vector<TwoLayerEvaluation>& pairs,
                                            const std::vector<double>& bound_values) {
  std::vector<int> censored;
  for (int i = 0; i < static_cast<int>(pairs.size()); ++i) {
    const TwoLayerEvaluation& ev = pairs[i];
    const double b = bound_values[i];
    if (ev.valid && ev.separated && !ev.first_disagreement && std::isfinite(b) && b > 0 &&
        LowerBound(ev) <= b)
      censored.push_back(i);
  }
  return censored;
}

TwoLayerRefuteResult RunTwoLayerRefute(const TwoLayerSearchOptions& options,
                                       const std::string& bound) {
  ValidateTwoLayerRefuteBound(bound);
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  TwoLayerRefuteResult r;
  r.bound = bound;
  TwoLayerSearchOptions o = options;
  o.refutes = [&](const Transformer& f, const Transformer& g, const TwoLayerEvaluation& ev) {
    return TwoLayerRefutes(ev, EvaluateRefuteBound(bound, PairWithEps(f, g, options.eps)));
  };
  // The search gets 2/3 of a time budget, certifying censored pairs past N the rest.
  if (options.time_budget > 0) o.time_budget = options.time_budget * 2.0 / 3.0;
  r.search = RunTwoLayerSearch(o);
  r.search.options.refutes = nullptr;
  r.search.options.time_budget = options.time_budget;
  auto judge = [&](std::vector<TwoLayerEvaluation>& pairs, std::vector<double>& values,
                   std::vector<bool>& refuting) {
    pairs.clear(), values.clear(), refuting.clear();
    for (const TwoLayerClimb& c : r.search.climbs) {
      pairs.push_back(c.best);
      values.push_back(c.best.valid ? EvaluateRefuteBound(bound, PairWithEps(c.f, c.g, options.eps))
                                    : std::nan(""));
      refuting.push_back(TwoLayerRefutes(c.best, values.back()));
    }
  };
  std::vector<TwoLayerEvaluation> pairs;
  std::vector<double> values;
  std::vector<bool> refuting;
  judge(pairs, values, refuting);
  if (std::find(refuting.begin(), refuting.end(), true) == refuting.end()) {
    // Past the search's N: the best (by score) separated pairs censored at N below the bound at
    // their constants, up to 3, each by one path-search run in the time left (docs/refute.md §8.3).
    std::vector<int> censored;
    for (int i : TwoLayerCensoredBelowBound(pairs, values))
      if (!pairs[i].capped) censored.push_back(i);
    std::stable_sort(censored.begin(), censored.end(),
                     [&](int a, int b) { return pairs[a].score > pairs[b].score; });
    if (censored.size() > 3) censored.resize(3);
    const double past_started = elapsed();
    for (int i : censored) {
      const double left = options.time_budget > 0 ? options.time_budget - elapsed() : 0.0;
      if (options.time_budget > 0 && left <= 0) break;
      const double b = values[i];
      const std::uint64_t target =
          b >= static_cast<double>(TwoLayerPastNLimit())
              ? TwoLayerPastNLimit()
              : std::max<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(b)), 1);
      TwoLayerClimb& c = r.search.climbs[i];
      if (CertifyTwoLayerPastN(o, c.f, c.g, c.best, target, left)) ++r.certified_past_cap;
    }
    r.past_cap_seconds = elapsed() - past_started;
    if (r.certified_past_cap > 0) {
      judge(pairs, values, refuting);
      const int best = SelectTwoLayerBest(pairs, refuting);
      const bool changed = best != r.search.best ||
                           std::find(censored.begin(), censored.end(), best) != censored.end();
      r.search.best = best;
      if (changed) {
        const TwoLayerClimb& c = r.search.climbs[best];
        Recheck(o, c.f, c.g, c.best, &r.search.recheck_status, &r.search.recheck_gap,
                &r.search.recheck_sup_gap);
      }
    }
  }
  const TwoLayerClimb& best = r.search.climbs[r.search.best];
  const TwoLayerEvaluation& ev = best.best;
  r.constants = PairWithEps(best.f, best.g, options.eps);
  r.bound_value = EvaluateRefuteBound(bound, r.constants);
  const double t = LowerBound(ev);
  const bool usable = std::isfinite(r.bound_value) && r.bound_value > 0;
  if (usable && ev.valid) r.ratio = t / r.bound_value;
  r.refuted = TwoLayerRefutes(ev, r.bound_value);
  if (!r.refuted) {
    std::vector<std::string> why;
    // Any separated pair censored at or below the bound at its constants limits the verdict.
    const std::vector<int> censored = TwoLayerCensoredBelowBound(pairs, values);
    if (!censored.empty()) {
      const TwoLayerEvaluation& c = pairs[censored.front()];
      r.limited_by.push_back("max_length");
      if (c.censored_by == "threshold_evaluations") r.limited_by.push_back("threshold_evaluations");
      why.push_back(fmt::format(
          "{} separated pair(s) agree up to their certified length while the bound at their "
          "constants is at least that (first: climb {} agrees up to {} ({}), bound {:.6g}): "
          "their T* may exceed the bound",
          censored.size(), r.search.climbs[censored.front()].index, c.checked_up_to,
          c.censored_by == "threshold_evaluations"
              ? "the threshold's evaluation cap (--threshold-evaluations) stopped it there"
          : c.censored_by == "path_search_length"
              ? "the path search's exhaustive length limit (its memory for sets of paths)"
          : c.past_n_max_length > 0
              ? fmt::format("certified past N up to {}: the time budget, the {}-token limit or "
                            "the path search's length limit stopped it there",
                            c.checked_up_to, TwoLayerPastNLimit())
              : "the search's N",
          values[censored.front()]));
    }
    if (r.search.stopped_by_time) {
      r.limited_by.push_back("time_budget");
      why.push_back("the time budget stopped the search before its evaluation budget");
    }
    r.limited_by_reason = fmt::format("{}", fmt::join(why, "; "));
  }
  return r;
}

nlohmann::json TwoLayerRefuteToJson(const TwoLayerRefuteResult& r) {
  auto number = [](double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
  };
  nlohmann::json j = TwoLayerSearchToJson(r.search);
  j["context"]["command"] = "refute";
  j["bound"] = r.bound;
  j["refuted"] = r.refuted;
  j["bound_value"] = number(r.bound_value);
  j["ratio"] = number(r.ratio);
  j["limited_by"] = r.limited_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.limited_by);
  j["limited_by_reason"] = r.limited_by_reason;
  // Past N: how many pairs were certified further, and the run a replay repeats for the best.
  const TwoLayerEvaluation& ev = r.search.climbs[r.search.best].best;
  j["certified_past_cap"] = r.certified_past_cap;
  j["certified_max_length"] =
      ev.past_n_max_length > 0 ? ev.past_n_max_length : r.search.options.max_length;
  j["certified_max_evaluations"] =
      ev.past_n_max_length > 0 ? ev.past_n_max_evaluations : r.search.options.threshold_evaluations;
  nlohmann::json constants = nlohmann::json::object();
  for (const auto& [k, v] : r.constants) constants[k] = number(v);
  j["constants"] = constants;
  return j;
}

nlohmann::json TwoLayerSearchToJson(const TwoLayerSearchResult& search) {
  const TwoLayerSearchOptions& o = search.options;
  const TwoLayerClimb& best = search.climbs[search.best];
  const TwoLayerEvaluation& ev = best.best;
  auto number = [](double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
  };
  auto modes = [](const std::vector<Attention>& m) {
    nlohmann::json a = nlohmann::json::array();
    for (Attention x : m) a.push_back(AttentionName(x));
    return a;
  };
  auto runs = [](const std::vector<Run>& x) {
    nlohmann::json a = nlohmann::json::array();
    for (const Run& run : x) a.push_back({run.token, run.count});
    return a;
  };
  nlohmann::json j;
  j["context"] = {{"command", "search"}, {"seed", o.seed}};
  j["format"] = "ltsim-two-layer-search";
  j["version"] = 1;
  j["layers"] = 2;
  j["first_disagreement"] =
      ev.first_disagreement ? nlohmann::json(*ev.first_disagreement) : nlohmann::json(nullptr);
  j["first_disagreement_lower_bound"] = static_cast<std::uint64_t>(LowerBound(ev));
  j["checked_up_to"] = ev.checked_up_to;
  j["censored_by"] =
      ev.censored_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(ev.censored_by);
  j["certified_by"] = "paths";
  j["threshold_max_evaluations"] = o.threshold_evaluations;
  j["evaluations"] = search.evaluations;
  j["budget"] = o.budget;
  j["iterations"] = o.iterations;
  j["random"] = o.random_only;
  j["stopped_by_time"] = search.stopped_by_time;
  j["shrink_evaluations"] = search.shrink_evaluations;
  j["shrink_accepted"] = search.shrink_accepted;
  j["seed"] = o.seed;
  j["eps"] = o.eps;
  j["max_length"] = o.max_length;
  j["separation"] = o.separation;
  j["class"] = {{"alphabet", o.cls.alphabet},
                {"period", o.cls.period},
                {"locality", o.cls.locality},
                {"width", o.cls.width},
                {"heads", o.cls.heads},
                {"second_heads", o.cls.second_heads},
                {"mlp_width", o.cls.mlp_width},
                {"bias_scaling", BiasScalingName(o.cls.bias_scaling)},
                {"modes", modes(o.cls.modes)},
                {"second_modes", modes(o.cls.second_modes)},
                {"precision", o.cls.precision_bits},
                {"max_lipschitz", o.cls.max_scale},
                {"max_logit", number(o.cls.max_logit)}};
  j["separated"] = ev.separated;
  j["witness_text"] = RunLengthText(ev.witness);
  j["gap"] = number(ev.gap);
  j["sup_gap"] = number(ev.sup_gap);
  j["sup_gap_length"] = Length(ev.sup_string);
  j["sup_string"] = runs(ev.sup_string);
  j["output_scale"] = {number(OutputScale(best.f)), number(OutputScale(best.g))};
  j["logit_scale"] = {number(LayerLogitScale(best.f, 0)), number(LayerLogitScale(best.f, 1))};
  j["attention"] = {AttentionName(best.f.layers[0].attention),
                    AttentionName(best.f.layers[1].attention)};
  j["recheck"] = {{"digits", 50},
                  {"status", kRecheckValueNames.Name(search.recheck_status)},
                  {"gap", search.recheck_gap},
                  {"sup_gap", search.recheck_sup_gap}};
  nlohmann::json climbs = nlohmann::json::array();
  for (const TwoLayerClimb& c : search.climbs)
    climbs.push_back({{"index", c.index},
                      {"first_disagreement", c.best.first_disagreement
                                                 ? nlohmann::json(*c.best.first_disagreement)
                                                 : nlohmann::json(nullptr)},
                      {"checked_up_to", c.best.checked_up_to},
                      {"separated", c.best.separated},
                      {"applied", c.applied},
                      {"accepted", c.accepted},
                      {"score", c.best.score}});
  j["restarts"] = climbs;
  j["proposals"] = kProposalNames;
  return j;
}

bool ReplayTwoLayerRefute(const std::string& path, std::string* report) {
  const io::Json doc = io::ReadJsonFile(path, "refute result");
  const io::JsonReader j(doc, path);
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  const Transformer f = ReadModel((dir / "f.json").string());
  const Transformer g = ReadModel((dir / "g.json").string());
  if (f.layers.size() != 2 || g.layers.size() != 2)
    j.At("layers").Fail("2, but f.json or g.json beside it is not a two-layer model");
  const double eps = j.At("eps").Positive();
  const double kappa = j.At("separation").Positive();
  // The run that certified the pair: past N when refute certified it further (docs/refute.md
  // §8.3), else the search's own.
  const std::uint64_t n = j.Has("certified_max_length")
                              ? j.At("certified_max_length").UInt(1, TwoLayerPastNLimit())
                              : j.At("max_length").UInt(1, 5000);
  const std::uint64_t cap = j.Has("certified_max_evaluations")
                                ? j.At("certified_max_evaluations").UInt(1)
                                : j.At("threshold_max_evaluations").UInt(1);
  std::vector<Run> sup;
  for (const io::JsonReader& run : j.At("sup_string").Array(0, 1'000'000)) {
    const auto pair = run.Array(2, 2);
    sup.push_back(
        {static_cast<Token>(pair[0].Int(0, f.alphabet - 1)), pair[1].UInt(1, kProbeMaxLength)});
  }
  if (Length(sup) > kProbeMaxLength) j.At("sup_string").Fail("longer than 20000 tokens");
  // The threshold exactly as the search ran it: one thread (the path search's memory limit is
  // per thread, so the exhaustive reach would otherwise depend on the machine's cores).
  const ThresholdResult t = FindThreshold(f, g, ThresholdFor(eps, n, cap, 1));
  TwoLayerEvaluation ev;
  const std::uint64_t exact = std::min(t.checked_up_to, t.exhaustive_up_to);
  if (t.method == ThresholdMethod::kPaths && t.first_disagreement &&
      *t.first_disagreement <= exact) {
    ev.first_disagreement = t.first_disagreement;
    ev.checked_up_to = *t.first_disagreement;
    ev.witness = t.witness;
  } else {
    ev.checked_up_to = std::min(t.first_disagreement ? *t.first_disagreement - 1 : exact, exact);
  }
  std::vector<std::string> differences;
  const nlohmann::json recorded_t = nlohmann::json::parse(j.At("first_disagreement").json().dump());
  const nlohmann::json fresh_t =
      ev.first_disagreement ? nlohmann::json(*ev.first_disagreement) : nlohmann::json(nullptr);
  if (recorded_t != fresh_t) differences.push_back("first_disagreement");
  if (j.At("checked_up_to").UInt() != ev.checked_up_to) differences.push_back("checked_up_to");
  if (j.At("witness_text").String() != RunLengthText(ev.witness))
    differences.push_back("witness_text");
  bool separated = false;
  std::string sup_text = "none";
  if (!sup.empty()) {
    const auto source = MakeRunSource(sup, "sup_string");
    const PreciseReal p =
        PreciseSupDistance(EvaluatePrecise(f, *source), EvaluatePrecise(g, *source));
    separated = p >= PreciseReal(kappa * eps);
    sup_text = PreciseText(p, 12);
  }
  if (separated != j.At("separated").Bool()) differences.push_back("separated");
  // A refute.json also records the verdict against its bound (a search witness has none).
  const bool judged = j.Has("bound");
  const std::string bound = judged ? j.At("bound").String() : std::string("none");
  const double value = judged ? EvaluateRefuteBound(bound, PairWithEps(f, g, eps)) : std::nan("");
  const double lower = LowerBound(ev);
  const bool refuted = separated && std::isfinite(value) && value > 0 && lower > value;
  if (judged && refuted != j.At("refuted").Bool()) differences.push_back("refuted");
  if (judged) {
    // The recorded bound value at the pair's constants (null: NaN or infinite) must reproduce.
    const io::JsonReader recorded = j.At("bound_value");
    const bool finite = std::isfinite(value);
    if (recorded.json().is_null() ? finite
                                  : !finite || std::abs(recorded.Number() - value) >
                                                   1e-9 * std::max(1.0, std::abs(value)))
      differences.push_back("bound_value");
  }
  // The pair must lie in the recorded class's limits: output scale ≤ L₀, and a softmax or finite
  // layer's logit scale ≤ B (null: unbounded), 1e-9 relative as InTwoLayerClass.
  if (j.Has("class")) {
    const io::JsonReader cls = j.At("class");
    const double l0 = cls.At("max_lipschitz").Positive();
    const io::JsonReader b = cls.At("max_logit");
    const double max_logit =
        b.json().is_null() ? std::numeric_limits<double>::infinity() : b.Positive();
    bool inside = true;
    for (const Transformer* m : {&f, &g}) {
      inside = inside && OutputScale(*m) <= l0 * (1 + 1e-9);
      for (int layer = 0; layer < 2; ++layer)
        if (Bounded(m->layers[layer].attention))
          inside = inside && LayerLogitScale(*m, layer) <= max_logit * (1 + 1e-9);
    }
    if (!inside) differences.push_back("class (L0, B)");
  }
  if (report)
    *report = fmt::format(
        "two-layer pair: T* = {} (path search up to {}, cap {} evaluations), separating string of "
        "length {} has gap {} in 50 digits ({}separated at κ = {}); bound '{}' = {}, refuted {}{}",
        ev.first_disagreement ? std::to_string(*ev.first_disagreement)
                              : fmt::format("> {}", ev.checked_up_to),
        n, cap, Length(sup), sup_text, separated ? "" : "not ", kappa, bound, value, refuted,
        differences.empty() ? std::string()
                            : fmt::format("; differs: {}", fmt::join(differences, ", ")));
  return differences.empty();
}

}  // namespace ltsim
