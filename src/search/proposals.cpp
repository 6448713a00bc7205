// The search's moves: Gaussian steps, logit and suffix ties built by a minimum-norm rank-one
// edit of M_h, row copies, head rescaling, and edits of x (the pitfalls of docs/theory.md §2.4 as
// moves).
#include "ltsim/search/proposals.h"

#include <Eigen/QR>
#include <algorithm>
#include <array>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/discrete_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <map>

#include "ltsim/core/error.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/model/constants.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

constexpr std::uint64_t kMinLength = 10;         // as search.cpp's shortest x
constexpr std::uint64_t kMaxExplicit = 1000000;  // x edits read x into memory
constexpr double kSolveTolerance = 1e-9;         // |A w − b|∞ of an exact tie
constexpr int kModerateTotal = 64;               // x-moderate's largest new total
constexpr int kRareReach = 7;                    // x-rare inserts ≤ 7 tokens before the suffix

using Weights = std::array<double, kProposalKinds>;

int Uniform(int lo, int hi, FuzzEngine& engine) {
  return boost::random::uniform_int_distribution<int>(lo, hi)(engine);
}

bool Coin(FuzzEngine& engine) { return boost::random::bernoulli_distribution<double>(0.5)(engine); }

// ---- Logits a one-layer head sees at the last position of x (docs/theory.md §2.2). ----

// One attention slot of the query at T: a present far type or a suffix position t ≥ 0.
struct Slot {
  Vector key;
  double logit = 0.0;
  int type = -1;    // far type index, or −1
  int offset = -1;  // suffix distance t (0 = the query), or −1
};

struct HeadView {
  Vector query;
  std::vector<Slot> slots;
  double top = -INFINITY;      // a*: the largest logit of any slot
  double far_top = -INFINITY;  // the largest logit of a far slot
};

HeadView ViewHead(const Transformer& m, int head, const TypeCounts& c) {
  const Head& h = m.layers[0].heads[static_cast<std::size_t>(head)];
  const auto key = [&](int s, std::uint64_t position) -> Vector {
    return m.embedding.row(s).transpose() + m.positional.row(c.Residue(position)).transpose();
  };
  HeadView v;
  v.query = key(c.suffix.back(), c.length);
  const Vector mq = h.qk * v.query;
  for (int r = 0; r < c.period; ++r) {
    for (int s = 0; s < c.alphabet; ++s) {
      if (c.count(s, r) == 0) continue;
      Slot slot{m.embedding.row(s).transpose() + m.positional.row(r).transpose(), 0,
                c.TypeIndex(s, r)};
      slot.logit = slot.key.dot(mq);
      v.far_top = std::max(v.far_top, slot.logit);
      v.slots.push_back(std::move(slot));
    }
  }
  const int m_suffix = static_cast<int>(c.suffix.size());
  for (int t = 0; t < m_suffix; ++t) {
    Slot slot{key(c.suffix[m_suffix - 1 - t], c.length - t), 0, -1, t};
    slot.logit = slot.key.dot(mq) + h.bias[t];
    v.slots.push_back(std::move(slot));
  }
  for (const Slot& s : v.slots) v.top = std::max(v.top, s.logit);
  return v;
}

bool AtTop(const Slot& s, const HeadView& v, double theta) { return s.logit >= v.top - theta; }

