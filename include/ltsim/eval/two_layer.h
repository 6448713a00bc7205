// Fast exact evaluation of two-layer limit transformers in a few streaming passes
// (docs/theory.md §8.1).
#pragma once

#include "ltsim/model/transformer.h"
#include "ltsim/strings/source.h"

namespace ltsim {

/// Largest D = S·Δ the two-layer fast path accepts (its tables are D × D per head).
inline constexpr int kTwoLayerMaxTypes = 1024;

/// f(x) for a two-layer model, any attention modes, in O(T·(D·H·d + d²)) time and memory
/// independent of T:
///   pass 1 counts types and gives y¹_T, hence the second layer's queries M₂ y¹_T;
///   pass 2 streams the first layer in blocks of 256 positions (FirstLayerStream::PushBlock:
///          φ_i without a first-layer MLP, else y¹_i) and takes the second layer's logits and
///          weighted sums of a whole block at once (BlockLogits and BlockAccumulate on φ, which
///          never form α on a compact block; matrix products on y¹), keeping a max-shifted
///          running softmax sum (rescaled when a block raises the maximum);
///   pass 3 (only when a second-layer head is hardmax or finite, whose kept set depends on
///          the final maximum) accumulates the kept keys.
/// Sums are accumulated in blocks of 4096 terms, so the rounding error stays at a few ulps
/// times log(T) rather than T·ulp (tested against long-double accumulation at T = 10^7).
Vector EvaluateTwoLayer(const Transformer& model, const Source& x);

}  // namespace ltsim
