// Certified bounds on the gap of a two-layer pair over sets of paths of the node DAG, and the
// exact evaluation of single paths (docs/theory.md §11.5).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"
#include "threshold/path_dag.h"

namespace ltsim::threshold {

/// Both models of a pair over one DAG: their y¹ tables (shared when the first layers are the
/// same) and what the second layer needs. A one-layer model is read as a second layer without
/// heads: its output is W·y¹(v_T) + c.
class PathPair {
 public:
  PathPair(const Transformer& f, const Transformer& g, const PathDag& dag);
  /// Fills the tables for layers built since the last call.
  void Extend();

  struct Side {
    const Transformer* model = nullptr;
    const Layer* layer = nullptr;  ///< the second layer, nullptr for a one-layer model
    int table = 0;                 ///< index into tables()
    int heads = 0, neurons = 0, outputs = 0, width = 0;
    Matrix WB;             ///< W·B (outputs × neurons), with an MLP
    double y_error = 0.0;  ///< δ_y: bound on the rounding of each entry of y¹
    double y_bound = 0.0;  ///< R₁: a priori bound on ‖y¹‖₂
  };
  const Side& side(int s) const { return sides_[s]; }
  const PathDag& dag() const { return dag_; }
  const FirstLayerTable& table(int s) const { return *tables_[sides_[s].table]; }
  /// y¹ of side s at a global node index.
  const double* y(int s, std::uint64_t node) const { return table(s).at(node); }
  /// Heads of both sides, f's first: (side, head index).
  const std::vector<std::pair<int, int>>& heads() const { return heads_; }

 private:
  const PathDag& dag_;
  Side sides_[2];
  std::vector<std::unique_ptr<FirstLayerTable>> tables_;
  std::vector<std::pair<int, int>> heads_;
};

/// f(x) and g(x) of the string whose path visits `nodes` (global indices, layer j at j − 1)
/// from the tables, with the rules of docs/model.md §3 (AttentionWeight, BiasScale, ApplyMlp).
void PathOutputs(const PathPair& pair, const std::vector<std::uint64_t>& nodes, Vector& f,
                 Vector& g);

/// ‖a − b‖_∞, +∞ when either is not finite.
double PathGap(const Vector& a, const Vector& b);

/// A box of far counts per joint type at one layer.
struct CountBox {
  std::uint64_t layer = 0;
  std::vector<std::int64_t> lo, hi;
};

/// A set of paths: every path of a length T ∈ [length, length_hi] whose last node has window
/// `final_window` (the code of x_{T−m+1} … x_T, m = min(T, τ* + 1); one window length for every
/// T of the set) and counts in [final_lo, final_hi], whose node at each waypoint layer has counts
/// in the waypoint's box, and whose largest logit lies in astar[head] for every head (the
/// search narrows it for the heads weighed relative to a*: hardmax, finite, and softmax whose
/// logits spread too far).
struct PathSet {
  std::uint64_t length = 0, length_hi = 0;
  std::uint32_t final_window = 0;
  std::vector<std::int64_t> final_lo, final_hi;
  std::vector<CountBox> waypoints;               ///< at layers below `length`
  std::vector<std::pair<double, double>> astar;  ///< [head]; (−∞, ∞) until narrowed
};

/// The root set of the lengths [length, length_hi] and a final window: every count, every a*.
PathSet RootPathSet(const PathPair& pair, std::uint64_t length, std::uint64_t length_hi,
                    std::uint32_t final_window);

/// What the bound of a set found.
struct SetBound {
  bool empty = false;  ///< the set holds no path
  bool leaf = false;   ///< at most BoundOptions::leaf_paths paths: to be enumerated, not bounded
  bool holds = false;  ///< certified: every path of the set has gap ≤ the limit asked for
  double paths = 0.0;  ///< number of paths (exact below 2^53)
  std::uint64_t nodes = 0;  ///< nodes of the set
  /// When neither: sets that partition the paths (empty when nothing can be split; then the
  /// set has few paths and is enumerated).
  std::vector<PathSet> children;
  /// Strings seen on the way (maximising paths of the dynamic programmes), for lower bounds.
  std::vector<std::vector<Token>> candidates;
  std::uint64_t programs = 0;  ///< dynamic programmes run
};

/// Tuning of the bound.
struct BoundOptions {
  double leaf_paths = 16;  ///< sets with at most this many paths are enumerated
  int max_rho_depth = 6;   ///< bisections of the pairing interval of ρ
  int max_kelley = 12;     ///< cutting-plane steps for s at one interval of ρ
  bool candidates = true;  ///< collect maximising strings
  bool pairing = true;     ///< try the pairing of two heads (docs/theory.md §11.5)
  /// Tests: the reference computations the fast ones must match bit for bit (the ratio
  /// programmes on arrays filled first, every candidate point of the pairing's envelopes).
  bool reference = false;
};

/// Arrays the bound reuses from set to set (the dynamic programmes' slots and inputs): one per
/// sequence of calls on one thread, freed with it.
class BoundScratch {
 public:
  BoundScratch();
  ~BoundScratch();
  BoundScratch(const BoundScratch&) = delete;
  BoundScratch& operator=(const BoundScratch&) = delete;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Counts the paths of `set`; unless it is empty or a leaf, decides whether every path has
/// ‖f − g‖_∞ ≤ limit (`holds`) with a certified argument (docs/theory.md §11.5): per output
/// and sign, the gap is bounded by a constant plus a sum of ratios of path sums, each bounded
/// by parametric dynamic programmes over the set's nodes, and two of them paired through a
/// Lagrangian bound; `holds` is never true unless the argument is complete, rounding
/// included. Otherwise `children` split the set.
/// `scratch` (optional) keeps the arrays between calls.
SetBound BoundPathSet(const PathPair& pair, const PathSet& set, double limit,
                      const BoundOptions& options, BoundScratch* scratch = nullptr);

/// Every path of a set as strings (at most `cap`; the rest is dropped, `complete` false): the
/// paths through its boxes whose largest logits lie in its a* intervals (PathInSet).
std::vector<std::vector<Token>> EnumeratePaths(const PathPair& pair, const PathSet& set,
                                               std::uint64_t cap, bool* complete);

/// The number of paths of a set (a double: exact below 2^53).
double CountPaths(const PathPair& pair, const PathSet& set);

/// Whether a path (global node indices) lies in a set: its nodes in the waypoint boxes, its last
/// window the set's and, for every head, its largest logit in astar[head].
bool PathInSet(const PathPair& pair, const PathSet& set, const std::vector<std::uint64_t>& nodes);

/// The global node indices of a string's path.
std::vector<std::uint64_t> PathNodes(const PathDag& dag, const std::vector<Token>& x);

}  // namespace ltsim::threshold