// M_h += δ·w qᵀ/‖q‖² with w the minimum-norm solution of k_j·w = 0 for the slots at a*
// (other than `target`) and k_target·w = 1: the target's logit moves to `value`, the slots at
// a* keep theirs. False when the constraints have no exact solution (e.g. equal keys).
bool SetLogit(Transformer& m, int head, const HeadView& v, std::size_t target, double value,
              double theta) {
  std::vector<const Vector*> rows;
  for (std::size_t i = 0; i < v.slots.size(); ++i)
    if (i != target && AtTop(v.slots[i], v, theta)) rows.push_back(&v.slots[i].key);
  rows.push_back(&v.slots[target].key);
  Matrix a(static_cast<Eigen::Index>(rows.size()), v.query.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    a.row(static_cast<Eigen::Index>(i)) = rows[i]->transpose();
  Vector b = Vector::Zero(a.rows());
  b(b.size() - 1) = 1.0;
  const double qq = v.query.squaredNorm();
  if (!(qq > 0)) return false;
  const Vector w = a.completeOrthogonalDecomposition().solve(b);
  if (!w.allFinite() || (a * w - b).lpNorm<Eigen::Infinity>() > kSolveTolerance) return false;
  const double delta = value - v.slots[target].logit;
  m.layers[0].heads[static_cast<std::size_t>(head)].qk += (delta / qq) * w * v.query.transpose();
  return true;
}

TypeCounts Counts(const Transformer& m, const Source& x) {
  return CountTypes(x, m.alphabet, m.period, m.locality);
}

// ---- Model moves. ----

template <typename Derived>
void GaussianStep(Eigen::PlainObjectBase<Derived>& m, double sigma, double grid,
                  FuzzEngine& engine) {
  boost::random::normal_distribution<double> normal(0.0, 1.0);
  for (Eigen::Index i = 0; i < m.size(); ++i) {
    const double z = sigma * normal(engine);
    m.data()[i] += grid > 0 ? grid * std::round(z / grid) : z;
  }
}

void GaussianStep(Transformer& model, double sigma, double grid, FuzzEngine& engine) {
  GaussianStep(model.embedding, sigma, grid, engine);
  GaussianStep(model.positional, sigma, grid, engine);
  for (Layer& layer : model.layers) {
    for (Head& head : layer.heads) {
      GaussianStep(head.qk, sigma, grid, engine);
      GaussianStep(head.ov, sigma, grid, engine);
    }
    if (layer.mlp) {
      GaussianStep(layer.mlp->in, sigma, grid, engine);
      GaussianStep(layer.mlp->out, sigma, grid, engine);
    }
  }
  GaussianStep(model.readout_weight, sigma, grid, engine);
  for (Layer& layer : model.layers) {
    for (Head& head : layer.heads) GaussianStep(head.bias, sigma, grid, engine);
    if (layer.mlp) GaussianStep(layer.mlp->in_bias, sigma, grid, engine);
  }
  GaussianStep(model.readout_bias, sigma, grid, engine);
}

int Heads(const SearchCandidate& c) { return static_cast<int>(c.g.layers[0].heads.size()); }

double GridStep(const SearchOptions& o) { return o.step_grid > 0 ? o.step_grid : 0.125; }

// The models a step moves: g, and f with perturb_f.
std::vector<Transformer*> Stepped(const SearchOptions& o, SearchCandidate& c) {
  if (o.perturb_f) return {&c.g, &c.f};
  return {&c.g};
}

bool QkStep(const SearchOptions& o, SearchCandidate& c, FuzzEngine& engine) {
  if (Heads(c) == 0) return false;
  const int h = Uniform(0, Heads(c) - 1, engine);
  for (Transformer* m : Stepped(o, c)) {
    Head& head = m->layers[0].heads[static_cast<std::size_t>(h)];
    GaussianStep(head.qk, o.step, o.step_grid, engine);
    GaussianStep(head.bias, o.step, o.step_grid, engine);
  }
  return true;
}

// Ties (or unties) the far type `type` in both models, each from its own logits.
bool TieType(SearchCandidate& c, const Source& x, int head, int type, bool tie, double drop) {
  bool changed = false;
  for (Transformer* m : {&c.g, &c.f}) {
    const HeadView v = ViewHead(*m, head, Counts(*m, x));
    for (std::size_t i = 0; i < v.slots.size(); ++i) {
      if (v.slots[i].type != type || AtTop(v.slots[i], v, m->tie_tolerance) == tie) continue;
      const double value = tie ? v.top : v.top - drop;
      changed = SetLogit(*m, head, v, i, value, m->tie_tolerance) || changed;
    }
  }
  return changed;
}

bool LogitMove(const SearchOptions& o, SearchCandidate& c, FuzzEngine& engine, bool tie) {
  if (Heads(c) == 0) return false;
  const auto x = CandidateInput(c);
  const int h = Uniform(0, Heads(c) - 1, engine);
  const HeadView v = ViewHead(c.g, h, Counts(c.g, *x));
  std::vector<int> types;  // far types not at a* (tie) or at a* (drop)
  for (const Slot& s : v.slots)
    if (s.type >= 0 && AtTop(s, v, c.g.tie_tolerance) != tie) types.push_back(s.type);
  if (types.empty()) return false;
  const int type =
      types[static_cast<std::size_t>(Uniform(0, static_cast<int>(types.size()) - 1, engine))];
  const double drop = GridStep(o) * Uniform(1, 4, engine);
  return TieType(c, *x, h, type, tie, drop);
}

bool SuffixTie(SearchCandidate& c, FuzzEngine& engine) {
  if (Heads(c) == 0) return false;
  const auto x = CandidateInput(c);
  const int h = Uniform(0, Heads(c) - 1, engine);
  const int tau = std::min(c.f.locality, c.g.locality);
  const int t = Uniform(0, tau, engine);
  bool changed = false;
  for (Transformer* m : {&c.g, &c.f}) {
    const HeadView v = ViewHead(*m, h, Counts(*m, *x));
    if (!std::isfinite(v.far_top)) continue;
    for (const Slot& s : v.slots) {
      if (s.offset != t || std::abs(s.logit - v.far_top) <= m->tie_tolerance) continue;
      m->layers[0].heads[static_cast<std::size_t>(h)].bias[t] += v.far_top - s.logit;
      changed = true;
    }
  }
  return changed;
}

bool CopyRow(SearchCandidate& c, FuzzEngine& engine) {
  const int alphabet = c.g.alphabet;
  if (alphabet < 2 || c.f.alphabet != alphabet) return false;
  const int a = Uniform(0, alphabet - 1, engine);
  const int b = (a + Uniform(1, alphabet - 1, engine)) % alphabet;
  const bool copy = Coin(engine);
  for (Transformer* m : {&c.g, &c.f}) {
    if (copy) {
      m->embedding.row(b) = m->embedding.row(a);
    } else {
      m->embedding.row(a).swap(m->embedding.row(b));
    }
  }
  return true;
}

// Half the time one head's ov, or the readout W, of both models ×2^k, k uniform in ±{1, 2, 3}
// (L(f) is linear in each); half the time both readouts scaled by one factor so that
// max(L(f), L(g)) = ε·2^u, u uniform in {−1, …, 6}: needed-length divides by the L² of
// frequency-length while the needed length grows only like L, so its maximum lies near L ~ ε.
bool Rescale(const SearchOptions& o, SearchCandidate& c, FuzzEngine& engine) {
  if (c.f.layers[0].heads.size() != c.g.layers[0].heads.size()) return false;
  if (Coin(engine)) {
    const double l = std::max(LipschitzConstant(c.f), LipschitzConstant(c.g));
    const double factor = o.eps * std::exp2(Uniform(-1, 6, engine)) / l;
    if (!(l > 0) || !std::isfinite(factor)) return false;
    c.f.readout_weight *= factor;
    c.g.readout_weight *= factor;
    return true;
  }
  const int target = Uniform(0, Heads(c), engine);  // Heads(c) = the readout
  const int k = Uniform(1, 3, engine);
  const double factor = Coin(engine) ? std::exp2(k) : std::exp2(-k);
  for (Transformer* m : {&c.g, &c.f}) {
    if (target == Heads(c)) {
      m->readout_weight *= factor;
    } else {
      m->layers[0].heads[static_cast<std::size_t>(target)].ov *= factor;
    }
  }
  return true;
}

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
  const std::uint64_t shortest =
      std::max(kMinLength, o.objective == "sim-ratio" || o.objective == "sim-over-eta" ? o.n : 0);
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

}  // namespace

