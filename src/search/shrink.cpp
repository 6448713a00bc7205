// Greedy shrinking of a search witness: fewer heads, smaller width, smaller norms, shorter x,
// each step kept only while the objective stays at or above the reported value.
#include <algorithm>
#include <cmath>

#include "ltsim/search/proposals.h"
#include "ltsim/search/search.h"

namespace ltsim {
namespace {

constexpr double kShrinkFactor = 0.9;
constexpr int kMaxScalings = 50;
constexpr std::uint64_t kMinLength = 10;
constexpr int kMaxRunAttempts = 64;  // x edits tried per pass (each costs one evaluation)

Matrix DropRow(const Matrix& m, Eigen::Index k) {
  Matrix out(m.rows() - 1, m.cols());
  out.topRows(k) = m.topRows(k);
  out.bottomRows(m.rows() - k - 1) = m.bottomRows(m.rows() - k - 1);
  return out;
}

Matrix DropCol(const Matrix& m, Eigen::Index k) { return DropRow(m.transpose(), k).transpose(); }

// Projects residual coordinate k out of a model: the model restricted to the other d − 1
// coordinates (E, P, W lose column k; M_h, O_h lose row and column k; the MLP's A its column,
// B its row).
void DropCoordinate(Transformer& m, Eigen::Index k) {
  m.embedding = DropCol(m.embedding, k);
  m.positional = DropCol(m.positional, k);
  for (Layer& layer : m.layers) {
    for (Head& h : layer.heads) {
      h.qk = DropCol(DropRow(h.qk, k), k);
      h.ov = DropCol(DropRow(h.ov, k), k);
    }
    if (layer.mlp) {
      layer.mlp->in = DropCol(layer.mlp->in, k);
      layer.mlp->out = DropRow(layer.mlp->out, k);
    }
  }
  m.readout_weight = DropCol(m.readout_weight, k);
  --m.width;
}

void Scale(Transformer& m, double factor) {
  ForEachWeightArray(m, [factor](auto& array) { array *= factor; });
}

std::uint64_t Length(const std::vector<Run>& runs) {
  std::uint64_t t = 0;
  for (const Run& r : runs) t += r.count;
  return t;
}

// Index of the first run that overlaps the last `keep` tokens: runs before it are far.
std::size_t FarRuns(const std::vector<Run>& runs, std::uint64_t keep) {
  std::uint64_t tail = 0;
  std::size_t i = runs.size();
  while (i > 0 && tail < keep) tail += runs[--i].count;
  return i;
}

class Shrinker {
 public:
  Shrinker(const SearchOptions& o, const SearchCandidate& best) : o_(o), floor_(best.objective) {
    s_.candidate = best;
  }

  ShrinkResult Go() {
    if (!std::isfinite(floor_)) return s_;  // nothing valid was found: no value to keep above
    Heads();
    Widths();
    while (s_.scalings < kMaxScalings && Attempt([](SearchCandidate& t) {
             Scale(t.f, kShrinkFactor);
             Scale(t.g, kShrinkFactor);
             return true;
           }))
      ++s_.scalings;
    String();
    return s_;
  }

 private:
  // Tries `change` on a copy; keeps it when the objective stays ≥ the reported value.
  template <typename Change>
  bool Attempt(Change change) {
    SearchCandidate trial = s_.candidate;
    if (!change(trial)) return false;
    trial.objective = EvaluateCandidate(o_, trial);
    if (!(trial.objective >= floor_)) return false;
    s_.candidate = std::move(trial);
    return true;
  }

  // f and g of a perturbed pair have the same heads; head h goes from both.
  void Heads() {
    SearchCandidate& c = s_.candidate;
    for (int h = static_cast<int>(c.f.layers[0].heads.size()) - 1; h >= 0; --h) {
      if (c.f.layers[0].heads.size() < 2 || c.g.layers[0].heads.size() < 2) break;
      if (h >= static_cast<int>(c.g.layers[0].heads.size())) continue;
      s_.heads_removed += Attempt([h](SearchCandidate& t) {
        t.f.layers[0].heads.erase(t.f.layers[0].heads.begin() + h);
        t.g.layers[0].heads.erase(t.g.layers[0].heads.begin() + h);
        return true;
      });
    }
  }

  void Widths() {
    for (int k = s_.candidate.f.width - 1; k >= 0; --k) {
      if (s_.candidate.f.width < 2 || s_.candidate.f.width != s_.candidate.g.width) break;
      s_.widths_removed += Attempt([k](SearchCandidate& t) {
        DropCoordinate(t.f, k);
        DropCoordinate(t.g, k);
        return true;
      });
    }
  }

  std::uint64_t Shortest() const {
    return std::max(kMinLength, IsSimObjective(o_.objective) ? o_.n : std::uint64_t{0});
  }

  std::uint64_t Keep() const {
    return static_cast<std::uint64_t>(std::max(s_.candidate.f.locality, s_.candidate.g.locality) +
                                      1);
  }

  // Tries one edit of the explicit runs (made explicit from the spec if needed).
  template <typename Edit>
  bool EditRuns(Edit edit) {
    return Attempt([&](SearchCandidate& t) {
      std::vector<ltsim::Run> runs = CandidateRuns(t);
      if (!edit(runs)) return false;
      std::vector<ltsim::Run> merged;
      for (const ltsim::Run& r : runs)
        if (r.count > 0) AppendRun(merged, r.token, r.count);
      if (Length(merged) < Shortest()) return false;
      t.x_runs = std::move(merged);
      return true;
    });
  }

  void String() {
    SearchCandidate& c = s_.candidate;
    if (c.x_runs.empty()) {
      while (c.input.length / 2 >= Shortest() && Attempt([](SearchCandidate& t) {
               t.input.length /= 2;
               return true;
             }))
        ++s_.halvings;
    }
    while (EditRuns([&](std::vector<ltsim::Run>& runs) {
      const std::size_t far = FarRuns(runs, Keep());
      const std::uint64_t cut = (Length(runs) - Keep()) / 2;
      if (far == 0 || cut == 0) return false;
      std::uint64_t left = cut;
      for (std::size_t i = 0; i < far && left > 0; ++i) {
        const std::uint64_t d = std::min(left, runs[i].count);
        runs[i].count -= d;
        left -= d;
      }
      return true;
    }))
      ++s_.prefix_cuts;
    int attempts = 0;
    for (std::size_t i = FarRuns(CandidateRuns(c), Keep());
         i-- > 0 && attempts < kMaxRunAttempts;) {
      ++attempts;
      s_.runs_removed += EditRuns([&](std::vector<ltsim::Run>& runs) {
        if (i >= FarRuns(runs, Keep())) return false;
        runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(i));
        return true;
      });
    }
    attempts = 0;
    for (std::size_t i = FarRuns(CandidateRuns(c), Keep());
         i-- > 0 && attempts < kMaxRunAttempts;) {
      ++attempts;
      s_.runs_shortened += EditRuns([&](std::vector<ltsim::Run>& runs) {
        if (i >= FarRuns(runs, Keep()) || runs[i].count < 2) return false;
        runs[i].count /= 2;
        return true;
      });
    }
  }

  const SearchOptions& o_;
  const double floor_;
  ShrinkResult s_;
};

}  // namespace

ShrinkResult Shrink(const SearchOptions& options, const SearchCandidate& best) {
  return Shrinker(options, best).Go();
}

}  // namespace ltsim
