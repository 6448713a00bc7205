// The in-context k-gram estimator and its two-layer construction (docs/theory.md §5.2–§5.3 [ours]).
#include "ltsim/construct/kgram.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

// The uniform policy's gate (GateMlp): a context whose total mismatch μ_c is ≥ 1/Λ switches
// its units off. Λ = 2 is the smallest convenient value with Λ·(1 − δ_T) > 1 for every T ≥ 2
// (δ_T ≤ 1/5 when φ = 2), which every context other than the current one needs; the gate's
// error on a full match is Λ·μ* ≤ Λ·k·(leaked mass + copy deficit), so a larger Λ only costs.
constexpr double kGateSlope = 2.0;

// Copy sharpening: v ↦ clamp(4v − 2, 0, 1) is 1 for v ≥ 3/4 and 0 for v ≤ 1/2, so a copy that
// misses a mass δ ≤ 1/4 becomes an exact one-hot.
constexpr double kSharpenGain = 4.0;
constexpr double kSharpenThreshold = 0.5;

// Coordinates of the residual stream, in blocks of S: slot 0 is the current token's one-hot
// (the embedding), slot t = 1..k the copy of x_{i−t} (first layer), then the second layer's
// attended next-token distribution a; for the uniform policy also the attended windows
// w_1..w_k and the gated output.
struct Layout {
  int s = 0;
  int k = 0;
  bool gate = false;

  int Slot(int t) const { return t * s; }
  int Attended() const { return (k + 1) * s; }
  int Window(int t) const { return (k + 1 + t) * s; }
  int Final() const { return (2 * k + 2) * s; }
  int Width() const { return (gate ? 2 * k + 3 : k + 2) * s; }
};

Layout MakeLayout(const KGramOptions& options) {
  return {options.alphabet, options.k, options.no_match == NoMatchPolicy::kUniform};
}

// S^k·(S + 1), saturating at kKGramMaxMlpUnits + 1 so it never overflows.
long GateUnits(int alphabet, int k) {
  long contexts = 1;
  for (int t = 0; t < k && contexts <= kKGramMaxMlpUnits; ++t) contexts *= alphabet;
  return std::min(contexts * (alphabet + 1L), kKGramMaxMlpUnits + 1);
}

// Token c_t of context number `context` (its base-S digits, slot 1 first).
int ContextToken(long context, int t, int alphabet) {
  for (int i = 1; i < t; ++i) context /= alphabet;
  return static_cast<int>(context % alphabet);
}

// y ↦ y − v + clamp(4v − 2, 0, 1) on every coordinate v of the copied slots: three ReLU units
// per coordinate (v itself is ReLU(v) since copies are ≥ 0).
Mlp SharpenMlp(const Layout& lay) {
  const int units = 3 * lay.k * lay.s;
  const int d = lay.Width();
  Mlp mlp{Matrix::Zero(units, d), Vector::Zero(units), Matrix::Zero(d, units)};
  int unit = 0;
  for (int c = lay.Slot(1); c < lay.Slot(lay.k + 1); ++c, unit += 3) {
    mlp.in(unit, c) = 1.0;
    mlp.out(c, unit) = -1.0;
    for (int edge = 0; edge < 2; ++edge) {
      mlp.in(unit + 1 + edge, c) = kSharpenGain;
      mlp.in_bias(unit + 1 + edge) = -kSharpenGain * kSharpenThreshold - edge;
      mlp.out(c, unit + 1 + edge) = edge == 0 ? 1.0 : -1.0;
    }
  }
  return mlp;
}

// Layer 1: head t (1..k) has M = 0 and φ[t] = copy_bias, and copies slot 0 into slot t.
Layer CopyLayer(const KGramOptions& options, const Layout& lay) {
  Layer layer;
  layer.attention = Attention::kSoftmax;
  layer.bias_scaling = BiasScaling::kLog;
  const int d = lay.Width();
  for (int t = 1; t <= lay.k; ++t) {
    Head head{Matrix::Zero(d, d), Matrix::Zero(d, d), Vector::Zero(lay.k + 1)};
    head.bias(t) = options.copy_bias;
    for (int s = 0; s < lay.s; ++s) head.ov(lay.Slot(t) + s, lay.Slot(0) + s) = 1.0;
    layer.heads.push_back(head);
  }
  if (options.sharpen) layer.mlp = SharpenMlp(lay);
  return layer;
}

