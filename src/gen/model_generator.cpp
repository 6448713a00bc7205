// Random limit transformers and model pairs for fuzzing: shapes from a ModelSpec, weights drawn
// with Boost.Random engines and distributions only, so a seed replays on every compiler.
//
// Weight law. Every weight (E, P, each head's M, O and φ, the MLP's A, b, B, the readout W, c)
// is drawn in one fixed order (ForEachWeight) from
//   grid == 0:  N(0, scale²);
//   grid  > 0:  g·U{−K, …, K} with K = ⌊scale/g⌋, i.e. a uniform multiple of g in [−scale, scale].
//
// Grid margin guarantee (docs/model.md §4). The spec's grid
// must be g = 2^−k with k ≥ 0 (so g is exact, 1/g is an integer and 1 is a multiple of g).
//   γ(f) ≥ g³ or ∞. Every element of a logit set 𝒜 is (E_s + P_r')ᵀ M (E_y + P_r) + φ[t]:
//     each term a_i·M_ij·b_j multiplies three multiples of g, hence is an integer multiple of
//     g³, and φ[t] = n·g = (n/g²)·g³ with n/g² an integer. So every logit is n·g³ for an
//     integer n, and two distinct logits differ by at least g³. Gaps at or below θ are ties,
//     and any other gap is a positive multiple of g³, hence ≥ g³ (whatever θ is).
//   In floating point the same holds exactly: all weights are dyadic, and every partial sum
//     of the logit is n·g³ with |n| ≤ 4d²K³ + K/g², which ValidateSpec keeps ≤ 2^52, so no
//     addition, multiplication or gap (a difference of two logits) rounds, in any summation
//     order, with or without FMA.
//   T_hard = 2^(p/γ) ≤ 2^(p/g³) for a `finite` first layer (log₂ T_hard = p/γ ≤ p/g³).
//   γ_pos(f) ≥ g or ∞: 𝒫_h = {φ_h[t]} ∪ {1} holds multiples of g only, exactly represented.
// The guarantee is about the first layer, which is all that γ, T_hard and γ_pos look at.
// Perturbed pairs on a grid keep the grid (see PerturbWeights), so it holds for both f and g.
#include "ltsim/gen/model_generator.h"

#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <string>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

// 2^52: integers of this size, and differences of two of them, are exact doubles.
constexpr double kExactLimit = 4503599627370496.0;

[[noreturn]] void Fail(const std::string& key, const std::string& rule) {
  throw InputError("model spec: " + key + ": " + rule);
}

void CheckRange(long long value, long long min, long long max, const std::string& key) {
  if (value < min || value > max) {
    Fail(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                  std::to_string(value));
  }
}

// K = ⌊scale/g⌋: the grid law draws g·U{−K, …, K}. Exact for g a power of two.
long long GridSteps(const ModelSpec& spec) {
  return static_cast<long long>(std::floor(spec.scale / spec.grid));
}

// g = 2^−k with k ≥ 0 (the guarantee above needs 1/g integral and g exact).
bool IsGridPowerOfTwo(double grid) {
  int exponent = 0;
  return std::frexp(grid, &exponent) == 0.5 && exponent <= 1;
}

void ValidateGrid(const ModelSpec& spec) {
  if (!std::isfinite(spec.grid) || spec.grid < 0) Fail("grid", "must be finite and at least 0");
  if (spec.grid == 0) return;
  if (!IsGridPowerOfTwo(spec.grid)) {
    Fail("grid", "must be 0 or a power of two 2^-k with k >= 0 (1, 0.5, 0.25, ...), got " +
                     std::to_string(spec.grid));
  }
  if (spec.scale < spec.grid) Fail("scale", "must be at least grid on a grid");
  if (!(spec.scale / spec.grid <= kExactLimit)) Fail("scale", "must be at most 2^52 grid steps");
  // |n| ≤ 4d²K³ + K/g² for every partial sum n·g³ of a logit (header comment).
  const double k = static_cast<double>(GridSteps(spec));
  const double d = spec.width;
  if (4 * d * d * k * k * k + k / (spec.grid * spec.grid) > kExactLimit) {
    Fail("grid",
         "too fine for exact logits at this width and scale (need 4*d^2*K^3 + K/g^2 <= 2^52)");
  }
}

