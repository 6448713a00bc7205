// The length a simulator needs on a given pair and x: a measurement on particular inputs, not
// a bound (docs/theory.md: needed length vs first disagreement T*).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"
#include "ltsim/strings/source.h"

namespace ltsim {

/// max(sim_f, sim_g) of the `frequency` construction at target n; +∞ when z cannot be built.
double MaxFrequencySim(const Transformer& f, const Transformer& g, const Source& x, std::uint64_t n);

/// ‖f(x) − f(z)‖_∞ for z built by `method` at target n with `seed` (on_x = f(x); may be empty
/// for a one-layer f, which is then evaluated from the sandwich); +∞ when z cannot be built.
double SimAt(const Transformer& f, const Vector& on_x, const Source& x, const std::string& method,
             std::uint64_t n, std::uint64_t seed);

/// The grid of candidate lengths NeededLength searches: n_k = ⌈n₀·2^(k/4)⌉ below |x|
/// (increasing, duplicates dropped), then |x| itself.
std::vector<std::uint64_t> NeededLengthGrid(std::uint64_t n0, std::uint64_t x_length);

/// The smallest n on the geometric grid n_k = ⌈n₀·2^(k/4)⌉ (n₀ = τ + 2, capped at |x|)
/// at which the `frequency` simulator gives max(sim_f, sim_g) ≤ ε, by binary search (it
/// assumes the condition is monotone in n, which the construction's η ≤ 2(|K| + m)/Θ
/// suggests but does not guarantee). n = |x| when no smaller grid n meets ε.
std::uint64_t NeededLength(const Transformer& f, const Transformer& g, const Source& x, double eps,
                           bool* reached);

/// The needed length of a two-layer model f on x: the smallest n on the grid
/// n_j = ⌈(τ + 2)·2^(j/4)⌉ (then |x|), scanned upwards, at which ‖f(x) − f(z)‖_∞ ≤ ε for z
/// built by `method` with each of the seeds StreamSeed(seed, "experiment-z", 0..seeds−1).
/// |x| with reached = false when no smaller grid n does. No monotonicity is assumed.
std::uint64_t SeededNeededLength(const Transformer& f, const Source& x, double eps,
                                 const std::string& method, int seeds, std::uint64_t seed,
                                 bool* reached);

}  // namespace ltsim