// The uniform policy's gate, from the current context c* (the query's slots 0..k−1) and the
// attended windows w_t. For each context c, μ_c = Σ_t (1 − w_t[c_t]) + (1 − q_{t−1}[c_t]) ≥ 0;
// units ReLU(a_s − Λμ_c) (one per output s) and ReLU(1 − Λμ_c). Every c ≠ c* has μ_c ≥ 1 − δ_T
// (one query slot disagrees), so its units are 0 and the MLP leaves
//   a'_s = ReLU(a_s − Λμ*),  g = ReLU(1 − Λμ*),  output_s = a'_s − g/S + 1/S (readout bias).
// A full match (μ* ≈ 0) gives a_s within Λμ*; attended keys that all miss a slot (μ* ≥ 1/Λ)
// give exactly 1/S.
Mlp GateMlp(const Layout& lay) {
  long contexts = 1;
  for (int t = 0; t < lay.k; ++t) contexts *= lay.s;
  const int units = static_cast<int>(contexts * (lay.s + 1));
  const int d = lay.Width();
  Mlp mlp{Matrix::Zero(units, d), Vector::Zero(units), Matrix::Zero(d, units)};
  int unit = 0;
  for (long c = 0; c < contexts; ++c) {
    for (int u = 0; u <= lay.s; ++u, ++unit) {
      for (int t = 1; t <= lay.k; ++t) {
        const int token = ContextToken(c, t, lay.s);
        mlp.in(unit, lay.Window(t) + token) += kGateSlope;
        mlp.in(unit, lay.Slot(t - 1) + token) += kGateSlope;
      }
      const bool pass = u < lay.s;  // units 0..S−1 pass a_u, unit S is the gate g
      mlp.in_bias(unit) = (pass ? 0.0 : 1.0) - 2.0 * lay.k * kGateSlope;
      if (pass) {
        mlp.in(unit, lay.Attended() + u) = 1.0;
        mlp.out(lay.Final() + u, unit) = 1.0;
      } else {
        for (int s = 0; s < lay.s; ++s) mlp.out(lay.Final() + s, unit) = -1.0 / lay.s;
      }
    }
  }
  return mlp;
}

// Layer 2: logit β·Σ_t ⟨key slot t, query slot t−1⟩; the value copies the key's own token
// into a (and, for the gate, its slots into the windows w).
Layer MatchLayer(const KGramOptions& options, const Layout& lay) {
  Layer layer;
  layer.attention = Attention::kSoftmax;
  layer.bias_scaling = BiasScaling::kNone;
  const int d = lay.Width();
  Head head{Matrix::Zero(d, d), Matrix::Zero(d, d), Vector::Zero(lay.k + 1)};
  for (int s = 0; s < lay.s; ++s) {
    for (int t = 1; t <= lay.k; ++t) {
      head.qk(lay.Slot(t) + s, lay.Slot(t - 1) + s) = options.scale;
      if (lay.gate) head.ov(lay.Window(t) + s, lay.Slot(t) + s) = 1.0;
    }
    head.ov(lay.Attended() + s, lay.Slot(0) + s) = 1.0;
  }
  layer.heads.push_back(head);
  if (lay.gate) layer.mlp = GateMlp(lay);
  return layer;
}

std::string ModelName(const KGramOptions& options) {
  std::ostringstream name;
  name << "kgram S=" << options.alphabet << " k=" << options.k << " beta=" << options.scale
       << " no-match=" << NoMatchPolicyName(options.no_match);
  if (options.copy_bias != 2.0) name << " phi=" << options.copy_bias;
  if (options.sharpen) name << " sharpen";
  return name.str();
}

std::string MetaJson(const KGramOptions& options) {
  nlohmann::ordered_json meta;
  meta["task"] = "kgram";
  meta["alphabet"] = options.alphabet;
  meta["k"] = options.k;
  meta["scale"] = options.scale;
  meta["no_match"] = NoMatchPolicyName(options.no_match);
  meta["copy_bias"] = options.copy_bias;
  meta["sharpen"] = options.sharpen;
  return meta.dump();
}

}  // namespace

const char* NoMatchPolicyName(NoMatchPolicy policy) {
  return policy == NoMatchPolicy::kUniform ? "uniform" : "most-matches";
}

NoMatchPolicy ParseNoMatchPolicy(const std::string& name) {
  if (name == "uniform") return NoMatchPolicy::kUniform;
  if (name == "most-matches") return NoMatchPolicy::kMostMatches;
  throw InputError("no-match policy: '" + name + "' is not one of uniform, most-matches");
}

std::vector<int> KGramSlotMatches(const std::vector<Token>& x, int k) {
  LTSIM_CHECK(k >= 1);
  const std::size_t length = x.size();
  const std::size_t order = static_cast<std::size_t>(k);
  std::vector<int> matches;
  if (length <= order) return matches;
  matches.reserve(length - order);
  // 0-based: candidate index p = t − 1 ∈ [k, T−1]; slot s compares x[p−s] with x[T−s].
  for (std::size_t p = order; p < length; ++p) {
    int m = 0;
    for (std::size_t s = 1; s <= order; ++s) m += x[p - s] == x[length - s] ? 1 : 0;
    matches.push_back(m);
  }
  return matches;
}

