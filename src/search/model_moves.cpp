// The search's model moves: Gaussian steps, logit and suffix ties built by a minimum-norm
// rank-one edit of M_h, row copies and head rescaling (the pitfalls of docs/theory.md §2.4 as
// moves).
#include <Eigen/QR>
#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <map>

#include "ltsim/core/error.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/model/constants.h"
#include "ltsim/strings/sources.h"
#include "search/moves.h"

namespace ltsim::moves {
namespace {

constexpr double kSolveTolerance = 1e-9;  // |A w − b|∞ of an exact tie

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

}  // namespace

bool ApplyModelMove(ProposalKind kind, const SearchOptions& o, SearchCandidate& c,
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
      CheckFailed(__FILE__, __LINE__, "not a model move");
  }
}

}  // namespace ltsim::moves
