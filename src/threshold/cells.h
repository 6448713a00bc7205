// The one-layer threshold's fast path: a pair evaluated from joint statistics with precomputed
// tables, and the certified bound on the gap over a cell of the count lattice (docs/theory.md §11).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "ltsim/model/joint_view.h"
#include "ltsim/model/transformer.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim::threshold {

/// What is fixed for every string of a context: T mod Δ*, the last m = τ*+1 tokens and, for a
/// model with `log` bias scaling, T itself. Joint slots are the D* far types κ = r·S + s
/// (count n_κ ≥ 0), then the m suffix positions t = 0 … m−1 (t = 0: the last token, count 1).
struct ContextKey {
  int residue = 0;           ///< T mod Δ*
  std::vector<int> suffix;   ///< x_{T−m+1} … x_T, oldest first
  std::uint64_t length = 0;  ///< a T of the context (its β(T) for `log` bias scaling)
};

/// One head of one model in a context: its logit on every joint slot (bit-identical to the
/// evaluators') and O·y⁰ of every slot's key.
struct HeadTable {
  std::vector<double> logit;  ///< [slot]
  std::vector<double> value;  ///< [slot·d + i] = (O·y⁰_slot)_i
};

/// One model in a context.
struct ModelTable {
  const Transformer* model = nullptr;
  const Layer* layer = nullptr;
  int width = 0, outputs = 0, neurons = 0;
  std::vector<double> query;  ///< y⁰ of the last token, d
  std::vector<HeadTable> heads;
  // Per-slot projections for the bound: P[(k·H + h)·slots + j] = W_k·(O_h y⁰_j) and
  // Q[(i·H + h)·slots + j] = A_i·(O_h y⁰_j); WB[k·m + i] = (W·B)_{k,i}.
  std::vector<double> P, Q, WB;
  /// What attention adds to: pre_base[i] = b_i + A_i·y⁰_T (MLP pre-activations) and
  /// out_base[k] = c_k + W_k·y⁰_T, so z_i = pre_base_i + Σ_(h, j) α_hj·Q_ihj and
  /// f_k = out_base_k + Σ_(h, j) α_hj·P_khj + Σ_i WB_ki·ReLU(z_i).
  std::vector<double> pre_base, out_base;
};

/// Both models in one context.
struct PairTable {
  int types = 0, slots = 0;  ///< D*, D* + m
  ModelTable side[2];
};

/// Builds the tables of f and g in a context of the joint view.
PairTable BuildPairTable(const Transformer& f, const Transformer& g, const JointView& view,
                         const ContextKey& key);

/// Per-head attention and the outputs of one model at one statistic.
struct SideValue {
  std::vector<std::vector<double>> alpha;  ///< [h][slot]
  std::vector<double> pre;                 ///< A u + b, m (empty without an MLP)
  std::vector<double> out;                 ///< f(x), k
};

/// Evaluates one model of the table at far counts n (size D*) and length T, with the rules of
/// layer_math.h (the same logits, a*, weights; sums in another order).
void EvaluateSide(const ModelTable& table, int types, const std::vector<std::uint64_t>& n,
                  std::uint64_t length, SideValue& value);

/// ‖a − b‖_∞, +∞ when either is not finite.
double OutputGap(const std::vector<double>& a, const std::vector<double>& b);

/// A cell: T = T_base + k·Δ* for k ∈ [k_lo, k_hi], far counts n_κ ∈ [lo_κ, hi_κ], under
/// Σ_s n_{(s, r)} = base_r + k for every residue r.
struct Cell {
  std::int64_t k_lo = 0, k_hi = 0;
  std::vector<std::int64_t> lo, hi;
};

/// The certified upper bound on max over the cell's statistics of ‖f − g‖_∞, given the
/// representative's values (docs/theory.md §11.3). `weight_lo/hi[side][h][slot]`
/// bound each slot's unnormalised per-key weight over the cell, `mult_lo/hi[slot]` its
/// multiplicity. Returns +∞ when it cannot bound the cell.
struct CellBoundInput {
  const PairTable* table = nullptr;
  const SideValue* at[2] = {nullptr, nullptr};
  const std::vector<std::vector<double>>* weight_lo[2] = {nullptr, nullptr};
  const std::vector<std::vector<double>>* weight_hi[2] = {nullptr, nullptr};
  const std::vector<double>* mult_lo = nullptr;
  const std::vector<double>* mult_hi = nullptr;
  /// If set: [κ] = Σ over heads of the range of κ's mass over the head's smallest total mass,
  /// and [D*] the same for a step of the lengths (every residue's heaviest key), times the
  /// cell's range of k (where to split).
  std::vector<double>* score = nullptr;
  /// The cell itself, its residue classes' sizes at k = 0 and the view's S and Δ (the relaxed
  /// bounds of docs/theory.md §11.6, tried when the first bound is above `limit`, and the
  /// lengths' split score need them).
  const Cell* cell = nullptr;
  const std::vector<std::int64_t>* base = nullptr;
  int alphabet = 0, period = 0;
  /// The first bound at or below it is returned (the caller prunes at `limit`).
  double limit = 0.0;
  /// If set: [0] the first bound (§11.3), [1] the counts' relaxed bound, [2] the box's
  /// (§11.6), each +∞ where it was not computed.
  double* parts = nullptr;
};
double CellBound(const CellBoundInput& input);

}  // namespace ltsim::threshold

