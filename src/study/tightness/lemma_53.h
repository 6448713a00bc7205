// The Lemma 5.3 rows of `ltsim tightness --theorem 5.3` (docs/tightness.md §5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ltsim/study/statistic_attack.h"
#include "ltsim/study/tightness.h"

namespace ltsim {

/// The schemes of the default run, markov first.
std::vector<std::string> Lemma53Schemes();

/// n_i = round(16·(largest/16)^(i/(points − 1))): from 16 to `largest` (default 16,000: three
/// decades) evenly in log.
std::vector<std::uint64_t> Lemma53Grid(int points, std::uint64_t largest = 16'000);

/// InputError for an unknown scheme, a repeated one, or |x| not above the largest n.
void ValidateLemma53(const TightnessOptions& o);

/// The rows from a finished sweep (`files`: one witness path per cell, or empty): split out so
/// tests can plant a cell (docs/tightness.md §5).
std::vector<TightnessRow> Lemma53RowsFromSweep(const TightnessOptions& o,
                                               const AttackSweepResult& sweep,
                                               const std::vector<std::string>& files);

/// The sweep of the rows: o's grid, seeds, |x| and schemes (inputs uniform, markov, periodic).
AttackSweepOptions Lemma53SweepOptions(const TightnessOptions& o);

/// One row per scheme, parameter n: the adversarial error (lower side) and the transport bound
/// on the same x and z (upper side) against n, the lemma's −1/3 for markov, a rate verdict
/// (markov's by DecideLemma53Rate, the rule `statistic --sweep` uses); and, with parameter
/// locality, the τ row. Witnesses under out/n/<scheme>/ when o.out is set. Identical for any
/// o.threads.
std::vector<TightnessRow> RunLemma53Rows(const TightnessOptions& o);

/// The n rows alone (RunLemma53Rows with parameter n).
std::vector<TightnessRow> RunLemma53NRows(const TightnessOptions& o);

/// The locality row `tau_markov`: markov at n = o.statistic_locality_n, τ = 0 … points − 1, the
/// adversarial error (lower) and transport bound (upper) of the worst family per z seed against
/// τ + 1 (log-log), the lemma's exponent 1, DecideRateVerdict (docs/tightness.md §5). Witnesses
/// under out/locality/markov/ when o.out is set.
TightnessRow RunLocalityRow(const TightnessOptions& o);

}  // namespace ltsim
