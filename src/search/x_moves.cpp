// The search's moves of x: edits of its far region (moderate maximal-set totals, rare tokens
// before the suffix, runs removed or rescaled) and re-seeding its spec.
#include <algorithm>
#include <cmath>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"
#include "search/moves.h"

namespace ltsim::moves {
namespace {

constexpr int kModerateTotal = 64;  // x-moderate's largest new total
constexpr int kRareReach = 7;       // x-rare inserts ≤ 7 tokens before the suffix

// ---- Moves of x: edits of its far region (the last τ+1 tokens stay x's suffix). ----

struct Split {
  std::vector<Run> far;
  std::vector<Token> suffix;
};

Split SplitX(const SearchCandidate& c) {
  const std::vector<Token> tokens = FromRuns(CandidateRuns(c));
  const std::size_t keep =
      std::min(tokens.size(), static_cast<std::size_t>(std::max(c.f.locality, c.g.locality) + 1));
  Split s;
  s.far =
      ToRuns(std::vector<Token>(tokens.begin(), tokens.end() - static_cast<std::ptrdiff_t>(keep)));
  s.suffix.assign(tokens.end() - static_cast<std::ptrdiff_t>(keep), tokens.end());
  return s;
}

// Joins an edited split back into x; false when |x| leaves [max(10, n), budget] after the
// prefix is trimmed to the budget.
bool Join(const SearchOptions& o, Split s, SearchCandidate& c) {
  std::vector<Run> runs;
  for (const Run& r : s.far)
    if (r.count > 0) AppendRun(runs, r.token, r.count);
  std::uint64_t length = s.suffix.size();
  for (const Run& r : runs) length += r.count;
  while (length > o.input.length && !runs.empty()) {
    const std::uint64_t cut = std::min(runs.front().count, length - o.input.length);
    runs.front().count -= cut;
    length -= cut;
    if (runs.front().count == 0) runs.erase(runs.begin());
  }
  const std::uint64_t shortest = std::max(kMinLength, IsSimObjective(o.objective) ? o.n : 0);
  if (length < shortest || length > o.input.length) return false;
  for (Token t : s.suffix) AppendRun(runs, t, 1);
  c.x_runs = std::move(runs);
  return true;
}

bool XModerate(const SearchOptions& o, SearchCandidate& c, FuzzEngine& engine) {
  Split s = SplitX(c);
  std::map<Token, std::uint64_t> total;
  std::vector<Token> present;
  for (const Run& r : s.far) {
    if (total[r.token] == 0) present.push_back(r.token);
    total[r.token] += r.count;
  }
  if (present.empty()) return false;
  const Token token =
      present[static_cast<std::size_t>(Uniform(0, static_cast<int>(present.size()) - 1, engine))];
  const double target = Uniform(1, kModerateTotal, engine);
  const double factor = target / static_cast<double>(total[token]);
  bool kept = false;
  for (Run& r : s.far) {
    if (r.token != token) continue;
    r.count = static_cast<std::uint64_t>(std::llround(r.count * factor));
    kept = kept || r.count > 0;
  }
  if (!kept) {
    for (Run& r : s.far)
      if (r.token == token) r.count = 1, kept = true;  // the last run of the token stays
  }
  return Join(o, std::move(s), c);
}

bool XRare(const SearchOptions& o, SearchCandidate& c, FuzzEngine& engine) {
  Split s = SplitX(c);
  std::vector<Token> far = FromRuns(s.far);
  const int reach = static_cast<int>(std::min<std::size_t>(kRareReach, far.size()));
  const int back = Uniform(0, reach, engine);
  const auto token = static_cast<Token>(Uniform(0, c.g.alphabet - 1, engine));
  far.insert(far.end() - back, token);
  s.far = ToRuns(far);
  return Join(o, std::move(s), c);
}

bool XRunEdit(const SearchOptions& o, SearchCandidate& c, FuzzEngine& engine, bool remove) {
  Split s = SplitX(c);
  if (s.far.size() < 2) return false;
  const auto i = static_cast<std::size_t>(Uniform(0, static_cast<int>(s.far.size()) - 1, engine));
  static constexpr double kFactors[] = {0.25, 0.5, 2.0, 4.0};
  const double factor = kFactors[Uniform(0, 3, engine)];
  if (remove) {
    s.far.erase(s.far.begin() + static_cast<std::ptrdiff_t>(i));
  } else {
    s.far[i].count = std::max<std::uint64_t>(1, std::llround(s.far[i].count * factor));
  }
  return Join(o, std::move(s), c);
}

// A fresh spec seed; ¼ of the time also a fresh input family, ¼ fresh family parameters.
bool XReseed(SearchCandidate& c, FuzzEngine& engine) {
  c.input.seed = engine();
  if (Uniform(0, 3, engine) == 0) {
    static constexpr InputKind kKinds[] = {InputKind::kUniform,  InputKind::kDirichlet,
                                           InputKind::kSparse,   InputKind::kMarkov,
                                           InputKind::kPeriodic, InputKind::kStress};
    c.input.kind = kKinds[Uniform(0, 5, engine)];
  }
  if (Uniform(0, 3, engine) == 0) {
    static constexpr double kAlphas[] = {0.1, 0.3, 1.0, 3.0};
    static constexpr double kNoises[] = {0.01, 0.05, 0.1, 0.3};
    c.input.alpha = kAlphas[Uniform(0, 3, engine)];
    c.input.noise = kNoises[Uniform(0, 3, engine)];
    c.input.pattern = Uniform(2, 9, engine);
    c.input.parents = Uniform(1, 3, engine);
  }
  c.x_runs.clear();
  return true;
}

}  // namespace

bool ApplyXMove(ProposalKind kind, const SearchOptions& o, SearchCandidate& c, FuzzEngine& engine) {
  if (kind == ProposalKind::kXReseed) return XReseed(c, engine);
  if (c.x_runs.empty() && c.input.length > kMaxExplicit) return false;
  switch (kind) {
    case ProposalKind::kXModerate:
      return XModerate(o, c, engine);
    case ProposalKind::kXRare:
      return XRare(o, c, engine);
    case ProposalKind::kXRemoveRun:
      return XRunEdit(o, c, engine, true);
    default:
      return XRunEdit(o, c, engine, false);
  }
}

}  // namespace ltsim::moves
