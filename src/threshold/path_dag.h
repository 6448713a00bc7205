// The strings of a two-layer pair as paths through a DAG of first-layer nodes, with the
// first layer's output tabulated once per node (docs/theory.md §11.5).
#pragma once

#include <cstdint>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/model/transformer.h"
#include "ltsim/sim/simulator.h"

namespace ltsim::threshold {

/// The nodes of every position j = 1 … length() in a joint view (S, Δ*, τ*): a node of layer j
/// is (j, c, w) with c the far type counts of positions 1 … j − τ* − 1 (types κ = r·S + s for
/// token s at residue r = i mod Δ*) and w = x_{max(1, j−τ*)} … x_j, the window. A string of
/// length T is exactly one path v_1 → … → v_T, v_{j+1} the successor of v_j by x_{j+1}, and
/// every model of the view computes y¹_j from v_j alone (docs/model.md §3).
///
/// Layer j holds `vectors` count vectors (sorted lexicographically) times `windows` windows
/// (base-S codes, oldest token most significant); node (v, w) has index v·windows + w within
/// the layer and offset + v·windows + w globally.
class PathDag {
 public:
  explicit PathDag(const JointView& view);

  struct Layer {
    std::uint64_t position = 0;         ///< j
    int window_length = 0;              ///< min(j, τ* + 1)
    std::uint32_t windows = 0;          ///< S^window_length
    std::uint32_t vectors = 0;          ///< count vectors
    std::uint64_t offset = 0;           ///< global index of the first node
    std::vector<std::uint32_t> counts;  ///< [v·D* + κ]
    /// [v·S + y]: the count vector of layer j + 1 after token y leaves the window (position
    /// j − τ*); empty while the window still grows (j ≤ τ*).
    std::vector<std::uint32_t> next;
  };

  const JointView& view() const { return view_; }
  int types() const { return types_; }
  /// Layers built so far (1 … length()).
  std::uint64_t length() const { return layers_.size(); }
  /// Nodes of layers 1 … length().
  std::uint64_t nodes() const;
  /// Layer j, 1-based.
  const Layer& layer(std::uint64_t j) const { return layers_[j - 1]; }

  /// Builds layers up to `length` (nothing when they exist).
  void Extend(std::uint64_t length);

  /// The index in layer j + 1 of the successor of node `index` of layer j by token s.
  std::uint32_t Successor(std::uint64_t j, std::uint32_t index, int s) const;

  /// The tokens of the window of a node of layer j (oldest first), and its last token.
  std::vector<int> Window(std::uint64_t j, std::uint32_t index) const;
  int LastToken(std::uint64_t j, std::uint32_t index) const;

  /// The node of layer j that a string's prefix x_1 … x_j reaches.
  std::uint32_t NodeOf(const std::vector<Token>& prefix) const;

  /// The joint type counts of a node (length j, far counts, window as suffix).
  TypeCounts Counts(std::uint64_t j, std::uint32_t index) const;

  /// Nodes of layers 1 … length in a view, without building them; saturates at `cap`.
  static std::uint64_t CountNodes(const JointView& view, std::uint64_t length, std::uint64_t cap);

 private:
  JointView view_;
  int types_ = 0;
  std::vector<Layer> layers_;
};

/// y¹ of one model at every node of a DAG, d doubles a node (FirstLayerOutput on the node's
/// counts coarsened to the model's view), extended with the DAG; computed in parallel, each
/// node independently, so the table does not depend on the threads.
class FirstLayerTable {
 public:
  FirstLayerTable(const Transformer& model, const PathDag& dag);
  /// Fills the nodes of the layers built since the last call.
  void Extend();
  int width() const { return width_; }
  const double* at(std::uint64_t global_index) const {
    return values_.data() + global_index * static_cast<std::uint64_t>(width_);
  }
  /// max over the nodes filled of ‖y¹‖_∞ and ‖y¹‖₁.
  double max_abs() const { return max_abs_; }
  double max_l1() const { return max_l1_; }

 private:
  const Transformer& model_;
  const PathDag& dag_;
  int width_ = 0;
  std::uint64_t filled_layers_ = 0;
  std::vector<double> values_;
  double max_abs_ = 0.0, max_l1_ = 0.0;
};

/// Whether two models compute the same y¹ at every node: the same alphabet, width, period,
/// locality, tie tolerance, embedding, positional encoding and first layer (bitwise).
bool SameFirstLayer(const Transformer& a, const Transformer& b);

}  // namespace ltsim::threshold
