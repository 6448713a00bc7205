// The input families behind MakeInput (src/gen/input_generator.cpp): one file each in
// src/gen/inputs/, sharing these draws. Private to src/gen/.
#pragma once

#include <boost/random/discrete_distribution.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/gen/input_generator.h"
#include "ltsim/gen/model_generator.h"
#include "ltsim/strings/sources.h"

namespace ltsim::inputs {

inline constexpr int kSparseWindow = 64;      // sparse parents lie among the previous 64 positions
inline constexpr int kMarkovSupport = 16;     // a Markov row is supported on at most 16 tokens
inline constexpr int kStressRareTokens = 32;  // stress strings sprinkle at most 32 rare tokens
inline constexpr int kStressMaxSuffix = 4;  // suffix ties cover the last 1..4 tokens (τ + 1 ≤ 4)

using Runs = std::vector<Run>;
using TokenLaw = boost::random::discrete_distribution<int, double>;

/// A uniform token of {0, …, alphabet − 1}.
Token UniformToken(int alphabet, FuzzEngine& engine);
/// True with the given probability.
bool Coin(double probability, FuzzEngine& engine);
/// k distinct values of {0, …, n − 1} in uniformly random order (Floyd's sample, then a
/// Fisher–Yates shuffle).
std::vector<int> SampleDistinct(int k, int n, FuzzEngine& engine);
/// π ~ Dir(α, …, α) on n entries as normalised Gamma(α, 1) draws (Theorem 4.2's prior); the
/// point mass on a uniform entry when every draw underflows (the α → 0 limit).
std::vector<double> DrawDirichlet(int n, double alpha, FuzzEngine& engine);

/// One family: the runs of x for `spec`, drawn from `engine`. `variant` is set by families
/// with sub-variants (stress) to the variant's name, and left empty otherwise.
using FamilyDraw = Runs (*)(const InputSpec& spec, FuzzEngine& engine, std::string& variant);

Runs UniformRuns(const InputSpec& spec, FuzzEngine& engine, std::string& variant);
Runs DirichletRuns(const InputSpec& spec, FuzzEngine& engine, std::string& variant);
Runs SparseRuns(const InputSpec& spec, FuzzEngine& engine, std::string& variant);
Runs MarkovRuns(const InputSpec& spec, FuzzEngine& engine, std::string& variant);
Runs PeriodicRuns(const InputSpec& spec, FuzzEngine& engine, std::string& variant);
Runs StressRuns(const InputSpec& spec, FuzzEngine& engine, std::string& variant);

/// The streamed run families (src/gen/inputs/runs.cpp): `geometric` runs of mean
/// spec.run_length with a uniform other token each (runs, long-runs), or runs of exactly
/// spec.run_length cycling through the alphabet (stride).
std::unique_ptr<Source> MakeRunsSource(const InputSpec& spec, bool geometric, std::string name);

}  // namespace ltsim::inputs