void ValidateSpec(const ModelSpec& spec) {
  CheckRange(spec.layers, 1, 2, "layers");
  CheckRange(spec.alphabet, 1, kMaxAlphabet, "alphabet");
  CheckRange(spec.width, 1, 1 << 16, "width");
  CheckRange(spec.period, 1, 1 << 20, "period");
  CheckRange(spec.locality, 0, 1 << 20, "locality");
  CheckRange(spec.heads, 0, 1 << 10, "heads");
  CheckRange(spec.outputs, 1, 1 << 16, "outputs");
  if (spec.attention == Attention::kFinite)
    CheckRange(spec.precision_bits, 1, 1024, "precision_bits");
  if (!std::isfinite(spec.scale) || spec.scale <= 0) Fail("scale", "must be finite and positive");
  if (!std::isfinite(spec.tie_tolerance) || spec.tie_tolerance < 0)
    Fail("tie_tolerance", "must be finite and at least 0");
  ValidateGrid(spec);
}

// Calls visit(m(i, j)) on every entry of m, row by row.
template <class Visit>
void ForEachEntry(Matrix& m, Visit& visit) {
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) visit(m(i, j));
}

template <class Visit>
void ForEachEntry(Vector& v, Visit& visit) {
  for (Eigen::Index i = 0; i < v.size(); ++i) visit(v(i));
}

// Every weight of a model in one fixed order: E, P; per layer each head's qk, ov, bias, then
// the MLP's in, in_bias, out; then the readout W, c. Draws and perturbations follow it.
template <class Visit>
void ForEachWeight(Transformer& model, Visit visit) {
  ForEachWeightArray(model, [&visit](auto& array) { ForEachEntry(array, visit); });
}

// Layer `index` of the spec with zero weights. The MLP's hidden width is 2d.
Layer ZeroLayer(const ModelSpec& spec, int index) {
  const int d = spec.width;
  Layer layer;
  layer.attention = spec.attention;
  layer.bias_scaling = index == 0 ? spec.bias_scaling : BiasScaling::kNone;
  layer.precision_bits = spec.attention == Attention::kFinite ? spec.precision_bits : 0;
  for (int h = 0; h < spec.heads; ++h) {
    layer.heads.push_back(
        Head{Matrix::Zero(d, d), Matrix::Zero(d, d), Vector::Zero(spec.locality + 1)});
  }
  if (spec.mlp)
    layer.mlp = Mlp{Matrix::Zero(2 * d, d), Vector::Zero(2 * d), Matrix::Zero(d, 2 * d)};
  return layer;
}

Transformer ZeroModel(const ModelSpec& spec) {
  Transformer model;
  model.name = "generated";
  model.tie_tolerance = spec.tie_tolerance;
  model.alphabet = spec.alphabet;
  model.width = spec.width;
  model.period = spec.period;
  model.locality = spec.locality;
  model.embedding = Matrix::Zero(spec.alphabet, spec.width);
  model.positional = Matrix::Zero(spec.period, spec.width);
  for (int l = 0; l < spec.layers; ++l) model.layers.push_back(ZeroLayer(spec, l));
  model.readout_weight = Matrix::Zero(spec.outputs, spec.width);
  model.readout_bias = Vector::Zero(spec.outputs);
  return model;
}

// One weight of the spec's law (header comment).
double DrawWeight(const ModelSpec& spec, FuzzEngine& engine) {
  if (spec.grid > 0) {
    const long long k = GridSteps(spec);
    return spec.grid *
           static_cast<double>(boost::random::uniform_int_distribution<long long>(-k, k)(engine));
  }
  return boost::random::normal_distribution<double>(0.0, spec.scale)(engine);
}

