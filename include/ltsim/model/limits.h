// The sizes and magnitudes a model may have (docs/formats.md §6.1): checked on the
// declared sizes before anything is allocated, and on the weights before any evaluation.
#pragma once

#include <cstdint>
#include <string>

#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

inline constexpr int kMaxWidth = 1024;              ///< d (L(f) takes an SVD of d×d matrices)
inline constexpr int kMaxPeriod = 1 << 16;          ///< Δ
inline constexpr std::int64_t kMaxTypes = 1 << 24;  ///< D = S·Δ
inline constexpr int kMaxLocality = 4096;           ///< τ
inline constexpr int kMaxLayers = 64;
inline constexpr int kMaxHeads = 256;           ///< heads per layer
inline constexpr int kMaxMlpWidth = 1 << 20;    ///< rows of mlp.in
inline constexpr int kMaxOutputs = 4096;        ///< rows of readout.weight
inline constexpr int kMaxPrecisionBits = 1100;  ///< p (beyond 1074 nothing is rounded)
inline constexpr std::int64_t kMaxParameters = std::int64_t{1} << 26;  ///< numbers in a model
/// Bound on every intermediate value a model can produce (docs/formats.md §6.1): the
/// a-priori bounds below must stay ≤ 10^100, so that no evaluator overflows a double (a
/// logit difference, a square or a sum over 2^64 positions stays below 10^308).
inline constexpr double kMaxMagnitude = 1e100;

/// The a-priori bound of a model's intermediate values (Frobenius norms bound spectral
/// ones): R₀ = max‖E_s‖ + max‖P_r‖; per layer the logits |a| ≤ max_h ‖M_h‖R² + 45·max|φ_h|
/// (45 ≥ ln 2^64 bounds β(i) under `log` scaling) and the outputs
/// R' = u + ‖B‖(‖A‖u + ‖b‖) with u = R(1 + Σ_h ‖O_h‖), the MLP's pre-activations
/// ‖A‖u + ‖b‖; the readout ‖W‖R + ‖c‖. Returns the largest of these, or +∞ when one of
/// them overflows or is 0 × ∞ (an overflowing norm applied to zero inputs).
double MagnitudeBound(const Transformer& model);

/// InputError "SOURCE: KEY: ..." when a size is over its limit or MagnitudeBound exceeds
/// kMaxMagnitude; called by ValidateTransformer.
void CheckModelLimits(const Transformer& model, const std::string& source);

}  // namespace ltsim
