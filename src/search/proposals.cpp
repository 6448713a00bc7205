// The search's proposal distribution: which move to try, and the dispatch to the model moves
// (src/search/model_moves.cpp) and the moves of x (src/search/x_moves.cpp).
#include "ltsim/search/proposals.h"

#include <algorithm>
#include <array>
#include <boost/random/discrete_distribution.hpp>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"
#include "search/moves.h"

namespace ltsim {
namespace {

using Weights = std::array<double, kProposalKinds>;

}  // namespace

std::vector<double> ProposalWeights(ProposalSet proposals, bool search_x) {
  Weights w{};
  if (proposals == ProposalSet::kGaussian) {
    w[0] = 1;
  } else {
    w = {3, 1, 3, 1, 2, 1, 1, 2, 1, 1, 1, 1};
    if (proposals == ProposalSet::kLogits) {
      for (ProposalKind k :
           {ProposalKind::kGaussian, ProposalKind::kCopyRow, ProposalKind::kRescale})
        w[static_cast<int>(k)] = 0;
    }
    if (!search_x) std::fill(w.begin() + static_cast<int>(ProposalKind::kXModerate), w.end(), 0.0);
  }
  return {w.begin(), w.end()};
}

ProposalKind DrawProposal(const std::vector<double>& weights, FuzzEngine& engine) {
  boost::random::discrete_distribution<int, double> law(weights.begin(), weights.end());
  return static_cast<ProposalKind>(law(engine));
}

bool ApplyProposal(ProposalKind kind, const SearchOptions& o, SearchCandidate& c,
                   FuzzEngine& engine) {
  return kind >= ProposalKind::kXModerate ? moves::ApplyXMove(kind, o, c, engine)
                                          : moves::ApplyModelMove(kind, o, c, engine);
}

std::vector<Run> CandidateRuns(const SearchCandidate& c) {
  if (!c.x_runs.empty()) return c.x_runs;
  const auto x = CandidateInput(c);
  std::vector<Run> runs;
  const auto reader = x->Open();
  for (Chunk chunk; reader->Next(chunk);) {
    if (chunk.kind == Chunk::Kind::kRun) {
      AppendRun(runs, chunk.run.token, chunk.run.count);
    } else {
      for (std::size_t k = 0; k < chunk.size; ++k) AppendRun(runs, chunk.at(k), 1);
    }
  }
  return runs;
}

}  // namespace ltsim
