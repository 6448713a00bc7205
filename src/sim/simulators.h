// Factories of the registered simulators (one file pair each) and their shared layout helpers.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ltsim/sim/simulator.h"

namespace ltsim {

std::unique_ptr<Simulator> MakeFrequencyMatching();
/// Deliberately broken (not listed in SimulatorNames): frequency matching that drops x's
/// suffix from z while still claiming frequency's η. Campaign tests plant it to check that
/// refutations are found and replay.
std::unique_ptr<Simulator> MakeTestDropSuffix();
std::unique_ptr<Simulator> MakeFrequencyAgnostic();
std::unique_ptr<Simulator> MakeTruncate();
std::unique_ptr<Simulator> MakeUniformSubsequence();
/// `markov`: blocks of x kept by a stationary two-state chain with keep rate n/T and mean
/// kept block ℓ, plus x's last τ*+1 positions (docs/theory.md §4.5); |z| is random, E|z| ≈ n.
std::unique_ptr<Simulator> MakeMarkovSubset();
/// `blocks`: ⌈(n − τ* − 1)/ℓ⌉ evenly spaced blocks of about ℓ positions of x, plus x's
/// last τ*+1 positions; |z| = n (docs/theory.md §4.6, the deterministic alternative).
std::unique_ptr<Simulator> MakeEvenlySpacedBlocks();
/// `balanced-blocks`: N blocks of ℓ positions of x chosen by prefix-balanced rounding of their
/// window counts, plus x's last positions (docs/theory.md §4.8); |z| ≤ n.
std::unique_ptr<Simulator> MakeBalancedBlocks();

/// Where z's far region and suffix go, for constructions that keep x's τ*-suffix and
/// x's length modulo Δ* (requirements (a) and (e) of docs/theory.md §2.4).
struct FarRegion {
  std::uint64_t length = 0;                  ///< n_far = |z| − (τ* + 1)
  std::vector<std::uint64_t> residue_sizes;  ///< N_r: far positions of z with residue r
};

/// The largest |z| ≤ target with |z| ≡ T (mod Δ*) and its far region; InputError when the
/// target leaves no room for the suffix.
FarRegion PlanFarRegion(const TypeCounts& counts, std::uint64_t target, const char* method);

/// Lays out far counts c'[κ] (indexed like TypeCounts::far, summing to N_r in each residue)
/// position by position, then appends x's suffix: z as runs.
std::vector<Run> LayOut(const TypeCounts& counts, const FarRegion& region,
                        const std::vector<std::uint64_t>& far);

/// Splits `total` into integers proportional to `quotas` (≥ 0, summing to > 0) by largest
/// remainder, ties to the lower index.
std::vector<std::uint64_t> LargestRemainder(const std::vector<double>& quotas, std::uint64_t total);

/// When T ≤ target, z = x (η = 0): fills `out` and returns true.
bool SimulateShortString(const SimulationInput& in, Simulation& out);

/// x as runs, for a short x.
std::vector<Run> WholeString(const Source& x);

/// Positions [begin, end) of x, 0-based.
struct Span {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

/// x restricted to sorted, disjoint spans, as runs: one streaming pass over x, costing
/// O(chunks + spans + kept tokens).
std::vector<Run> CopySpans(const Source& x, const std::vector<Span>& spans);

/// ℓ of the block methods: `requested` when positive, else ⌈n^(1/3)⌉ (docs/theory.md §4.5).
std::uint64_t BlockLength(std::uint64_t requested, std::uint64_t target);

}  // namespace ltsim