namespace ltsim::threshold {

/// What one task searches: one context, T = T_base + k·Δ* for k ∈ [k_lo, k_hi].
struct TaskSpec {
  ContextKey key;
  std::uint64_t T_base = 0;  ///< the smallest T ≥ m + 1 with T ≡ key.residue (mod Δ*)
  std::int64_t k_lo = 0, k_hi = 0;
};

enum class Goal {
  kFirst,  ///< the smallest T with a disagreeing statistic (cells past it are abandoned)
  kMax,    ///< the largest gap (single length), with its statistic
};

struct EngineOptions {
  double epsilon = 0.0;
  Goal goal = Goal::kFirst;
  bool prune = true;          ///< false: every statistic of the task is evaluated
  double leaf_points = 16;    ///< cells with at most this many statistics are enumerated
  bool count_pruned = false;  ///< count the statistics of every pruned cell (tests)
  /// Polled every few hundred cells: true = stop now (TaskOutcome::stopped_at says what was
  /// finished). Empty: never.
  std::function<bool()> interrupted;
};

struct TaskOutcome {
  std::uint64_t first_T = 0;               ///< kFirst: the smallest disagreeing T found, 0 if none
  double best_gap = -1.0;                  ///< kMax: the largest gap found above ε (−1 if none)
  std::vector<std::uint64_t> best_counts;  ///< its far counts
  std::uint64_t best_T = 0;
  std::vector<std::uint64_t> evaluated;  ///< [k − k_lo]: statistics evaluated one by one
  std::vector<std::uint64_t> pruned;  ///< [k − k_lo]: statistics in pruned cells (count_pruned)
  std::vector<double> max_gap;        ///< [k − k_lo]: the largest evaluated gap, NaN if none
  /// [k − k_lo]: the largest certified bound of a pruned cell holding a statistic of that
  /// length, NaN if none (docs/theory.md §11.4).
  std::vector<double> max_bound;
  /// 0: the task ran to its end. Else it was interrupted, and every statistic of every length
  /// below stopped_at lies in a cell it evaluated or pruned (lengths from it on: unknown).
  std::uint64_t stopped_at = 0;
  std::uint64_t evaluations = 0, cells = 0, cells_pruned = 0;
  /// Statistics whose double gap lay within the rounding bound of the verdict's boundary (or
  /// with an uncertain decision), decided in 50 digits instead (docs/theory.md §8.7).
  std::uint64_t precise = 0;
  double max_pruned_bound = 0.0;  ///< the largest bound of a pruned cell
};

/// Branch and bound over one task's cells (docs/theory.md §11), deterministic.
TaskOutcome RunTask(const Transformer& f, const Transformer& g, const JointView& view,
                    const TaskSpec& spec, const EngineOptions& options);

/// Tests: every bound the search can take on one cell of a task, and the largest gap over the
/// cell's statistics, each evaluated.
struct CellCheck {
  bool bounded = false;  ///< the cell is boundable as it is (a* fixed, finite rounding fixed)
  double bounds[3] = {std::numeric_limits<double>::infinity(),
                      std::numeric_limits<double>::infinity(),
                      std::numeric_limits<double>::infinity()};  ///< CellBoundInput::parts
  double max_gap = 0.0;          ///< over the statistics of the cell
  std::uint64_t statistics = 0;  ///< in the cell (0: it holds none)
  double output_scale = 0.0;     ///< the largest |output| seen, for tolerances
};
CellCheck CheckCell(const Transformer& f, const Transformer& g, const JointView& view,
                    const TaskSpec& spec, const Cell& cell);

/// The verdict rule of threshold.h: gap > ε + kThresholdGapTolerance·max(1, ‖f‖_∞, ‖g‖_∞).
bool Disagrees(double gap, double epsilon, const std::vector<double>& f,
               const std::vector<double>& g);

}  // namespace ltsim::threshold
