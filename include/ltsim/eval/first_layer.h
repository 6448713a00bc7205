// The first layer's output at every position, streamed in O(D·H·d) per token (theory.md §4–5).
#pragma once

#include <cstdint>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"

namespace ltsim {

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

  /// For a first layer without MLP, y¹_i is linear in φ_i = [e_q ; α_i] (q the query type,
  /// α_i every head's attention on each type): y¹_i = FeatureMatrix()·φ_i. Pushes a token
  /// and returns φ_i (D + H·D entries) without forming y¹_i; consumers that only take dot
  /// products and weighted sums of y¹ (the second layer) can work on φ instead.
  const Vector& PushFeatures(Token token);

  /// [y⁰_κ for every type κ | O_h y⁰_κ for every head and type]: d × (D + H·D).
  Matrix FeatureMatrix() const;

  /// Whether the first layer is linear in φ (it has no MLP), so PushFeatures applies.
  bool linear() const { return !layer_.mlp; }

  /// Number of tokens pushed so far (the position of the last one).
  std::uint64_t position() const { return position_; }

 private:
  using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  struct HeadTables;
  void AddFarType(int type);
  int Advance(Token token);  // updates the state; returns the query type
  void SetHeadWeights(int head, int query_type, double log_i);

  const Transformer& model_;
  const Layer& layer_;
  int types_ = 0;
  std::vector<HeadTables> heads_;
  std::vector<Vector> inputs_;  // y⁰ of each type (token s, residue r): index r·S + s
  std::vector<double> far_;     // far counts by type (exact in a double up to 2^53)
  std::vector<int> present_;    // types with a positive far count
  std::vector<int> window_;     // ring of the last min(i, τ+1) types
  int window_start_ = 0;        // next slot to write (the oldest once full)
  int window_size_ = 0;
  std::vector<int> newest_;  // the window's types, newest (the query) first
  std::uint64_t position_ = 0;
  // Buffers reused at every position (no allocation per token).
  Matrix values_;   // d × (H·D): O_h y⁰_κ in column h·D + κ
  Vector weights_;  // H·D: α of each head on each type at the current position
  Vector attended_, hidden_, output_, features_;
  std::vector<double> suffix_logits_;
};

}  // namespace ltsim
