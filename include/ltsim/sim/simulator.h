// The common interface of every construction of a short z from a long x, and its registry.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ltsim/eval/type_counts.h"
#include "ltsim/model/joint_view.h"
#include "ltsim/model/transformer.h"
#include "ltsim/strings/source.h"

namespace ltsim {

/// How to build z: a simulator by name and what it is given (the `simulate`, `sandwich` and
/// `statistic` commands; RunSimulation and RunSandwich in check/sandwich.h).
struct SandwichOptions {
  std::string method = "frequency";
  std::uint64_t length = 0;  ///< target |z| = n
  std::uint64_t seed = 0;
  std::uint64_t block_length = 0;  ///< ℓ of `markov` and `blocks`; 0 = ⌈n^(1/3)⌉
  /// Compute the certified two-layer bound of docs/theory.md §4.7 for two-layer models (two
  /// more passes over x with the first layer).
  bool certify_two_layer = true;
};

/// What a simulator may use: x itself (re-readable), x's counts in the joint view of the
/// models, the models (model-aware methods read their weights, the others only Δ and τ),
/// the target length n and the master seed.
struct SimulationInput {
  const Source& x;
  const TypeCounts& counts;
  std::vector<const Transformer*> models;
  std::uint64_t target_length = 0;
  std::uint64_t seed = 0;
  /// Mean kept-block length ℓ of `markov` and `blocks` (docs/theory.md §4.5); 0 = ⌈n^(1/3)⌉.
  std::uint64_t block_length = 0;
};

/// A constructed z, run-length encoded, with what the construction claims about it.
struct Simulation {
  std::vector<Run> z;
  std::uint64_t length = 0;
  /// The construction's bound on max_h ‖α_h(x) − α_h(z)‖₁ over every head of every model
  /// (docs/theory.md §2.4 requirement (d)); NaN when the method claims none.
  double eta = std::numeric_limits<double>::quiet_NaN();
  /// Frequency matching: the common group total Θ it reached; NaN otherwise.
  double theta = std::numeric_limits<double>::quiet_NaN();
  /// balanced-blocks: the largest prefix imbalance max_B ‖Σ_{b≤B}(x_b − λ)v_b‖₁/ℓ and the bound K
  /// (distinct windows of x + 1) the prefix-balanced rounding guarantees (docs/theory.md §4.8);
  /// NaN otherwise.
  double imbalance = std::numeric_limits<double>::quiet_NaN();
  double imbalance_bound = std::numeric_limits<double>::quiet_NaN();
  std::string detail;  ///< one line for the summary
};

/// What a construction is, for code that chooses or checks methods by property instead of by
/// name (docs/design.md §6). Each simulator states its own; `tests/unit/sim/simulators_test.cpp`
/// checks the ones observable from z (seeded, uses_block_length, claims_eta, model_free).
struct SimulatorTraits {
  /// Reads the models' weights (not only Δ* and τ*): refuses to run without models.
  bool model_aware = false;
  /// Accepts one-layer models only.
  bool one_layer_only = false;
  /// z = x_I for an index set I fixed by |x|, n, τ*, ℓ and the seed alone (never by x's tokens
  /// nor the models): the schemes Lemma 5.3 speaks of, which the statistic attack studies
  /// (docs/theory.md §4.4).
  bool model_free = false;
  /// Keeps blocks of x of mean length ℓ (`--block-length`, default ⌈n^(1/3)⌉), so that Lemma
  /// 5.3's rate (G + L)(τ + 1)/n^(1/3) is what it claims for averages of local test functions
  /// (docs/theory.md §4.4–§4.6): the fuzz property `lemma53` and the seeded needed length of
  /// two-layer models use these.
  bool block_rate = false;
  /// z depends on the seed.
  bool seeded = false;
  /// Reads `block_length` (ℓ).
  bool uses_block_length = false;
  /// Sets Simulation::eta when it shortens x (η = 0 when z = x, for every method).
  bool claims_eta = false;
};

/// A construction of z. Implementations are pure: safe to call from any thread.
class Simulator {
 public:
  virtual ~Simulator() = default;
  virtual std::string name() const = 0;
  virtual SimulatorTraits traits() const = 0;
  /// Builds z with |z| ≤ target_length (`markov` alone draws |z| at random, with mean
  /// about n: see its file). InputError when the request cannot be met (e.g. a target
  /// shorter than the construction's minimum, or models it does not support).
  virtual Simulation Simulate(const SimulationInput& input) const = 0;
};

/// Registered method names, in registry order (without the deliberately broken
/// `test-drop-suffix`, which MakeSimulator still accepts for campaign tests).
std::vector<std::string> SimulatorNames();

/// The simulator registered under `name`; InputError listing the names if unknown.
std::unique_ptr<Simulator> MakeSimulator(const std::string& name);

/// Whether `name` is a registered simulator (listed or test-only) with `trait` set; false for
/// unknown names.
bool SimulatorHas(const std::string& name, bool SimulatorTraits::*trait);

/// Listed method names with `trait` set, in registry order.
std::vector<std::string> SimulatorNamesWith(bool SimulatorTraits::*trait);

/// "a", "a or b", "a, b or c" (`last` joins the final two).
std::string JoinNames(const std::vector<std::string>& names, const std::string& last = "or");

}  // namespace ltsim
