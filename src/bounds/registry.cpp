// The bound registry and muParser-backed user bound expressions (docs/theory.md §2–§4).
#include "ltsim/bounds/registry.h"

#include <muParser.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ltsim/bounds/two_layer_length.h"
#include "ltsim/core/error.h"
#include "ltsim/model/constants.h"

namespace ltsim {
namespace {

// max/min of a pair's constants, NaN (not applicable) when either side is: the result must
// not depend on which model is f.
template <typename Op>
double Either(double a, double b, Op op) {
  return std::isnan(a) || std::isnan(b) ? std::nan("") : op(a, b);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A missing constant is NaN, so a bound that needs it is "not applicable", never a crash.
double Get(const ConstantMap& c, const std::string& name) {
  const auto it = c.find(name);
  return it == c.end() ? kNaN : it->second;
}

double Thm41Hardmax(const ConstantMap& c) { return std::exp2(Get(c, "p") / Get(c, "gamma")); }

// τ enters as max(τ, 1): the paper's τ² counts the positions of a local window, and a τ = 0
// model still reads a one-token window (the query's own key), so its length term must not
// vanish (SimpleTask and ModPTask have τ = 0). NaN stays NaN (std::max would drop it).
double Thm41Length(const ConstantMap& c) {
  const double eps = Get(c, "eps");
  const double tau = Get(c, "tau");
  const double window = std::isnan(tau) ? tau : std::max(tau, 1.0);
  return std::pow(Get(c, "L"), 2) * std::pow(Get(c, "Delta"), 7) * std::pow(Get(c, "S"), 6) *
         window * window / (eps * eps);
}

double Thm42(const ConstantMap& c) {
  return std::pow(Get(c, "eps"), -2.0 - 2.0 / Get(c, "alpha0"));
}

double Thm52(const ConstantMap& c) {
  const double exponent = std::max(1.0 / Get(c, "gamma_pos"), 3.0);
  return std::pow(Get(c, "C") / Get(c, "eps"), exponent);
}

double Lemma53(const ConstantMap& c) {
  return (Get(c, "G") + Get(c, "L")) * (Get(c, "tau") + 1.0) / std::cbrt(Get(c, "n"));
}

// The frequency construction's proven length (docs/theory.md §2.4): with Θ = 6(D + τ + 1)·L/ε
// and the grid's δ ≥ ε/(24·D·L), every plan of H distinct heads fits in a far region of
// B = D·(Θ·3^(H/3)·δ^−(H−1) + 1) positions per residue class and certifies η ≤ ε/L (for
// Δ > 1 through the balancing of step 5, whose balance is then at most ε/(6L)).
double FrequencyLength(const ConstantMap& c) {
  const double d = Get(c, "S") * Get(c, "Delta");
  const double ratio = Get(c, "L") / Get(c, "eps");
  const double heads = Get(c, "H");
  const double theta = 6.0 * (d + Get(c, "tau") + 1.0) * ratio;
  const double inverse_delta = std::isnan(ratio) ? ratio : std::max(24.0 * d * ratio, 2.0);
  const double far =
      d * (theta * std::cbrt(std::pow(3.0, heads)) * std::pow(inverse_delta, heads - 1.0) + 1.0);
  return Get(c, "Delta") * (far + 1.0) + Get(c, "tau") + 1.0;
}

// The proven length of balanced-blocks for two-layer pairs of the class (docs/theory.md §4.8).
double TwoLayerLength(const ConstantMap& c) { return TwoLayerLengthPlan(c).n; }

std::vector<Bound> MakeRegistry() {
  return {
      {"thm4.1-hardmax", "2^(p/gamma)", "[paper]",
       "Thm 4.1 first term: the hardmax regime (T_hard); O-constant 1", Thm41Hardmax},
      {"thm4.1-length", "L^2 Delta^7 S^6 max(tau, 1)^2 / eps^2", "[paper]",
       "Thm 4.1 second term: the short string's length; O-constant 1; tau = 0 counts as 1 "
       "(a one-token window)",
       Thm41Length},
      {"thm4.2", "eps^(-2-2/alpha0)", "[paper]",
       "Thm 4.2 N0, average case under Dir(alpha); polylog and polynomial factors 1", Thm42},
      {"thm5.2", "(C/eps)^max(1/gamma_pos, 3)", "[paper]",
       "Thm 5.2, two layers; C = our C(f) (docs/model.md §4.7), constant 1", Thm52},
      {"lemma5.3", "(G + L)(tau + 1) / n^(1/3)", "[paper]",
       "Lemma 5.3's rate for a subsequence of length n (an error, not a length); constant 1",
       Lemma53},
      {"frequency-length",
       "Delta (D (Theta 3^(H/3) (24 D L/eps)^(H-1) + 1) + 1) + tau + 1, Theta = 6 (D + tau + 1) "
       "L/eps, D = S Delta",
       "[ours]",
       "the frequency construction's proven |z| for eta <= eps/L, H distinct heads of the pair "
       "(docs/theory.md §2.4; proven for every Delta and every x)",
       FrequencyLength},
      {"two-layer-length",
       "smallest n with B(n, l) <= eps, B = Omega (c_last (1 + S1) + S2 C + S3 U) of "
       "docs/theory.md §4.8",
       "[ours]",
       "balanced-blocks' proven |z| for sim <= eps on every x, two-layer pairs of the class of "
       "docs/theory.md §4.8 (softmax; first-layer heads token- or position-dominated; null "
       "outside it)",
       TwoLayerLength},
  };
}

std::string KnownNames(const ConstantMap& constants) {
  std::string names;
  for (const auto& [name, value] : constants) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

const std::vector<Bound>& BoundRegistry() {
  static const std::vector<Bound> registry = MakeRegistry();
  return registry;
}

const Bound& FindBound(const std::string& name) {
  std::string known;
  for (const Bound& bound : BoundRegistry()) {
    if (bound.name == name) return bound;
    known += (known.empty() ? "" : ", ") + bound.name;
  }
  throw InputError("unknown bound '" + name + "' (known: " + known + ")");
}

ConstantMap ModelConstants(const Transformer& model) {
  const bool one_layer = model.layers.size() == 1;
  const Layer& first = model.layers.front();
  ConstantMap c;
  c["L"] = LipschitzConstant(model);
  c["Delta"] = model.period;
  c["S"] = model.alphabet;
  c["tau"] = model.locality;
  c["gamma"] = one_layer ? LogitMargin(model) : kNaN;
  c["p"] = first.attention == Attention::kFinite ? first.precision_bits : 0.0;
  c["C"] = Complexity(model);
  c["gamma_pos"] = PositionalMargin(model);
  c["D"] = static_cast<double>(model.alphabet) * model.period;
  c["H"] = DistinctHeads({&model});
  if (model.layers.size() == 2) {
    const TwoLayerLengthConstants k = ComputeTwoLayerLengthConstants(model);
    c["tl_omega"] = k.omega;
    c["tl_lambda1"] = k.lambda1;
    c["tl_lambda_t"] = k.lambda_t;
    c["tl_zeta_a"] = k.zeta_a;
    c["tl_zeta_gamma"] = k.zeta_gamma;
    c["tl_s1"] = k.s1;
    c["tl_s2"] = k.s2;
    c["tl_s3"] = k.s3;
    c["tl_e2"] = k.e2;
  }
  // ϑ: near-ties only matter to a `finite` first layer (docs/theory.md §2.6).
  c["near_tie_spread"] =
      one_layer && first.attention == Attention::kFinite ? NearTieSpread(model) : 0.0;
  return c;
}

ConstantMap PairConstants(const ConstantMap& f, const ConstantMap& g) {
  ConstantMap c;
  for (const char* name : {"L", "C", "p", "S", "tau", "near_tie_spread"})
    c[name] = Either(Get(f, name), Get(g, name), [](double a, double b) { return std::max(a, b); });
  for (const char* name : {"gamma", "gamma_pos"})
    c[name] = Either(Get(f, name), Get(g, name), [](double a, double b) { return std::min(a, b); });
  c["Delta"] = static_cast<double>(
      std::lcm(static_cast<long long>(Get(f, "Delta")), static_cast<long long>(Get(g, "Delta"))));
  c["D"] = c["S"] * c["Delta"];
  c["H"] = Get(f, "H") + Get(g, "H");
  // The two-layer length's constants (docs/theory.md §4.8): the bound is monotone in each, so
  // the larger (γ: the smaller) of the two models bounds both.
  if (f.count("tl_omega") && g.count("tl_omega")) {
    for (const char* name :
         {"tl_omega", "tl_lambda1", "tl_lambda_t", "tl_zeta_a", "tl_s1", "tl_s2", "tl_s3", "tl_e2"})
      c[name] =
          Either(Get(f, name), Get(g, name), [](double a, double b) { return std::max(a, b); });
    c["tl_zeta_gamma"] = Either(Get(f, "tl_zeta_gamma"), Get(g, "tl_zeta_gamma"),
                                [](double a, double b) { return std::min(a, b); });
  }
  return c;
}

ConstantMap PairConstants(const Transformer& f, const Transformer& g) {
  ConstantMap c = PairConstants(ModelConstants(f), ModelConstants(g));
  c["H"] = DistinctHeads({&f, &g});
  return c;
}

namespace {

template <class A>
bool Same(const A& a, const A& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && a == b;
}

}  // namespace

int DistinctHeads(const std::vector<const Transformer*>& models) {
  // A head's support on any x is a function of the first layer's logits: the model's
  // embedding, positions, mode, precision, tolerance and bias scaling, and the head's M and φ.
  auto same_model = [](const Transformer& a, const Transformer& b) {
    const Layer& la = a.layers.front();
    const Layer& lb = b.layers.front();
    return a.alphabet == b.alphabet && a.width == b.width && a.period == b.period &&
           a.locality == b.locality && a.tie_tolerance == b.tie_tolerance &&
           Same(a.embedding, b.embedding) && Same(a.positional, b.positional) &&
           la.attention == lb.attention && la.bias_scaling == lb.bias_scaling &&
           la.precision_bits == lb.precision_bits;
  };
  std::vector<std::pair<const Transformer*, const Head*>> seen;
  for (const Transformer* model : models) {
    if (model->layers.empty()) continue;
    for (const Head& head : model->layers.front().heads) {
      const bool repeated = std::any_of(seen.begin(), seen.end(), [&](const auto& other) {
        return same_model(*other.first, *model) && Same(other.second->qk, head.qk) &&
               Same(other.second->bias, head.bias);
      });
      if (!repeated) seen.push_back({model, &head});
    }
  }
  return static_cast<int>(seen.size());
}

double EvaluateBoundExpression(const std::string& expression, const ConstantMap& constants) {
  ConstantMap values = constants;  // muParser binds variables by address
  mu::Parser parser;
  try {
    for (auto& [name, value] : values) parser.DefineVar(name, &value);
    parser.SetExpr(expression);
    return parser.Eval();
  } catch (const mu::Parser::exception_type& e) {
    if (e.GetCode() == mu::ecUNASSIGNABLE_TOKEN)
      throw OptionError(
          "bound", "unknown variable '" + e.GetToken() + "' (known: " + KnownNames(constants) + ")",
          "'" + expression + "'");
    throw OptionError("bound", e.GetMsg(), "'" + expression + "'");
  }
}

}  // namespace ltsim
