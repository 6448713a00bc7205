// Sufficient statistics of a string for one-layer models: far type counts plus the τ-suffix
// (docs/theory.md §2.2).
#pragma once

#include <cstdint>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/strings/source.h"

namespace ltsim {

/// What a one-layer model with period Δ and locality τ can see of x at the last position:
/// T, the counts of far types κ = (token, residue) over positions j ≤ T − τ − 1, and the
/// last min(T, τ+1) tokens. f(x) is a function of these alone (docs/theory.md §2.2).
struct TypeCounts {
  int alphabet = 0;
  int period = 1;
  int locality = 0;
  std::uint64_t length = 0;        ///< T
  std::vector<std::uint64_t> far;  ///< far[TypeIndex(s, r)], positions j ≤ T − τ − 1
  std::vector<Token> suffix;       ///< x_{T−m+1} … x_T, m = min(T, τ+1), oldest first

  /// Index of type (token s, residue r) in `far`: r·S + s.
  int TypeIndex(int s, int r) const { return r * alphabet + s; }
  std::uint64_t count(int s, int r) const { return far[TypeIndex(s, r)]; }
  /// Residue of 1-based position j.
  int Residue(std::uint64_t j) const { return static_cast<int>(j % period); }
  /// Number of far positions, max(T − τ − 1, 0).
  std::uint64_t far_length() const { return length - suffix.size(); }
};

/// One streaming pass over `source`. Throws InputError naming the position of the first
/// token outside the alphabet. Memory O(S·Δ + τ), independent of T.
TypeCounts CountTypes(const Source& source, int alphabet, int period, int locality);

/// The statistics a model with a coarser view sees: `period` must divide counts.period and
/// `locality` ≤ counts.locality (suffix tokens beyond the new locality become far counts).
TypeCounts Coarsen(const TypeCounts& counts, int period, int locality);

/// Builds the statistics of a string held in memory (tests and small strings).
TypeCounts CountTypes(const std::vector<Token>& tokens, int alphabet, int period, int locality);

/// Steps a composition c[0..k) of its sum to the next one, (n, 0, …, 0) first and
/// (0, …, 0, n) last; false (and back to the first) after the last. Enumerates the far counts
/// of one residue class (threshold's odometer, the raw search's statistic sweeps).
inline bool NextComposition(std::uint64_t* c, int k) {
  const std::uint64_t last = c[k - 1];
  c[k - 1] = 0;
  int i = k - 2;
  while (i >= 0 && c[i] == 0) --i;
  if (i < 0) {
    c[0] = last;
    return false;
  }
  --c[i];
  c[i + 1] = last + 1;
  return true;
}

}  // namespace ltsim
