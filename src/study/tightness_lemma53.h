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

/// n_i = round(16·1000^(i/(points − 1))): three decades from 16 to 16,000.
std::vector<std::uint64_t> Lemma53Grid(int points);

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
/// on the same x and z (upper side) against n, the lemma's −1/3 for markov, a rate verdict.
/// Witnesses under out/n/<scheme>/ when o.out is set. Identical for any o.threads.
std::vector<TightnessRow> RunLemma53Rows(const TightnessOptions& o);

}  // namespace ltsim
