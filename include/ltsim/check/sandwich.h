// The sandwich of docs/theory.md §1 for a pair (f, g) on one long x and a constructed z.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "ltsim/check/two_layer_bound.h"
#include "ltsim/model/transformer.h"
#include "ltsim/sim/simulator.h"
#include "ltsim/strings/source.h"

namespace ltsim {

/// One model's side of the sandwich and the constants used for it.
struct ModelSide {
  Vector on_x;                ///< f(x)
  Vector on_z;                ///< f(z)
  double sim = 0.0;           ///< ‖f(x) − f(z)‖_∞
  double lipschitz = 0.0;     ///< L(f) (NaN unless one layer)
  double logit_margin = 0.0;  ///< γ(f) (NaN unless one layer)
  double log2_hardmax_length = std::numeric_limits<double>::quiet_NaN();
  /// max_h ‖α_h(x) − α_h(z)‖₁ measured from the counts, when z keeps x's suffix and length
  /// mod Δ (so the Lipschitz bound sim ≤ L·η_achieved holds); NaN otherwise.
  double eta_achieved = std::numeric_limits<double>::quiet_NaN();
  /// A certified bound on sim: L(f)·η for one layer when the construction claims η, the
  /// two-layer bound B(f, x, z) of docs/theory.md §4.7 for two layers; NaN when neither applies.
  double certified_sim = std::numeric_limits<double>::quiet_NaN();
  /// Two layers: the bound's parts, or the reason it does not apply.
  TwoLayerBound two_layer;
};

/// Every number `ltsim sandwich` reports.
struct SandwichResult {
  ModelSide f, g;
  double gap_z = 0.0;  ///< ‖f(z) − g(z)‖_∞
  double gap_x = 0.0;  ///< ‖f(x) − g(x)‖_∞
  std::uint64_t x_length = 0;
  std::uint64_t z_length = 0;
  std::string method;
  Simulation simulation;
  /// gap_x ≤ sim_f + gap_z + sim_g, compared with a slack of 1e-12·(1 + the largest term)
  /// for floating-point rounding (the inequality itself is the triangle inequality).
  bool holds = false;
  /// sim_f ≤ certified_sim_f and sim_g ≤ certified_sim_g (same slack): for one layer
  /// sim ≤ L·η with the construction's η, for two layers the bound of docs/theory.md §4.7;
  /// false when either certified bound is NaN (a one-layer method that claims no η).
  bool rate_holds = false;
};

/// InputError unless f and g read the same alphabet and have the same number of outputs (a
/// pair is compared output by output); the message names both (`f_name`, `g_name`: their
/// files on the command line).
void CheckPair(const Transformer& f, const Transformer& g, const std::string& f_name = "f",
               const std::string& g_name = "g");

/// Builds z from x with the chosen method and measures the sandwich. One pass over x for
/// the counts (shared by both models' one-layer evaluations and the frequency methods),
/// plus one more for methods that read x itself. InputError on alphabet mismatches.
SandwichResult RunSandwich(const Transformer& f, const Transformer& g, const Source& x,
                           const SandwichOptions& options);

/// Builds z from x for `models` (the `simulate` command).
Simulation RunSimulation(const std::vector<const Transformer*>& models, const Source& x,
                         const SandwichOptions& options);

/// The relative slack used for numerical comparisons of verdicts: a ≤ b + 1e-12·(1 + |a| + |b|).
bool LessOrClose(double a, double b);

}  // namespace ltsim
