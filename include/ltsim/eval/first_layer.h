// The first layer's output at every position, streamed in O(D·H·d) per token (docs/theory.md §4.3).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

/// The first layer at a block of consecutive positions first, …, first + size − 1: the
/// query type q_i of each, and every head's attention α_i on each type in one of two layouts.
/// Reused across blocks without allocation.
///
/// Dense: column i − first of `attention` holds α_i, head h in rows h·D … h·D + D − 1.
///
/// Compact (`compact`, softmax first layers): α_{i,h} = (F_i ⊙ E_h[q_i] + Σ_t e_{i,h,t}·1_{s_t})
/// / Z_{i,h}, where F_i are the far type counts (F_i = `far` plus the types that left the
/// window in the block up to i), E_h the stream's per-row shifted weight table, s_t the type t
/// positions back (the τ+1 window), e_{i,h,t} = E_h[q_i, s_t]·i^(b_{h,t}) and Z_{i,h} the total.
/// Nothing of size D per position is stored: FirstLayerStream::BlockLogits and BlockAccumulate
/// work on this form, and BlockAttention expands it. A compact block refers to the stream's
/// tables, so it is valid only until the stream next advances (Push or PushBlock; checked).
struct FirstLayerBlock {
  std::uint64_t first = 0;
  int size = 0;
  std::vector<int> query;
  bool compact = false;
  Matrix attention;  ///< dense: (H·D) × capacity; only the first `size` columns are meaningful
  /// compact: the types of positions first − τ − 1 … first + size − 1 (index j is the type that
  /// leaves the window at position first + j, index j + τ + 1 − t is s_t there).
  std::vector<int> types;
  std::vector<int> distinct;  ///< compact: the distinct query types of the block
  std::vector<double> far;    ///< compact: far counts before the block (D)
  Matrix suffix;              ///< compact: e_{i,h,t} in row i − first, column h·(τ+1) + t
  Matrix inverse_total;       ///< compact: 1 / Z_{i,h} in row i − first, column h
};

/// Feeds x one token at a time and returns y¹_i, the output of the model's first layer
/// (attention, residual and MLP) at each position i. At position i a key j ≤ i − τ − 1 is
/// seen only through its type (x_j, j mod Δ), so the running far type counts and the last
/// τ+1 tokens determine y¹_i exactly; per-type logits and values are tabulated once, so a
/// token costs O(D·H·d) (plus the MLP), independent of i. Agrees with the reference forward
/// pass to rounding (differential property tests).
class FirstLayerStream {
 public:
  /// `model` must outlive the stream and have at least one layer.
  explicit FirstLayerStream(const Transformer& model);
  ~FirstLayerStream();
  FirstLayerStream(const FirstLayerStream&) = delete;
  FirstLayerStream& operator=(const FirstLayerStream&) = delete;

  /// Appends the next token (< alphabet; checked) and returns y¹ at its position. The
  /// reference stays valid until the next call.
  const Vector& Push(Token token);

  /// Appends tokens[0 … n) and fills `block` with their positions' query types and every
  /// head's attention α — the same as n calls of Push, to rounding. For a first layer without
  /// MLP, y¹_i is linear in φ_i = [e_{q_i} ; α_i]: y¹_i = FeatureMatrix()·φ_i, so consumers
  /// that only take dot products and weighted sums of y¹ (the second layer) work on the block
  /// through BlockLogits and BlockAccumulate instead of forming y¹. For a softmax first layer the
  /// suffix keys' positional factors i^(b_t) come from a binomial series over the block (exp
  /// only every 256 positions), and each far type's weight from a per-row table shifted by the
  /// row's present maximum instead of the overall maximum. The block is compact when the window
  /// is full, no type becomes far for the first time in it (no table row changes) and no term
  /// can overflow; otherwise it is dense, and where a term could overflow the per-token path
  /// gives its columns (differential tests in tests/property/eval/two_layer_property_test.cpp).
  void PushBlock(const Token* tokens, int n, FirstLayerBlock& block);

  /// α of every position of `block`, dense: (H·D) × block.size into `alpha`.
  void BlockAttention(const FirstLayerBlock& block, Matrix& alpha) const;

  /// The logits φ_iᵀ u_g of every position i of `block` and every column g of u = [u_query ;
  /// u_attention] ((D + H·D) × G, split in its first D rows and the rest) into `logits`
  /// (block.size × G). O(H·G·(D + τ)) per position on a compact block.
  void BlockLogits(const FirstLayerBlock& block, const Matrix& u_query, const Matrix& u_attention,
                   Matrix& logits);

  /// sums.col(g) += Σ_i weights(i − first, g)·φ_i over the block's positions; `sums` is
  /// (D + H·D) × G, `weights` block.size × G (or more rows).
  void BlockAccumulate(const FirstLayerBlock& block, const Matrix& weights, Matrix& sums);

  /// y¹ at every position of `block` (d × block.size, into `y`): the residual, the values
  /// and the MLP applied to the whole block as matrix products.
  void BlockOutputs(const FirstLayerBlock& block, Matrix& y);

  /// [y⁰_κ for every type κ | O_h y⁰_κ for every head and type]: d × (D + H·D).
  Matrix FeatureMatrix() const;

  /// Whether the first layer is linear in φ (it has no MLP), so FeatureMatrix applies.
  bool linear() const;

  /// Number of tokens pushed so far (the position of the last one).
  std::uint64_t position() const;

 private:
  class Impl;  // the tables, window and buffers (src/eval/first_layer_impl.h)
  std::unique_ptr<Impl> impl_;
};

}  // namespace ltsim