Vector KGramEstimate(const std::vector<Token>& x, int alphabet, int k, NoMatchPolicy policy) {
  LTSIM_CHECK(alphabet >= 1 && k >= 1);
  for (Token token : x) LTSIM_CHECK(token < alphabet);
  const Vector uniform = Vector::Constant(alphabet, 1.0 / alphabet);
  const std::vector<int> matches = KGramSlotMatches(x, k);
  if (matches.empty()) return uniform;
  const int best = *std::max_element(matches.begin(), matches.end());
  if (best < k && policy == NoMatchPolicy::kUniform) return uniform;
  Vector estimate = Vector::Zero(alphabet);
  double count = 0.0;
  for (std::size_t i = 0; i < matches.size(); ++i) {
    if (matches[i] != best) continue;
    estimate(x[i + k]) += 1.0;
    count += 1.0;
  }
  return estimate / count;
}

void ValidateKGramOptions(const KGramOptions& options) {
  auto fail = [](const std::string& rule) { throw InputError("kgram: " + rule); };
  if (options.alphabet < 1 || options.alphabet > kMaxAlphabet)
    fail("alphabet must be in [1, " + std::to_string(kMaxAlphabet) + "]");
  if (options.k < 1) fail("k must be at least 1");
  if (!std::isfinite(options.scale) || options.scale <= 0.0) fail("scale β must be positive");
  if (!std::isfinite(options.copy_bias) || options.copy_bias <= 1.0)
    fail("copy bias φ must exceed 1 (position-dominated heads)");
  const long slots =
      options.no_match == NoMatchPolicy::kUniform ? 2L * options.k + 3 : options.k + 2L;
  if (slots * options.alphabet > kKGramMaxWidth)
    fail("width " +
         std::string(options.no_match == NoMatchPolicy::kUniform ? "(2k + 3)" : "(k + 2)") +
         "·S = " + std::to_string(slots * options.alphabet) + " exceeds " +
         std::to_string(kKGramMaxWidth));
  if (options.no_match == NoMatchPolicy::kUniform &&
      GateUnits(options.alphabet, options.k) > kKGramMaxMlpUnits)
    fail("the uniform policy needs S^k·(S + 1) MLP units, more than " +
         std::to_string(kKGramMaxMlpUnits));
}

int KGramWidth(const KGramOptions& options) { return MakeLayout(options).Width(); }

// Accuracy (the bound kgram_test.cpp checks). At query T > k let m_j be the matching slots of
// candidate j ∈ [k+1, T], A the full matches (M = |A| ≥ 1), and δ_i the mass a copy at
// position i misses (kgram.h). Every slot and query slot is a vector in [0, 1]^S of mass ≤ 1,
// so a matched slot adds between 1 − δ_j − δ_T and 1 to logit_j/β, an unmatched one between
// 0 and ε_j := δ_j + δ_T (ε = 0 when sharpened). Normalising by e^(βk): keys in A weigh
// w_j ∈ [e^(−βkε_j), 1], other candidates ≤ e^(−β(k − m_j)(1 − ε_j)), and each key j ≤ k
// (no full window: slots t ≥ j hold the histogram of x_1..x_j, so only prefix tokens) ≤ 1, or
// ≤ e^(−β(k − n_P)(1 − δ_T)) when only n_P context tokens occur in x_1..x_k. With
// U = Σ_A min(1, βkε_j) ≥ Σ_A (1 − w_j) and R the total of the other bounds, the reweighting
// inside A moves the output by ≤ ½Σ_A |w_j/W_A − 1/M| ≤ U/(M − U), and the mass outside A by
// ≤ R/(M − U + R), in sup norm:
//   ‖f(x) − f*(x)‖_∞ ≤ U/(M − U) + R/(M − U + R).
// The uniform policy's gate adds Λμ* ≤ 2k·(ρ + D + δ_T), ρ ≤ R/(M − U + R) the attention mass
// outside A and D = Σ_A δ_j/(M − U) the copies' deficit inside it (GateMlp). So the error falls
// like k(S − 1)e^(−β) until the copy term U/M ~ βk·ln T/T (or the early-key term) dominates,
// while ln C(f) grows like (k + 1)²·β: β trades accuracy against C(f).
Transformer MakeKGram(const KGramOptions& options) {
  ValidateKGramOptions(options);
  const Layout lay = MakeLayout(options);
  Transformer model;
  model.name = ModelName(options);
  model.alphabet = options.alphabet;
  model.width = lay.Width();
  model.period = 1;
  model.locality = options.k;
  model.embedding = Matrix::Zero(lay.s, lay.Width());
  for (int s = 0; s < lay.s; ++s) model.embedding(s, lay.Slot(0) + s) = 1.0;
  model.positional = Matrix::Zero(1, lay.Width());
  model.layers = {CopyLayer(options, lay), MatchLayer(options, lay)};
  model.readout_weight = Matrix::Zero(lay.s, lay.Width());
  const int read_from = lay.gate ? lay.Final() : lay.Attended();
  for (int s = 0; s < lay.s; ++s) model.readout_weight(s, read_from + s) = 1.0;
  model.readout_bias = Vector::Constant(lay.s, lay.gate ? 1.0 / lay.s : 0.0);
  model.meta_json = MetaJson(options);
  return model;
}

}  // namespace ltsim
