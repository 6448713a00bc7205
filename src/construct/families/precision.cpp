// The precision family (docs/families.md): f drops keys γ below the maximum at
// T_hard = 2^(p/γ), g (more bits) not yet.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "construct/families/family_parts.h"
#include "ltsim/core/error.h"
#include "ltsim/model/finite_rounding.h"

namespace ltsim::construct {
namespace {

// ---- precision: f drops keys γ below the maximum at T_hard = 2^(p/γ), g (more bits) not yet -----
//
// Coordinates: 0 = [token is 1], 1 = constant 1, 2 = output. Keys of token 1 have logit γ,
// keys of token 0 logit 0; the head averages [token is 0] with finite-precision weights.
FamilyMember BuildPrecision(const FamilyValues& v) {
  const int p = static_cast<int>(Get(v, "bits"));
  const int extra = static_cast<int>(Get(v, "extra-bits"));
  const double gamma = Get(v, "gamma"), eps = Get(v, "eps");
  if (p / gamma > 40.0)
    throw InputError(
        fmt::format("family precision: bits/gamma = {} > 40 (T* beyond 2^40)", p / gamma));
  auto make = [&](int bits) {
    Transformer m = Skeleton(2, 3, 1, Attention::kFinite, 1);
    m.layers[0].precision_bits = bits;
    m.embedding(0, 1) = 1.0;
    m.embedding(1, 0) = 1.0;
    m.embedding(1, 1) = 1.0;
    Head& head = m.layers[0].heads[0];
    head.qk(0, 1) = gamma;  // logit γ·[key is 1]
    head.ov(2, 1) = 1.0;    // value [token is 0] = const − [token is 1]
    head.ov(2, 0) = -1.0;
    m.readout_weight(0, 2) = 1.0;
    return m;
  };
  FamilyMember member;
  member.f = make(p);
  member.g = make(p + extra);
  member.eps = eps;
  // The smallest T whose key γ below the maximum is dropped, T ≥ 2^(p/γ), decided exactly as
  // every evaluator decides it (FiniteKeyDropped, docs/theory.md §8.6).
  auto dropped = [&](double t, int bits) { return FiniteKeyDropped(-gamma, 0.0, t, bits); };
  const std::uint64_t t = FiniteDropLength(gamma, p);
  if (t == 0) throw InputError("family precision: T* is beyond 2^62");
  if (dropped(static_cast<double>(t), p + extra))
    throw InputError("family precision: g drops the key at the same length as f; raise extra-bits");
  const double td = static_cast<double>(t);
  const double w = std::exp2(std::log2(td) * (-gamma));        // g's weight of a 0 key at T*
  const double gap = (td - 1.0) * w / (1.0 + (td - 1.0) * w);  // x = 0^(T−1) 1
  if (gap < 2.0 * eps)
    throw InputError(fmt::format(
        "family precision: the gap at T* = {} would be {:.4g} < 2·eps; lower gamma or eps", t,
        gap));
  member.first_disagreement = t;
  member.closed_form = "⌈2^(p/γ)⌉ (p = f's bits)";
  member.growth = "2^(p/γ)";
  member.gap_at_first_disagreement = gap;
  // Largest share of 0-weight g reaches before it drops too: at its own T_hard − 1, one 1.
  member.sup_gap = gap;
  member.f.name = fmt::format("family precision f (bits={}, gamma={})", p, gamma);
  member.g.name = fmt::format("family precision g (bits={}, gamma={})", p + extra, gamma);
  return member;
}

}  // namespace

Family PrecisionFamily() {
  return {"precision",
          "finite attention: f (p bits) drops keys γ below the maximum at 2^(p/γ), g keeps them",
          "2^(p/γ)",
          {{"bits", 4, 1, 64, true, "p: f's precision bits"},
           {"gamma", 0.5, 0.01, 16.0, false, "γ: the logit margin"},
           {"extra-bits", 1, 1, 64, true, "g has p + extra-bits bits"},
           {"eps", 0.1, 1e-6, 0.5, false, "ε of the first disagreement"}},
          BuildPrecision};
}

}  // namespace ltsim::construct