const char* ProposalKindName(ProposalKind kind) {
  static const char* const kNames[] = {"gaussian",   "qk-step",      "logit-tie",   "logit-drop",
                                       "suffix-tie", "copy-row",     "rescale",     "x-moderate",
                                       "x-rare",     "x-remove-run", "x-run-count", "x-reseed"};
  return kNames[static_cast<int>(kind)];
}

std::vector<double> ProposalWeights(const std::string& proposals, bool search_x) {
  Weights w{};
  if (proposals == "gaussian") {
    w[0] = 1;
  } else if (proposals == "mixed" || proposals == "logits") {
    w = {3, 1, 3, 1, 2, 1, 1, 2, 1, 1, 1, 1};
    if (proposals == "logits") {
      for (ProposalKind k :
           {ProposalKind::kGaussian, ProposalKind::kCopyRow, ProposalKind::kRescale})
        w[static_cast<int>(k)] = 0;
    }
    if (!search_x) std::fill(w.begin() + static_cast<int>(ProposalKind::kXModerate), w.end(), 0.0);
  } else {
    throw InputError("--proposals: unknown '" + proposals + "' (known: mixed, gaussian, logits)");
  }
  return {w.begin(), w.end()};
}

ProposalKind DrawProposal(const std::vector<double>& weights, FuzzEngine& engine) {
  boost::random::discrete_distribution<int, double> law(weights.begin(), weights.end());
  return static_cast<ProposalKind>(law(engine));
}

bool ApplyProposal(ProposalKind kind, const SearchOptions& o, SearchCandidate& c,
                   FuzzEngine& engine) {
  switch (kind) {
    case ProposalKind::kGaussian:
      for (Transformer* m : Stepped(o, c)) GaussianStep(*m, o.step, o.step_grid, engine);
      return true;
    case ProposalKind::kQkStep:
      return QkStep(o, c, engine);
    case ProposalKind::kLogitTie:
      return LogitMove(o, c, engine, true);
    case ProposalKind::kLogitDrop:
      return LogitMove(o, c, engine, false);
    case ProposalKind::kSuffixTie:
      return SuffixTie(c, engine);
    case ProposalKind::kCopyRow:
      return CopyRow(c, engine);
    case ProposalKind::kRescale:
      return Rescale(o, c, engine);
    default:
      return ApplyXMove(kind, o, c, engine);
  }
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
