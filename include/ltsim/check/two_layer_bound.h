// A certified bound on ‖f(x) − f(z)‖_∞ for a two-layer model, computed from x's and z's
// first-layer states (docs/theory.md §4.7).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ltsim/model/transformer.h"
#include "ltsim/strings/source.h"

namespace ltsim {

/// The per-instance bound of docs/theory.md §4.7 and its parts (all NaN, with `reason`, when
/// it does not apply). bound = output_factor·(last_position + transport + unmatched + query).
struct TwoLayerBound {
  double bound = std::numeric_limits<double>::quiet_NaN();  ///< ‖f(x) − f(z)‖_∞ ≤ bound
  std::string reason;  ///< why there is no bound ("" when there is one)
  /// Ω = ReadoutLipschitz: the readout and the second MLP as a map from u to the outputs.
  double output_factor = std::numeric_limits<double>::quiet_NaN();
  /// A bound on ‖y¹_T(x) − y¹_n(z)‖: the first-layer state distance of step 1 when the last
  /// windows agree (`last_window_matches`), else the measured distance.
  double last_position = std::numeric_limits<double>::quiet_NaN();
  bool last_window_matches = false;
  /// Σ_g over the second layer's heads: the coupled pairs with the same window (step 2),
  /// the mass left unmatched across windows, and the query's move (step 3).
  double transport = std::numeric_limits<double>::quiet_NaN();
  double unmatched = std::numeric_limits<double>::quiet_NaN();
  double query = std::numeric_limits<double>::quiet_NaN();
  /// max over heads of the position mass the window coupling leaves unmatched, Σ_w (a_w − b_w)⁺
  /// (the total variation distance between x's and z's window distributions).
  double unmatched_mass = std::numeric_limits<double>::quiet_NaN();
  /// max over heads of Σ_matched π_jk·c(σ_j, σ'_k): the coupling's first-layer transport cost
  /// (the C̄ of docs/theory.md §4.8, Lemma B, for this coupling).
  double coupled_distance = std::numeric_limits<double>::quiet_NaN();
};

/// Why the bound does not apply to `model` ("" when it does): it needs two layers, a softmax
/// second layer (a hardmax or finite one jumps with its query), window codes of at most 62 bits
/// (S^(τ+1)·max(Δ, τ + 2) < 2^62) and D = S·Δ ≤ kTwoLayerMaxTypes.
std::string TwoLayerBoundRefusal(const Transformer& model);

/// The certified bound on ‖f(x) − f(z)‖_∞ for any two strings (z need not be built from x).
/// Two streamed passes over x with the first layer (memory independent of |x|) and three over z
/// (held in memory, |z|·(1 + S·Δ/64) words). Pure; safe from any thread.
TwoLayerBound CertifyTwoLayerSimulation(const Transformer& model, const Source& x, const Source& z);

/// Step 1's first-layer state distance c(σ, σ') between the last positions of `a` and `b` (any
/// two strings of the model's alphabet): Lip(MLP₁)·Σ_h r_h·‖p_h(σ) − p_h(σ')‖₁ when their windows
/// (last τ + 1 tokens and length mod Δ; the whole string when shorter) agree, +∞ otherwise. It
/// bounds ‖y¹(a) − y¹(b)‖ (docs/theory.md §4.7).
double FirstLayerStateDistance(const Transformer& model, const std::vector<Token>& a,
                               const std::vector<Token>& b);

}  // namespace ltsim
