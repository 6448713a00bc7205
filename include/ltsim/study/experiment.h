// The paper's experiments on constructed models: needed length vs ω, p, S and k
// (docs/theory.md §6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/core/progress.h"
#include "ltsim/gen/input_generator.h"
#include "ltsim/io/json.h"
#include "ltsim/model/transformer.h"
#include "ltsim/strings/source.h"
#include "ltsim/study/fit.h"
#include "ltsim/study/sweep.h"

namespace ltsim {

/// The grids of the four series and how each point is measured.
struct ExperimentOptions {
  std::vector<double> omegas = {1, 2, 4, 8};  ///< SimpleTask(ω)
  std::vector<int> primes = {2, 3, 5, 7};     ///< ModPTask(p, 1 mod p)
  std::vector<int> alphabets = {2, 3, 4};     ///< k-gram S, with k = kgram_fixed_k
  std::vector<int> ks = {1, 2, 3};            ///< k-gram k, with S = kgram_fixed_alphabet
  int kgram_fixed_k = 2;
  int kgram_fixed_alphabet = 2;
  double eps = 0.01;               ///< ε of the one-layer tasks (frequency simulator)
  double kgram_eps = 0.05;         ///< ε of the k-gram series (`markov`: its z is random, noisier)
  double accuracy = 1e-3;          ///< SimpleTask's MLP accuracy (MakeSimpleTask)
  int seeds = 2;                   ///< inputs x per one-layer point (needed length: the max)
  int kgram_seeds = 3;             ///< simulator seeds per k-gram n (ε must hold for all)
  std::uint64_t seed = 0;          ///< master seed of every x and z
  std::uint64_t x_length = 20000;  ///< |x|
  std::uint64_t fixed_n = 500;     ///< n at which |f(x) − f(z)| is also recorded
  InputKind input = InputKind::kUniform;  ///< family of x (alphabet of the task)
  std::string kgram_method = "markov";    ///< markov or blocks (two-layer models)
  int threads = 0;  ///< oneTBB arena size over the rows; 0 = all. Never changes results.
  /// Non-empty: every row writes a needed-length point witness
  /// `out_dir`/<task>-<parameter>/p<i>.point.json (i: the value's index in its grid;
  /// docs/witnesses.md §6) and ExperimentRow::witness_file names it. Empty: none.
  std::string out_dir;
  /// Called with (rows finished, rows) as they end; never changes the result.
  ProgressCallback progress;
};

/// One (task, parameter value) point.
struct ExperimentRow {
  std::string task;       ///< simple-task, modp-task or kgram
  std::string parameter;  ///< omega, p, S or k
  double value = 0.0;
  std::string method;  ///< the simulator: frequency or kgram_method
  double eps = 0.0;
  std::uint64_t needed = 0;   ///< the needed length (|x| when not reached)
  bool reached = false;       ///< whether some n < |x| met ε
  double sim_at_fixed = 0.0;  ///< max over seeds of |f(x) − f(z)|_∞ at n = fixed_n
  /// One sample per x seed (one-layer tasks) or one for all simulator seeds (k-gram), each
  /// censored above (no n < |x| met ε) or below (the grid's first n already did).
  std::vector<Sample> samples = {};
  Censoring censoring = Censoring::kNone;  ///< the point's (any censored sample censors it)
  Spread spread = {};                      ///< min / median / max of the samples
  /// The x of the reported needed length: one-layer, the x seed attaining the max; k-gram,
  /// the one x. StreamSeed(seed, "experiment-x", index) is the input spec's seed.
  std::uint64_t x_seed = 0;
  /// The row's point witness relative to out_dir: <task>-<parameter>/p<i>.point.json ("" without)
  std::string witness_file = {};
};

/// One series: its fit and the trend check of docs/theory.md §6.
struct ExperimentTrend {
  std::string task, parameter;
  std::vector<double> values;
  std::vector<std::uint64_t> needed;
  ExponentEstimate estimate;  ///< docs/statistics.md §2
  TrendVerdict trend;         ///< docs/statistics.md §3
  /// trend == rises: the interval excludes 0 and the series is monotone within its spread.
  bool rises = false;
  bool monotone = false;  ///< non-decreasing within the spread (uncensored points)
};

/// Everything `ltsim experiment paper` reports.
struct ExperimentResult {
  ExperimentOptions options;
  std::vector<ExperimentRow> rows;
  std::vector<ExperimentTrend> trends;
};

/// One k-gram measurement (docs/theory.md §6): the needed length of the two-layer model f on x,
/// SeededNeededLength with `method` and the simulator seeds StreamSeed(seed, "experiment-z",
/// 0..seeds−1), as a sample censored above (no n < |x| met ε) or below (the grid's first n,
/// τ + 2, already met it). `needed` and `reached` receive the raw result when not null.
Sample KGramNeededSample(const Transformer& f, const Source& x, double eps,
                         const std::string& method, int seeds, std::uint64_t seed,
                         std::uint64_t* needed = nullptr, bool* reached = nullptr);

/// Runs the four series. Pure in the options. InputError for bad options (empty grids are
/// allowed and skip the series; non-positive values, ε ∉ (0, 1), seeds < 1, |x| < 10).
ExperimentResult RunExperiment(const ExperimentOptions& options);

/// The options as `experiment paper --json` records them.
io::Json ExperimentOptionsToJson(const ExperimentOptions& options);

}  // namespace ltsim
