// The search's moves, split by what they edit (src/search/model_moves.cpp, x_moves.cpp);
// private to src/search/.
#pragma once

#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cstdint>

#include "ltsim/search/proposals.h"

namespace ltsim::moves {

inline constexpr std::uint64_t kMinLength = 10;         // as search.cpp's shortest x
inline constexpr std::uint64_t kMaxExplicit = 1000000;  // x edits read x into memory

/// Uniform integer in [lo, hi].
inline int Uniform(int lo, int hi, FuzzEngine& engine) {
  return boost::random::uniform_int_distribution<int>(lo, hi)(engine);
}

/// A fair coin.
inline bool Coin(FuzzEngine& engine) {
  return boost::random::bernoulli_distribution<double>(0.5)(engine);
}

/// The model moves (gaussian … rescale); false when the move does not apply.
bool ApplyModelMove(ProposalKind kind, const SearchOptions& options, SearchCandidate& candidate,
                    FuzzEngine& engine);

/// The moves of x (x-moderate … x-reseed); false when the move does not apply.
bool ApplyXMove(ProposalKind kind, const SearchOptions& options, SearchCandidate& candidate,
                FuzzEngine& engine);

}  // namespace ltsim::moves