// g = f + δ·N(0, 1) on every weight. On a grid the step is rounded to the nearest multiple of
// g and the weight clamped to [−K·g, K·g], so the perturbed model is again a grid model of the
// spec and keeps the margin guarantee; each weight then moves by at most δ|N| + g/2 (and not
// at all when δ|N| < g/2, so δ well below g leaves most weights unchanged).
void PerturbWeights(Transformer& model, const ModelSpec& spec, double delta, FuzzEngine& engine) {
  const double limit = spec.grid > 0 ? spec.grid * static_cast<double>(GridSteps(spec)) : 0.0;
  ForEachWeight(model, [&](double& w) {
    const double step = delta * boost::random::normal_distribution<double>(0.0, 1.0)(engine);
    if (spec.grid == 0) {
      w += step;
    } else {
      const double rounded =
          spec.grid * std::round(std::clamp(step / spec.grid, -kExactLimit, kExactLimit));
      w = std::clamp(w + rounded, -limit, limit);
    }
  });
}

void SwapModes(Transformer& model, const ModelSpec& spec, Attention mode) {
  for (Layer& layer : model.layers) {
    layer.attention = mode;
    layer.precision_bits = mode == Attention::kFinite ? spec.precision_bits : 0;
  }
}

void PruneHead(Transformer& model, FuzzEngine& engine) {
  std::vector<Head>& heads = model.layers.front().heads;
  const int h =
      boost::random::uniform_int_distribution<int>(0, static_cast<int>(heads.size()) - 1)(engine);
  heads.erase(heads.begin() + h);
}

void ValidatePair(const ModelSpec& spec, const PairSpec& pair) {
  if (pair.kind == PairKind::kPerturbed && (!std::isfinite(pair.delta) || pair.delta < 0))
    throw InputError("pair spec: delta: must be finite and at least 0");
  if (pair.kind == PairKind::kModeSwap) {
    if (pair.other_mode == spec.attention) {
      throw InputError(
          std::string("pair spec: other_mode: must differ from the model's attention (") +
          AttentionName(spec.attention) + ")");
    }
    if (pair.other_mode == Attention::kFinite)
      CheckRange(spec.precision_bits, 1, 1024, "precision_bits");
  }
  if (pair.kind == PairKind::kPrunedHead && spec.heads < 2) {
    Fail("heads", "pruned-head pairs need at least 2 heads, got " + std::to_string(spec.heads));
  }
}

// g of the pair, drawn after f from the same engine.
Transformer Partner(const ModelSpec& spec, const PairSpec& pair, const Transformer& f,
                    FuzzEngine& engine) {
  if (pair.kind == PairKind::kIndependent) return GenerateModel(spec, engine);
  Transformer g = f;
  switch (pair.kind) {
    case PairKind::kPerturbed:
      PerturbWeights(g, spec, pair.delta, engine);
      break;
    case PairKind::kModeSwap:
      SwapModes(g, spec, pair.other_mode);
      break;
    case PairKind::kPrunedHead:
      PruneHead(g, engine);
      break;
    case PairKind::kIndependent:
      break;
  }
  return g;
}

}  // namespace

Transformer GenerateModel(const ModelSpec& spec, FuzzEngine& engine) {
  ValidateSpec(spec);
  Transformer model = ZeroModel(spec);
  ForEachWeight(model, [&](double& w) { w = DrawWeight(spec, engine); });
  ValidateTransformer(model, "generated model");
  return model;
}

const char* PairKindName(PairKind kind) { return kPairKindNames.Name(kind); }

PairKind ParsePairKind(const std::string& name) { return kPairKindNames.Parse(name); }

std::pair<Transformer, Transformer> GeneratePair(const ModelSpec& spec, const PairSpec& pair,
                                                 FuzzEngine& engine) {
  ValidateSpec(spec);
  ValidatePair(spec, pair);
  Transformer f = GenerateModel(spec, engine);
  Transformer g = Partner(spec, pair, f, engine);
  f.name = "generated f";
  g.name = std::string("generated g (") + PairKindName(pair.kind) + ")";
  ValidateTransformer(f, "generated f");
  ValidateTransformer(g, "generated g");
  return {std::move(f), std::move(g)};
}

}  // namespace ltsim
