// Certified bounds on a two-layer pair's gap over sets of paths of the node DAG
// (docs/theory.md §11.5): materialised sets, parametric dynamic programmes, the ratio and
// pairing bounds, path counts, enumeration and splits.
#include "threshold/path_bound.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <utility>

#include "eval/layer_math.h"
#include "ltsim/core/error.h"
#include "threshold/path_envelope.h"

namespace ltsim::threshold {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kUnit = std::numeric_limits<double>::epsilon() / 2;  // u = 2^-53
// The largest slot number: successors and parents are stored in 32 bits.
constexpr std::uint64_t kMaxSlots =
    static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max());

double Frobenius(const Matrix& m) { return m.size() == 0 ? 0.0 : m.norm(); }

// ---- The pair ---------------------------------------------------------------------------------

// R₀ = max ‖E_s + P_r‖, the a priori bound of R₁ = max ‖y¹‖ (docs/model.md §4.7) and of the
// first layer's logits, and δ_y: a bound on the rounding of each entry of y¹ as
// FirstLayerOutput computes it (docs/theory.md §11.5, "Rounding").
void FirstLayerBounds(const Transformer& m, std::uint64_t max_length, double& r1, double& delta) {
  double r0 = 0.0;
  for (int s = 0; s < m.alphabet; ++s)
    for (int r = 0; r < m.period; ++r) r0 = std::max(r0, InputVector(m, s, r).norm());
  const Layer& layer = m.layers.front();
  double o_sum = 0.0, logits = 0.0, phi = 0.0;
  for (const Head& h : layer.heads) {
    o_sum += Frobenius(h.ov);
    logits = std::max(logits, Frobenius(h.qk) * r0 * r0);
    phi = std::max(phi, h.bias.size() ? h.bias.cwiseAbs().maxCoeff() : 0.0);
  }
  const double beta = layer.bias_scaling == BiasScaling::kLog
                          ? std::log(static_cast<double>(std::max<std::uint64_t>(max_length, 2)))
                          : 1.0;
  logits += phi * beta;
  const double u1 = r0 * (1.0 + o_sum);
  double mlp = 0.0;
  int neurons = 0;
  if (layer.mlp) {
    neurons = static_cast<int>(layer.mlp->in.rows());
    mlp = Frobenius(layer.mlp->out) * (Frobenius(layer.mlp->in) * u1 + layer.mlp->in_bias.norm());
  }
  r1 = u1 + mlp;
  // Each entry of y¹ is a sum of O(d + D + τ + m) rounded terms of size ≤ R₁, and each
  // softmax weight exp(a − a*) carries the logit's rounding (≤ d·u·|a|) relatively: the
  // rounding is ≤ c·u·(1 + |a|_max)·R₁ with c = d + D + τ + m + 8; δ_y takes 8·c.
  const double c = m.width + m.types() + m.locality + neurons + 8;
  delta = 8.0 * c * kUnit * (1.0 + logits) * (r1 + 1.0);
}

}  // namespace

PathPair::PathPair(const Transformer& f, const Transformer& g, const PathDag& dag) : dag_(dag) {
  const Transformer* models[2] = {&f, &g};
  const bool shared = SameFirstLayer(f, g);
  for (int s = 0; s < 2; ++s) {
    Side& side = sides_[s];
    side.model = models[s];
    side.layer = models[s]->layers.size() > 1 ? &models[s]->layers[1] : nullptr;
    side.table = shared ? 0 : s;
    side.heads = side.layer ? static_cast<int>(side.layer->heads.size()) : 0;
    side.neurons = side.layer && side.layer->mlp ? static_cast<int>(side.layer->mlp->in.rows()) : 0;
    side.outputs = models[s]->outputs();
    side.width = models[s]->width;
    if (side.neurons > 0) side.WB = models[s]->readout_weight * side.layer->mlp->out;
    FirstLayerBounds(*models[s], std::max<std::uint64_t>(2, 1u << 20), side.y_bound, side.y_error);
    for (int h = 0; h < side.heads; ++h) heads_.emplace_back(s, h);
  }
  tables_.push_back(std::make_unique<FirstLayerTable>(f, dag));
  if (!shared) tables_.push_back(std::make_unique<FirstLayerTable>(g, dag));
}

void PathPair::Extend() {
  for (auto& t : tables_) t->Extend();
}

double PathGap(const Vector& a, const Vector& b) {
  if (!a.allFinite() || !b.allFinite()) return kInf;
  return (a - b).cwiseAbs().maxCoeff();
}

void PathOutputs(const PathPair& pair, const std::vector<std::uint64_t>& nodes, Vector& f,
                 Vector& g) {
  const std::uint64_t T = nodes.size();
  for (int s = 0; s < 2; ++s) {
    const PathPair::Side& side = pair.side(s);
    const Transformer& model = *side.model;
    const int d = side.width;
    const Eigen::Map<const Vector> last(pair.y(s, nodes.back()), d);
    Vector u = last;
    if (side.layer) {
      const Layer& layer = *side.layer;
      const double beta = BiasScale(layer.bias_scaling, static_cast<double>(T));
      std::vector<double> logits(T);
      for (const Head& head : layer.heads) {
        const Vector mq = head.qk * last;
        double a_max = -kInf;
        for (std::uint64_t j = 0; j < T; ++j) {
          const Eigen::Map<const Vector> key(pair.y(s, nodes[j]), d);
          const std::uint64_t t = T - 1 - j;
          logits[j] =
              Logit(Vector(key), mq, head, beta,
                    t <= static_cast<std::uint64_t>(model.locality) ? static_cast<int>(t) : -1);
          a_max = std::max(a_max, logits[j]);
        }
        Vector acc = Vector::Zero(d);
        double total = 0.0;
        for (std::uint64_t j = 0; j < T; ++j) {
          const double w =
              AttentionWeight(layer, model.tie_tolerance, logits[j], a_max, static_cast<double>(T));
          if (w == 0.0) continue;
          acc += w * Eigen::Map<const Vector>(pair.y(s, nodes[j]), d);
          total += w;
        }
        u += head.ov * (acc / total);
      }
      u = ApplyMlp(layer, u);
    }
    (s == 0 ? f : g) = model.readout_weight * u + model.readout_bias;
  }
}

bool PathInSet(const PathPair& pair, const PathSet& set, const std::vector<std::uint64_t>& nodes) {
  const PathDag& dag = pair.dag();
  const std::uint64_t T = nodes.size();
  if (T < set.length || T > set.length_hi) return false;
  const int D = dag.types();
  auto local = [&](std::uint64_t j) { return nodes[j - 1] - dag.layer(j).offset; };
  if (local(T) % dag.layer(T).windows != set.final_window) return false;
  auto in_box = [&](std::uint64_t j, const std::vector<std::int64_t>& lo,
                    const std::vector<std::int64_t>& hi) {
    const PathDag::Layer& L = dag.layer(j);
    const std::uint64_t v = local(j) / L.windows;
    for (int k = 0; k < D; ++k) {
      const std::int64_t n = L.counts[v * D + k];
      if (n < lo[k] || n > hi[k]) return false;
    }
    return true;
  };
  if (!in_box(T, set.final_lo, set.final_hi)) return false;
  for (const CountBox& b : set.waypoints)
    if (b.layer <= T && !in_box(b.layer, b.lo, b.hi)) return false;
  const auto& heads = pair.heads();
  for (std::size_t i = 0; i < heads.size() && i < set.astar.size(); ++i) {
    const auto [s, h] = heads[i];
    const PathPair::Side& side = pair.side(s);
    if (!(set.astar[i].first > -kInf) && !(set.astar[i].second < kInf)) continue;
    const Head& head = side.layer->heads[h];
    const int d = side.width;
    const Vector mq = head.qk * Eigen::Map<const Vector>(pair.y(s, nodes.back()), d);
    const double beta = BiasScale(side.layer->bias_scaling, static_cast<double>(T));
    double a_max = -kInf;
    for (std::uint64_t j = 0; j < T; ++j) {
      const std::uint64_t t = T - 1 - j;
      a_max = std::max(
          a_max,
          Logit(Vector(Eigen::Map<const Vector>(pair.y(s, nodes[j]), d)), mq, head, beta,
                t <= static_cast<std::uint64_t>(side.model->locality) ? static_cast<int>(t) : -1));
    }
    if (a_max < set.astar[i].first || a_max > set.astar[i].second) return false;
  }
  return true;
}

std::vector<std::uint64_t> PathNodes(const PathDag& dag, const std::vector<Token>& x) {
  std::vector<std::uint64_t> nodes(x.size());
  std::uint32_t node = x[0];
  nodes[0] = dag.layer(1).offset + node;
  for (std::size_t k = 1; k < x.size(); ++k) {
    node = dag.Successor(k, node, x[k]);
    nodes[k] = dag.layer(k + 1).offset + node;
  }
  return nodes;
}

namespace {

// ---- Materialised sets ------------------------------------------------------------------------

// The nodes of a set, compactly: layer j's nodes are [begin[j − 1], begin[j]), each the product
// of the layer's alive count vectors and allowed windows; succ[n·S + s] is the successor by
// token s, −1 when it is not in the set. A path of length T weighs its last τ_L + 1 keys with
// T's local bias (τ_L the largest locality of a two-layer model), so every quantity of a node
// has roles (docs/theory.md §11.5, "Lengths"): the main role (a key at least τ_L + 1 positions
// before the end, layers ≤ main_layers) indexed by the node itself, and one role per length T
// whose tail (layers T − τ_L … T) holds it, in T's block of slots after the n nodes.
struct Compact {
  std::uint64_t T_lo = 0, T_hi = 0, tau = 0;
  int S = 0;
  bool empty = false;
  std::vector<std::uint64_t> begin;   // T_hi + 1 entries, begin[0] = 0
  std::vector<std::uint64_t> global;  // node → global node index
  std::vector<std::uint32_t> local;   // node → index within its layer
  std::vector<std::int32_t> succ;
  std::vector<char> final_ok;                // node: the last node of a path of the set
  std::vector<std::int64_t> box_lo, box_hi;  // [j·D + κ] per-layer boxes (layers with counts)
  std::vector<std::uint32_t> alive_vectors;  // per layer, the number of alive count vectors
  std::uint64_t main_layers = 0;             // T_hi − τ_L − 1 (layers used in the main role)
  std::vector<std::uint64_t> tail_first;     // [T − T_lo]: the tail's first layer
  std::vector<std::uint64_t> tail_offset;    // [T − T_lo]: its first slot
  std::vector<std::uint64_t> node_of;        // slot → node
  std::uint64_t slots = 0;

  std::uint64_t n() const { return global.size(); }
  // The slot of node k in T's tail.
  std::uint64_t TailSlot(std::uint64_t T, std::uint64_t k) const {
    return tail_offset[T - T_lo] + (k - begin[tail_first[T - T_lo] - 1]);
  }
  // The layer of node k.
  std::uint64_t LayerOf(std::uint64_t k) const {
    return static_cast<std::uint64_t>(std::upper_bound(begin.begin(), begin.end(), k) -
                                      begin.begin());
  }
};

std::uint64_t ClassSizeOf(std::uint64_t far, int period, int r) {
  const std::uint64_t delta = static_cast<std::uint64_t>(period);
  return far / delta + (r >= 1 && static_cast<std::uint64_t>(r) <= far % delta ? 1 : 0);
}

// Whether a window of layer j agrees with the final window of length T on the positions
// they share.
bool AgreesWithFinal(const PathDag& dag, std::uint64_t j, std::uint32_t w, std::uint64_t T,
                     std::uint32_t final_window) {
  const std::uint64_t m = static_cast<std::uint64_t>(dag.view().locality) + 1;
  const std::uint64_t lj = std::min(j, m), lT = std::min(T, m);
  const std::uint64_t start_j = j - lj + 1, start_T = T - lT + 1;
  if (j < start_T) return true;
  const std::uint32_t S = static_cast<std::uint32_t>(dag.view().alphabet);
  // Token at position p of a window code of length l starting at `start`: digit l − 1 − (p −
  // start).
  auto token = [&](std::uint32_t code, std::uint64_t l, std::uint64_t start, std::uint64_t p) {
    const std::uint64_t shift = l - 1 - (p - start);
    for (std::uint64_t k = 0; k < shift; ++k) code /= S;
    return code % S;
  };
  for (std::uint64_t p = std::max(start_j, start_T); p <= j; ++p)
    if (token(w, lj, start_j, p) != token(final_window, lT, start_T, p)) return false;
  return true;
}

std::uint64_t TailLocality(const PathPair& pair) {
  std::uint64_t tau = 0;
  for (int s = 0; s < 2; ++s)
    if (pair.side(s).layer)
      tau = std::max(tau, static_cast<std::uint64_t>(pair.side(s).model->locality));
  return tau;
}

Compact Materialise(const PathPair& pair, const PathSet& set) {
  const PathDag& dag = pair.dag();
  Compact c;
  const std::uint64_t T_lo = set.length, T_hi = set.length_hi;
  const int S = dag.view().alphabet, D = dag.types(), period = dag.view().period;
  const std::uint64_t m = static_cast<std::uint64_t>(dag.view().locality) + 1;
  c.T_lo = T_lo;
  c.T_hi = T_hi;
  c.S = S;
  c.tau = TailLocality(pair);
  // Per-layer boxes of the layers with far counts (j > m), propagated along the chain; the
  // final box at T_hi bounds every layer of every length (counts never decrease, and a path of
  // length T < T_hi gains fewer counts than one of T_hi).
  c.box_lo.assign((T_hi + 1) * D, 0);
  c.box_hi.assign((T_hi + 1) * D, 0);
  for (std::uint64_t j = m + 1; j <= T_hi; ++j)
    for (int k = 0; k < D; ++k)
      c.box_hi[j * D + k] = static_cast<std::int64_t>(ClassSizeOf(j - m, period, k / S));
  auto apply = [&](std::uint64_t j, const std::vector<std::int64_t>& lo,
                   const std::vector<std::int64_t>& hi) {
    if (j <= m) return;
    for (int k = 0; k < D; ++k) {
      c.box_lo[j * D + k] = std::max(c.box_lo[j * D + k], lo[k]);
      c.box_hi[j * D + k] = std::min(c.box_hi[j * D + k], hi[k]);
    }
  };
  apply(T_hi, set.final_lo, set.final_hi);
  for (const CountBox& b : set.waypoints) apply(b.layer, b.lo, b.hi);
  for (std::uint64_t j = m + 1; j < T_hi; ++j) {
    const int r = static_cast<int>((j + 1 - m) % static_cast<std::uint64_t>(period));
    for (int k = 0; k < D; ++k) {
      const std::int64_t inc = k / S == r ? 1 : 0;
      c.box_lo[(j + 1) * D + k] = std::max(c.box_lo[(j + 1) * D + k], c.box_lo[j * D + k]);
      c.box_hi[(j + 1) * D + k] = std::min(c.box_hi[(j + 1) * D + k], c.box_hi[j * D + k] + inc);
    }
  }
  for (std::uint64_t j = T_hi - 1; j > m; --j) {
    const int r = static_cast<int>((j + 1 - m) % static_cast<std::uint64_t>(period));
    for (int k = 0; k < D; ++k) {
      const std::int64_t inc = k / S == r ? 1 : 0;
      c.box_hi[j * D + k] = std::min(c.box_hi[j * D + k], c.box_hi[(j + 1) * D + k]);
      c.box_lo[j * D + k] = std::max(c.box_lo[j * D + k], c.box_lo[(j + 1) * D + k] - inc);
    }
  }
  for (std::uint64_t j = m + 1; j <= T_hi; ++j)
    for (int k = 0; k < D; ++k)
      if (c.box_lo[j * D + k] > c.box_hi[j * D + k]) {
        c.empty = true;
        return c;
      }
  // Alive count vectors and windows, layer by layer; successors into the next layer.
  c.begin.assign(T_hi + 1, 0);
  c.alive_vectors.assign(T_hi + 1, 0);
  std::vector<std::int32_t> vpos, wpos, next_vpos, next_wpos;
  std::vector<std::uint32_t> vlist, wlist, next_vlist, next_wlist;
  auto layer_sets = [&](std::uint64_t j, std::vector<std::uint32_t>& vl,
                        std::vector<std::int32_t>& vp, std::vector<std::uint32_t>& wl,
                        std::vector<std::int32_t>& wp) {
    const PathDag::Layer& L = dag.layer(j);
    vl.clear();
    wl.clear();
    vp.assign(L.vectors, -1);
    wp.assign(L.windows, -1);
    for (std::uint32_t v = 0; v < L.vectors; ++v) {
      bool in = true;
      if (j > m)
        for (int k = 0; k < D && in; ++k) {
          const std::int64_t n = L.counts[static_cast<std::size_t>(v) * D + k];
          in = n >= c.box_lo[j * D + k] && n <= c.box_hi[j * D + k];
        }
      if (in) {
        vp[v] = static_cast<std::int32_t>(vl.size());
        vl.push_back(v);
      }
    }
    for (std::uint32_t w = 0; w < L.windows; ++w) {
      // Some length of the set ends far enough beyond j, or agrees with j's window.
      bool ok = T_hi >= j + m;
      for (std::uint64_t T = std::max(j, T_lo); T <= T_hi && !ok; ++T)
        ok = AgreesWithFinal(dag, j, w, T, set.final_window);
      if (ok) {
        wp[w] = static_cast<std::int32_t>(wl.size());
        wl.push_back(w);
      }
    }
  };
  layer_sets(1, vlist, vpos, wlist, wpos);
  for (std::uint64_t j = 1; j <= T_hi; ++j) {
    const PathDag::Layer& L = dag.layer(j);
    const std::uint64_t base = c.global.size();
    if (j > 1) c.begin[j - 1] = base;
    c.alive_vectors[j] = static_cast<std::uint32_t>(vlist.size());
    const bool final_layer = j >= T_lo;
    for (std::uint32_t v : vlist) {
      bool in_final = final_layer;
      if (final_layer && j > m)
        for (int k = 0; k < D && in_final; ++k) {
          const std::int64_t n = L.counts[static_cast<std::size_t>(v) * D + k];
          in_final = n >= set.final_lo[k] && n <= set.final_hi[k];
        }
      for (std::uint32_t w : wlist) {
        c.global.push_back(L.offset + static_cast<std::uint64_t>(v) * L.windows + w);
        c.local.push_back(v * L.windows + w);
        c.final_ok.push_back(in_final && w == set.final_window);
      }
    }
    if (j == T_hi) break;
    layer_sets(j + 1, next_vlist, next_vpos, next_wlist, next_wpos);
    const std::uint64_t next_base = c.global.size();
    const std::uint64_t nw = next_wlist.size();
    LTSIM_CHECK(next_base + next_vlist.size() * nw <= kMaxSlots);
    c.succ.resize(c.global.size() * S, -1);
    const PathDag::Layer& L2 = dag.layer(j + 1);
    for (std::uint64_t n = base; n < c.global.size(); ++n) {
      // The successor by token s is the one by token 0 plus s, in the same count vector.
      const std::uint32_t to = dag.Successor(j, c.local[n], 0);
      const std::int32_t a = next_vpos[to / L2.windows];
      if (a < 0) continue;
      const std::uint32_t w0 = to % L2.windows;
      for (int s = 0; s < S; ++s) {
        const std::int32_t b = next_wpos[w0 + static_cast<std::uint32_t>(s)];
        if (b >= 0)
          c.succ[n * S + s] =
              static_cast<std::int32_t>(next_base + static_cast<std::uint64_t>(a) * nw + b);
      }
    }
    std::swap(vlist, next_vlist);
    std::swap(vpos, next_vpos);
    std::swap(wlist, next_wlist);
    std::swap(wpos, next_wpos);
  }
  c.begin[T_hi] = c.global.size();
  c.succ.resize(c.global.size() * S, -1);
  bool any_final = false;
  for (std::uint64_t k = c.begin[T_lo - 1]; k < c.n() && !any_final; ++k) any_final = c.final_ok[k];
  if (!any_final) {
    c.empty = true;
    return c;
  }
  // Roles: the main layers, then each length's tail of τ_L + 1 layers.
  c.main_layers = T_hi > c.tau + 1 ? T_hi - c.tau - 1 : 0;
  c.node_of.resize(c.n());
  std::iota(c.node_of.begin(), c.node_of.end(), 0);
  c.slots = c.n();
  for (std::uint64_t T = T_lo; T <= T_hi; ++T) {
    const std::uint64_t first = T > c.tau ? T - c.tau : 1;
    c.tail_first.push_back(first);
    c.tail_offset.push_back(c.slots);
    for (std::uint64_t k = c.begin[first - 1]; k < c.begin[T]; ++k) c.node_of.push_back(k);
    c.slots += c.begin[T] - c.begin[first - 1];
  }
  LTSIM_CHECK(c.slots <= kMaxSlots);
  return c;
}

// ---- Dynamic programmes -----------------------------------------------------------------------

// The largest Σ_j t(v_j) over the set's paths (t = a1·x1 + a2·x2, per slot: a key's role), with
// the components x1, x2 summed along the maximising path, its last slot and length.
struct DpResult {
  double value = -kInf, x1 = 0.0, x2 = 0.0;
  std::int64_t last = -1;
  std::uint64_t length = 0;
  double slack = 0.0;
};

// A slot's best value and its parent, for RunDpReference.
struct DpCell {
  double best;
  std::int64_t parent;
};

// The arrays of the programmes, kept across the sets of a task (BoundScratch; every entry a
// programme reads is written first by RunDp or Fill). Per slot: the best value reaching it and
// its parent (written with the value; read only along a maximising path, whose slots past the
// first layer all had their value raised from −∞), in two arrays (12 bytes a slot).
class DpWorkspace {
 public:
  std::vector<double> best;
  std::vector<std::int32_t> parent;
  std::vector<std::int64_t> path;
  std::vector<double> ya[2], yb[2];
  std::vector<DpCell> cells;  // RunDpReference's
};

// The rounding of the sum along a path of T terms is ≤ γ_{T+4}·Σ_j |t_j| (γ_n = n·u/(1 − n·u))
// and each term's own (two products and a sum) ≤ 3u(|a1 x1| + |a2 x2|): 1.01·(T + 8)·u times
// Σ_layers max |terms| over the main layers plus the largest tail's, and gradual underflow adds
// an absolute 2^-1075 to each product and sum (docs/theory.md §11.5, "Rounding").
//
// `Terms` gives a slot's term (term(slot, magnitude): t, with magnitude += |a1 x1| + |a2 x2| into
// the layer's largest) and its components (components(slot, x1, x2)).
template <class Terms>
DpResult RunDpWith(const Compact& c, const Terms& terms, double a1, double a2,
                   const std::vector<char>& dead, DpWorkspace& ws) {
  if (ws.best.size() < c.slots) {
    ws.best.resize(c.slots);
    ws.parent.resize(c.slots);
  }
  double* const value = ws.best.data();
  std::int32_t* const parent = ws.parent.data();
  std::fill(value, value + c.slots, -kInf);
  const int S = c.S;
  const std::int32_t* const succ = c.succ.data();
  const char* const off = dead.data();
  double magnitude = 0.0;
  // A slot's value `best` pushed to `to` (a slot of the next layer, never `from` itself).
  auto relax = [&](std::uint64_t from, double best, std::uint64_t to) {
    if (best > value[to]) {
      value[to] = best;
      parent[to] = static_cast<std::int32_t>(from);
    }
  };
  // A slot's own term added to its value, which is returned.
  auto add = [&](std::uint64_t slot, double& layer_max) {
    return value[slot] += terms.term(slot, layer_max);
  };
  for (std::uint64_t j = 1; j <= c.main_layers; ++j) {
    double layer_max = 0.0;
    for (std::uint64_t k = c.begin[j - 1]; k < c.begin[j]; ++k) {
      if (j == 1) value[k] = 0.0;
      if (value[k] == -kInf || off[k]) {
        value[k] = -kInf;
        continue;
      }
      const double best = add(k, layer_max);
      for (int s = 0; s < S; ++s) {
        const std::int32_t to = succ[k * S + s];
        if (to >= 0) relax(k, best, static_cast<std::uint64_t>(to));
      }
    }
    magnitude += layer_max;
  }
  DpResult r;
  double tail_magnitude = 0.0;
  for (std::uint64_t T = c.T_lo; T <= c.T_hi; ++T) {
    const std::uint64_t first = c.tail_first[T - c.T_lo];
    const std::uint64_t base = c.begin[first - 1], offset = c.tail_offset[T - c.T_lo];
    if (first > 1) {
      // Enter the tail from the main role of layer first − 1.
      for (std::uint64_t k = c.begin[first - 2]; k < c.begin[first - 1]; ++k) {
        const double best = value[k];
        if (best == -kInf) continue;
        for (int s = 0; s < S; ++s) {
          const std::int32_t to = succ[k * S + s];
          if (to >= 0) relax(k, best, offset + (static_cast<std::uint64_t>(to) - base));
        }
      }
    }
    double this_tail = 0.0;
    for (std::uint64_t j = first; j <= T; ++j) {
      double layer_max = 0.0;
      for (std::uint64_t k = c.begin[j - 1]; k < c.begin[j]; ++k) {
        const std::uint64_t slot = offset + (k - base);
        if (j == 1) value[slot] = 0.0;
        if (value[slot] == -kInf || off[slot]) {
          value[slot] = -kInf;
          continue;
        }
        const double best = add(slot, layer_max);
        if (j == T) {
          if (c.final_ok[k] && best > r.value) {
            r.value = best;
            r.last = static_cast<std::int64_t>(slot);
            r.length = T;
          }
          continue;
        }
        for (int s = 0; s < S; ++s) {
          const std::int32_t to = succ[k * S + s];
          if (to >= 0) relax(slot, best, offset + (static_cast<std::uint64_t>(to) - base));
        }
      }
      this_tail += layer_max;
    }
    tail_magnitude = std::max(tail_magnitude, this_tail);
  }
  if (r.last >= 0) {
    // x1 and x2 summed along the maximising path from its first slot.
    ws.path.resize(r.length);
    std::int64_t slot = r.last;
    for (std::uint64_t j = r.length; j >= 1; --j) {
      ws.path[j - 1] = slot;
      if (j == 1) break;
      slot = parent[slot];
    }
    for (const std::int64_t x : ws.path) {
      double p1 = 0.0, p2 = 0.0;
      terms.components(static_cast<std::size_t>(x), p1, p2);
      r.x1 += p1;
      r.x2 += p2;
    }
  }
  r.slack = 1.01 * static_cast<double>(c.T_hi + 8) * kUnit * (magnitude + tail_magnitude) +
            static_cast<double>(c.T_hi + 8) * 8 * std::numeric_limits<double>::denorm_min() *
                (1 + std::abs(a1) + std::abs(a2));
  return r;
}

// The reference programme for tests (BoundOptions::reference): one cell per slot holding the
// value and the parent, every cell reset to {−∞, −1}, the terms a1·x1 + a2·x2 of arrays filled
// first. RunDpWith must give the same bits.
DpResult RunDpReference(const Compact& c, const std::vector<double>& x1,
                        const std::vector<double>& x2, double a1, double a2,
                        const std::vector<char>& dead, DpWorkspace& ws) {
  if (ws.cells.size() < c.slots) ws.cells.resize(c.slots);
  DpCell* const cell = ws.cells.data();
  std::fill(cell, cell + c.slots, DpCell{-kInf, -1});
  const int S = c.S;
  double magnitude = 0.0;
  // A slot's own term, then its value pushed to `to` (a slot of the next layer).
  auto relax = [&](std::uint64_t from, std::uint64_t to) {
    if (cell[from].best > cell[to].best)
      cell[to] = {cell[from].best, static_cast<std::int64_t>(from)};
  };
  auto add = [&](std::uint64_t slot, double& layer_max) {
    const double p1 = a1 * x1[slot], p2 = a2 * x2[slot];
    layer_max = std::max(layer_max, std::abs(p1) + std::abs(p2));
    cell[slot].best += p1 + p2;
  };
  for (std::uint64_t j = 1; j <= c.main_layers; ++j) {
    double layer_max = 0.0;
    for (std::uint64_t k = c.begin[j - 1]; k < c.begin[j]; ++k) {
      if (j == 1) cell[k].best = 0.0;
      if (cell[k].best == -kInf || dead[k]) {
        cell[k].best = -kInf;
        continue;
      }
      add(k, layer_max);
      for (int s = 0; s < S; ++s) {
        const std::int32_t to = c.succ[k * S + s];
        if (to >= 0) relax(k, static_cast<std::uint64_t>(to));
      }
    }
    magnitude += layer_max;
  }
  DpResult r;
  double tail_magnitude = 0.0;
  for (std::uint64_t T = c.T_lo; T <= c.T_hi; ++T) {
    const std::uint64_t first = c.tail_first[T - c.T_lo];
    const std::uint64_t base = c.begin[first - 1], offset = c.tail_offset[T - c.T_lo];
    if (first > 1) {
      // Enter the tail from the main role of layer first − 1.
      for (std::uint64_t k = c.begin[first - 2]; k < c.begin[first - 1]; ++k) {
        if (cell[k].best == -kInf) continue;
        for (int s = 0; s < S; ++s) {
          const std::int32_t to = c.succ[k * S + s];
          if (to >= 0) relax(k, offset + (static_cast<std::uint64_t>(to) - base));
        }
      }
    }
    double this_tail = 0.0;
    for (std::uint64_t j = first; j <= T; ++j) {
      double layer_max = 0.0;
      for (std::uint64_t k = c.begin[j - 1]; k < c.begin[j]; ++k) {
        const std::uint64_t slot = offset + (k - base);
        if (j == 1) cell[slot].best = 0.0;
        if (cell[slot].best == -kInf || dead[slot]) {
          cell[slot].best = -kInf;
          continue;
        }
        add(slot, layer_max);
        if (j == T) {
          if (c.final_ok[k] && cell[slot].best > r.value) {
            r.value = cell[slot].best;
            r.last = static_cast<std::int64_t>(slot);
            r.length = T;
          }
          continue;
        }
        for (int s = 0; s < S; ++s) {
          const std::int32_t to = c.succ[k * S + s];
          if (to >= 0) relax(slot, offset + (static_cast<std::uint64_t>(to) - base));
        }
      }
      this_tail += layer_max;
    }
    tail_magnitude = std::max(tail_magnitude, this_tail);
  }
  if (r.last >= 0) {
    // x1 and x2 summed along the maximising path from its first slot.
    ws.path.resize(r.length);
    std::int64_t slot = r.last;
    for (std::uint64_t j = r.length; j >= 1; --j) {
      ws.path[j - 1] = slot;
      if (j == 1) break;
      slot = cell[slot].parent;
      LTSIM_CHECK(slot != -1);  // every slot past layer 1 on the path was reached
    }
    // PathString reads the parents from ws.parent.
    if (ws.parent.size() < c.slots) ws.parent.resize(c.slots);
    for (std::uint64_t x = 0; x < c.slots; ++x)
      ws.parent[x] = static_cast<std::int32_t>(cell[x].parent);
    for (const std::int64_t x : ws.path) {
      r.x1 += x1[static_cast<std::size_t>(x)];
      r.x2 += x2[static_cast<std::size_t>(x)];
    }
  }
  r.slack = 1.01 * static_cast<double>(c.T_hi + 8) * kUnit * (magnitude + tail_magnitude) +
            static_cast<double>(c.T_hi + 8) * 8 * std::numeric_limits<double>::denorm_min() *
                (1 + std::abs(a1) + std::abs(a2));
  return r;
}

// The terms a1·x1 + a2·x2 of two input arrays.
struct ArrayTerms {
  const double *x1, *x2;
  double a1, a2;
  double term(std::uint64_t slot, double& layer_max) const {
    const double p1 = a1 * x1[slot], p2 = a2 * x2[slot];
    layer_max = std::max(layer_max, std::abs(p1) + std::abs(p2));
    return p1 + p2;
  }
  void components(std::uint64_t slot, double& c1, double& c2) const {
    c1 = x1[slot];
    c2 = x2[slot];
  }
};

DpResult RunDp(const Compact& c, const std::vector<double>& x1, const std::vector<double>& x2,
               double a1, double a2, const std::vector<char>& dead, DpWorkspace& ws) {
  return RunDpWith(c, ArrayTerms{x1.data(), x2.data(), a1, a2}, a1, a2, dead, ws);
}

// The ratio programme's terms (a1 = 1, a2 = 0) computed where they are used, as Fill would store
// them: x1 = w·e and x2 = w, e = c(v) + μ − λ, w = w_hi where e > 0 and w_lo otherwise. The
// same bits as RunDp on Fill's arrays (docs/theory.md §11.5, the paragraph "2026-12-04,
// speed-ups that change no bit"; it needs finite weights, which BuildHeads checks): there a slot
// adds p1 + 0·w, and 0·w = +0 for the finite w ≥ 0 of every slot the programme reads (a dead slot
// is never read), p1 + (+0) differs from p1 only for p1 = −0, and adding −0 or +0 to a value that
// is never −0 (values start at +0 and a sum in round-to-nearest is −0 only from two −0s) gives
// the same bits; the magnitude |p1| + |+0| = |p1|.
struct RatioTerms {
  const double *value, *wh, *wl;
  const std::uint64_t* node;
  double mu, lambda;
  double term(std::uint64_t slot, double& layer_max) const {
    const double e = value[node[slot]] + mu - lambda;
    const double p1 = (e > 0 ? wh[slot] : wl[slot]) * e;
    layer_max = std::max(layer_max, std::abs(p1));
    return p1;
  }
  void components(std::uint64_t slot, double& c1, double& c2) const {
    const double e = value[node[slot]] + mu - lambda;
    const double w = e > 0 ? wh[slot] : wl[slot];
    c1 = w * e;
    c2 = w;
  }
};

// The string of the maximising path ending at `last` (a slot of a tail of length T).
std::vector<Token> PathString(const PathDag& dag, const Compact& c, const DpWorkspace& ws,
                              std::int64_t last, std::uint64_t T) {
  std::vector<Token> x(T);
  std::int64_t slot = last;
  for (std::uint64_t j = T; j >= 1; --j) {
    const std::uint64_t k = c.node_of[static_cast<std::size_t>(slot)];
    x[j - 1] = static_cast<Token>(dag.LastToken(j, c.local[k]));
    if (j == 1) break;
    slot = ws.parent[static_cast<std::size_t>(slot)];
  }
  return x;
}

// Paths of the set, a count per slot avoiding the `blocked` slots (none when it is empty): the
// main role, then each tail; the total over the final nodes.
double CountCompact(const Compact& c, const std::vector<char>& blocked = {}) {
  std::vector<double> count(c.slots, 0.0);
  const bool any = !blocked.empty();
  const int S = c.S;
  auto open = [&](std::uint64_t slot) { return !(any && blocked[slot]); };
  for (std::uint64_t j = 1; j <= c.main_layers; ++j)
    for (std::uint64_t k = c.begin[j - 1]; k < c.begin[j]; ++k) {
      if (j == 1 && open(k)) count[k] = 1.0;
      if (count[k] == 0.0 || !open(k)) continue;
      for (int s = 0; s < S; ++s) {
        const std::int32_t to = c.succ[k * S + s];
        if (to >= 0) count[to] += count[k];
      }
    }
  double total = 0.0;
  for (std::uint64_t T = c.T_lo; T <= c.T_hi; ++T) {
    const std::uint64_t first = c.tail_first[T - c.T_lo];
    const std::uint64_t base = c.begin[first - 1], offset = c.tail_offset[T - c.T_lo];
    if (first > 1)
      for (std::uint64_t k = c.begin[first - 2]; k < c.begin[first - 1]; ++k) {
        if (count[k] == 0.0 || !open(k)) continue;
        for (int s = 0; s < S; ++s) {
          const std::int32_t to = c.succ[k * S + s];
          if (to >= 0) count[offset + (static_cast<std::uint64_t>(to) - base)] += count[k];
        }
      }
    for (std::uint64_t j = first; j <= T; ++j)
      for (std::uint64_t k = c.begin[j - 1]; k < c.begin[j]; ++k) {
        const std::uint64_t slot = offset + (k - base);
        if (j == 1) count[slot] = 1.0;
        if (count[slot] == 0.0 || !open(slot)) continue;
        if (j == T) {
          if (c.final_ok[k]) total += count[slot];
          continue;
        }
        for (int s = 0; s < S; ++s) {
          const std::int32_t to = c.succ[k * S + s];
          if (to >= 0) count[offset + (static_cast<std::uint64_t>(to) - base)] += count[slot];
        }
      }
  }
  return total;
}

// ---- Node data of a set -----------------------------------------------------------------------

// Per head (f's heads, then g's): logit and weight intervals of every slot, the a* interval.
struct HeadData {
  int side = 0, head = 0;
  const Head* h = nullptr;
  Attention mode = Attention::kSoftmax;
  std::vector<double> lo, hi;  // logits, per slot
  std::vector<double> wl, wh;  // weights, per slot
  double astar_lo = -kInf, astar_hi = kInf;
  // Weights relative to the path's largest logit a* ∈ [astar_lo, astar_hi] (hardmax, finite,
  // and softmax whose logits spread too far for one shift): the real weights are ≤ 1 and the
  // largest is 1. Otherwise (softmax) exp(a − shift) for one shift of the set.
  bool relative = false;
};

// A softmax head whose logits spread over more than this within a set is weighed relative to
// a*: exp of the spread below the shift would underflow a double.
constexpr double kSoftmaxSpread = 600.0;

struct SetData {
  Compact c;
  std::vector<HeadData> heads;
  std::vector<char> dead;                  // per slot: unused, or above some head's a* interval
  std::vector<std::uint64_t> finals;       // final nodes
  std::vector<std::uint64_t> final_slots;  // their slots in their own length's tail
  bool finite_weights = true;              // every live slot's weight bounds are finite
};

// Weight bounds relative to a* (docs/model.md §3): W(δ) with δ = a − a*, monotone; an upper
// bound that underflows is the smallest positive double (the real weight is positive).
double WeightOf(const Layer& layer, double theta, double delta, std::uint64_t T, bool upper) {
  constexpr double kTiny = std::numeric_limits<double>::denorm_min();
  if (layer.attention == Attention::kHardmax) return delta >= -theta ? 1.0 : 0.0;
  if (layer.attention == Attention::kSoftmax) {
    const double w = std::exp(std::min(delta, 0.0));
    return upper ? std::max(kTiny, std::min(1.0, w * (1 + 4 * kUnit))) : w * (1 - 4 * kUnit);
  }
  const double log2T = std::log2(static_cast<double>(T));
  double l = log2T * delta;
  const double err = 4 * kUnit * (std::abs(l) + 1.0);
  l += upper ? err : -err;
  if (upper ? l <= -layer.precision_bits - err : l <= -layer.precision_bits + err) return 0.0;
  const double w = std::exp2(std::min(l, 0.0));
  return upper ? std::max(kTiny, std::min(1.0, w * (1 + 4 * kUnit))) : w * (1 - 4 * kUnit);
}

void BuildHeads(const PathPair& pair, const PathSet& set, SetData& data) {
  const Compact& c = data.c;
  const std::uint64_t n = c.n(), slots = c.slots;
  data.dead.assign(slots, 0);
  // Main roles beyond the main layers are never used.
  for (std::uint64_t k = c.main_layers >= 1 ? c.begin[c.main_layers] : 0; k < n; ++k)
    data.dead[k] = 1;
  for (std::uint64_t T = c.T_lo; T <= c.T_hi; ++T)
    for (std::uint64_t k = c.begin[T - 1]; k < c.begin[T]; ++k)
      if (c.final_ok[k]) {
        data.finals.push_back(k);
        data.final_slots.push_back(c.TailSlot(T, k));
      }
  const auto& list = pair.heads();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto [s, h] = list[i];
    const PathPair::Side& side = pair.side(s);
    const Layer& layer = *side.layer;
    HeadData hd;
    hd.side = s;
    hd.head = h;
    hd.h = &layer.heads[h];
    hd.mode = layer.attention;
    const int d = side.width;
    // The query box over the final nodes.
    Vector qlo = Vector::Constant(d, kInf), qhi = Vector::Constant(d, -kInf);
    double q1 = 0.0;
    for (std::uint64_t k : data.finals) {
      const Vector q = hd.h->qk * Eigen::Map<const Vector>(pair.y(s, c.global[k]), d);
      qlo = qlo.cwiseMin(q);
      qhi = qhi.cwiseMax(q);
      q1 = std::max(q1, q.cwiseAbs().sum());
    }
    // Rounding of a logit y(v)ᵀ(M y(F)) against the exact value: the errors of y(v), y(F) and
    // of the two products (docs/theory.md §11.5, "Rounding").
    const double ymax = pair.table(s).max_abs();
    const double mrow = hd.h->qk.cwiseAbs().rowwise().sum().maxCoeff();
    const double dy = side.y_error;
    const double eta =
        2.0 * (d * ymax * (dy + d * kUnit * ymax) * mrow + (dy + 2 * d * kUnit * ymax) * q1);
    const std::uint64_t tau = static_cast<std::uint64_t>(side.model->locality);
    hd.lo.resize(slots);
    hd.hi.resize(slots);
    for (std::uint64_t k = 0; k < n; ++k) {
      const double* y = pair.y(s, c.global[k]);
      double lo = 0.0, hi = 0.0;
      for (int a = 0; a < d; ++a) {
        const double p = y[a] * qlo[a], q = y[a] * qhi[a];
        lo += std::min(p, q);
        hi += std::max(p, q);
      }
      hd.lo[k] = lo - eta;
      hd.hi[k] = hi + eta;
    }
    // Tails: the local bias β(T)·φ[T − j] of the keys within τ of the end.
    for (std::uint64_t T = c.T_lo; T <= c.T_hi; ++T) {
      const double beta = BiasScale(layer.bias_scaling, static_cast<double>(T));
      for (std::uint64_t j = c.tail_first[T - c.T_lo]; j <= T; ++j) {
        const double bias =
            T - j <= tau ? beta * hd.h->bias[static_cast<Eigen::Index>(T - j)] : 0.0;
        const double bias_err = 4 * kUnit * std::abs(bias);
        for (std::uint64_t k = c.begin[j - 1]; k < c.begin[j]; ++k) {
          const std::uint64_t slot = c.TailSlot(T, k);
          hd.lo[slot] = hd.lo[k] + bias - bias_err;
          hd.hi[slot] = hd.hi[k] + bias + bias_err;
        }
      }
    }
    double spread_lo = kInf, spread_hi = -kInf;
    {
      // Register copies: the loop carries them in registers, not through memory.
      double lo_min = kInf, hi_max = -kInf;
      for (std::uint64_t x = 0; x < slots; ++x) {
        if (data.dead[x]) continue;
        lo_min = std::min(lo_min, hd.lo[x]);
        hi_max = std::max(hi_max, hd.hi[x]);
      }
      spread_lo = lo_min;
      spread_hi = hi_max;
    }
    hd.relative = hd.mode != Attention::kSoftmax || spread_hi - spread_lo > kSoftmaxSpread;
    // The a* interval: at least the final node's own logit (it is a key of every path).
    if (hd.relative) {
      double lo = kInf;
      for (std::uint64_t x : data.final_slots) lo = std::min(lo, hd.lo[x]);
      hd.astar_lo = std::max(lo, i < set.astar.size() ? set.astar[i].first : -kInf);
      hd.astar_hi = std::min(spread_hi, i < set.astar.size() ? set.astar[i].second : kInf);
    }
    data.heads.push_back(std::move(hd));
  }
  // Weights; a role whose logit is certainly above a* is not on any path of the set.
  for (HeadData& hd : data.heads) {
    const PathPair::Side& side = pair.side(hd.side);
    const Layer& layer = *side.layer;
    hd.wl.assign(slots, 0.0);
    hd.wh.assign(slots, 0.0);
    if (!hd.relative) {
      double shift = -kInf;
      for (std::uint64_t x = 0; x < slots; ++x)
        if (!data.dead[x]) shift = std::max(shift, hd.hi[x]);
      for (std::uint64_t x = 0; x < slots; ++x) {
        const double el = 4 * kUnit * (std::abs(hd.lo[x]) + std::abs(shift));
        const double eh = 4 * kUnit * (std::abs(hd.hi[x]) + std::abs(shift));
        hd.wl[x] = std::exp(hd.lo[x] - shift - el) * (1 - 4 * kUnit);
        hd.wh[x] = std::exp(hd.hi[x] - shift + eh) * (1 + 4 * kUnit);
      }
      continue;
    }
    const double theta = side.model->tie_tolerance;
    // A main role serves every length of the set, a tail slot its own.
    auto weights = [&](std::uint64_t x, std::uint64_t T0, std::uint64_t T1) {
      const double el = 4 * kUnit * (std::abs(hd.lo[x]) + std::abs(hd.astar_hi));
      const double eh = 4 * kUnit * (std::abs(hd.hi[x]) + std::abs(hd.astar_lo));
      if (hd.lo[x] - el > hd.astar_hi) data.dead[x] = 1;
      const double dl = hd.lo[x] - hd.astar_hi - el, dh = hd.hi[x] - hd.astar_lo + eh;
      hd.wl[x] =
          std::min(WeightOf(layer, theta, dl, T0, false), WeightOf(layer, theta, dl, T1, false));
      hd.wh[x] =
          std::max(WeightOf(layer, theta, dh, T0, true), WeightOf(layer, theta, dh, T1, true));
    };
    for (std::uint64_t k = 0; k < n; ++k)
      if (!data.dead[k]) weights(k, c.T_lo, c.T_hi);
    for (std::uint64_t T = c.T_lo; T <= c.T_hi; ++T)
      for (std::uint64_t k = c.begin[c.tail_first[T - c.T_lo] - 1]; k < c.begin[T]; ++k)
        weights(c.TailSlot(T, k), T, T);
  }
  // The programmes need finite weights on every slot they read (a NaN term would drop that
  // slot's paths from the maximum): exp of huge logits can overflow, and then nothing is bounded.
  for (const HeadData& hd : data.heads)
    for (std::uint64_t x = 0; x < slots && data.finite_weights; ++x)
      if (!data.dead[x] && !(std::isfinite(hd.wl[x]) && std::isfinite(hd.wh[x])))
        data.finite_weights = false;
}

// Whether slot x can carry weight on a real path of the set: a softmax weight is always
// positive (even where its bound underflows); a hardmax or finite one may be 0 exactly.
bool CanWeigh(const HeadData& hd, const SetData& data, std::uint64_t x) {
  return !data.dead[x] && (hd.mode == Attention::kSoftmax || hd.wh[x] > 0);
}

// An upper bound on the paths of a set with its a* intervals: paths avoiding the roles above
// some head's a* (dead), and for each head weighed relative to a*, those that also visit a role
// whose logit can reach the interval's low end (a path's a* is one of its logits); the
// smallest of these counts.
double CountSetPaths(const SetData& data) {
  const double alive = CountCompact(data.c, data.dead);
  double count = alive;
  // The difference is exact while the counts are (below 2^53).
  if (alive >= 0x1p52) return count;
  for (const HeadData& hd : data.heads) {
    if (!hd.relative || !(hd.astar_lo > -kInf)) continue;
    std::vector<char> low = data.dead;
    for (std::uint64_t x = 0; x < low.size(); ++x)
      if (hd.hi[x] >= hd.astar_lo) low[x] = 1;
    count = std::min(count, alive - CountCompact(data.c, low));
  }
  return std::max(count, 0.0);
}

// ---- The bound for one output and sign ----------------------------------------------------------

// The signed gap σ(f_k − g_k) ≤ κ + Σ_i N_i/D_i, N_i = Σ_j w_i c_i: per head i the values
// c_i(v) = u_i·y(v) (u_i = O_hᵀ·coefficient), κ the constant's largest value over the final
// nodes, err the values' and constant's rounding (docs/theory.md §11.5, "The gap as ratios").
struct Linearised {
  std::vector<std::vector<double>> values;  // [head][node]
  std::vector<double> vmin, vmax;           // over the roles that can weigh
  double kappa = -kInf;
  double err = 0.0;
  bool finite = true;
};

// The affine upper bounds of the ReLUs of one side's MLP (docs/theory.md §11.6, reused):
// ω·ReLU(z) ≤ slope·z + intercept on [l, u] for ω = the neuron's signed weight.
void ReluRelaxation(double omega, double l, double u, int variant, double& slope,
                    double& intercept) {
  intercept = 0.0;
  if (l >= 0) {
    slope = omega;
  } else if (u <= 0) {
    slope = 0.0;
  } else if (omega > 0) {
    slope = omega * u / (u - l);
    intercept = -slope * l;
  } else {
    const double lambda = variant == 0 ? 0.0 : variant == 1 ? 1.0 : u / (u - l);
    slope = omega * lambda;
  }
}

Linearised Linearise(const PathPair& pair, const SetData& data, int k, int sigma, int variant,
                     const std::vector<std::vector<double>>& pre_lo,
                     const std::vector<std::vector<double>>& pre_hi) {
  const Compact& c = data.c;
  const std::uint64_t n = c.n();
  Linearised lin;
  lin.values.resize(data.heads.size());
  lin.vmin.assign(data.heads.size(), kInf);
  lin.vmax.assign(data.heads.size(), -kInf);
  if (!data.finite_weights) {
    lin.finite = false;
    return lin;
  }
  // Per side: the coefficient vector on u (d) and the constant's pieces.
  for (int s = 0; s < 2; ++s) {
    const PathPair::Side& side = pair.side(s);
    const Transformer& model = *side.model;
    const int d = side.width;
    const double sign = s == 0 ? sigma : -sigma;
    Vector coef = sign * model.readout_weight.row(k).transpose();
    double constant = sign * model.readout_bias[k];
    Vector coef_abs = coef.cwiseAbs();
    double const_abs = std::abs(constant);
    if (side.neurons > 0) {
      const Mlp& mlp = *side.layer->mlp;
      for (int i = 0; i < side.neurons; ++i) {
        double slope = 0.0, intercept = 0.0;
        const double l = pre_lo[s][i], u = pre_hi[s][i];
        if (!std::isfinite(l) || !std::isfinite(u)) {
          lin.finite = false;
          return lin;
        }
        ReluRelaxation(sign * side.WB(k, i), l, u, variant, slope, intercept);
        coef += slope * mlp.in.row(i).transpose();
        coef_abs += std::abs(slope) * mlp.in.row(i).transpose().cwiseAbs();
        constant += slope * mlp.in_bias[i] + intercept;
        const_abs += std::abs(slope * mlp.in_bias[i]) + std::abs(intercept) +
                     std::abs(slope) * (std::abs(l) + std::abs(u));
      }
    }
    // κ_s(F) = constant + coef·y(F) over the final nodes.
    double kmax = -kInf;
    for (std::uint64_t f : data.finals)
      kmax =
          std::max(kmax, constant + coef.dot(Eigen::Map<const Vector>(pair.y(s, c.global[f]), d)));
    const double ymax = pair.table(s).max_abs();
    // Rounding: of coef·y (d products, y's own error δ_y), of the relaxation's coefficients
    // and constant (a few operations each, relative to their magnitudes).
    const double coef1 = coef_abs.sum();
    lin.err += 2.0 * ((side.y_error + 2 * d * kUnit * ymax) * coef1 +
                      8 * kUnit * (const_abs + coef1 * ymax) * (side.neurons + 2));
    lin.kappa = (s == 0 ? 0.0 : lin.kappa) + kmax;
    // The heads' values: u_h = O_hᵀ coef.
    for (std::size_t i = 0; i < data.heads.size(); ++i) {
      const HeadData& hd = data.heads[i];
      if (hd.side != s) continue;
      const Vector uh = hd.h->ov.transpose() * coef;
      const Vector uh_abs = hd.h->ov.cwiseAbs().transpose() * coef_abs;
      lin.err += 2.0 * (side.y_error + 3 * d * kUnit * ymax) * uh_abs.sum() +
                 2.0 * d * kUnit * ymax * uh_abs.sum();
      std::vector<double>& v = lin.values[i];
      v.resize(n);
      const double* u = uh.data();
      for (std::uint64_t x = 0; x < n; ++x) {
        const double* y = pair.y(s, c.global[x]);
        double dot = 0.0;
        for (int a = 0; a < d; ++a) dot += u[a] * y[a];
        v[x] = dot;
      }
      double vmin = lin.vmin[i], vmax = lin.vmax[i];
      for (std::uint64_t x = 0; x < c.slots; ++x)
        if (CanWeigh(hd, data, x)) {
          const double val = v[c.node_of[x]];
          vmin = std::min(vmin, val);
          vmax = std::max(vmax, val);
        }
      lin.vmin[i] = vmin;
      lin.vmax[i] = vmax;
    }
  }
  if (!std::isfinite(lin.kappa)) lin.finite = false;
  return lin;
}

// The ranges [l_i, u_i] of one side's MLP pre-activations over the set: z_i = b_i + A_i·y(F) +
// Σ_h (A_i O_h)·mean_h, each mean within the range of its values over the roles that can
// weigh (docs/theory.md §11.5).
void PreActivationRanges(const PathPair& pair, const SetData& data, int s, std::vector<double>& lo,
                         std::vector<double>& hi) {
  const PathPair::Side& side = pair.side(s);
  lo.assign(side.neurons, 0.0);
  hi.assign(side.neurons, 0.0);
  if (side.neurons == 0) return;
  const Mlp& mlp = *side.layer->mlp;
  const Compact& c = data.c;
  const int d = side.width;
  const double ymax = pair.table(s).max_abs();
  for (int i = 0; i < side.neurons; ++i) {
    double l = kInf, u = -kInf, abs_scale = std::abs(mlp.in_bias[i]);
    for (std::uint64_t f : data.finals) {
      const double z =
          mlp.in_bias[i] + mlp.in.row(i).dot(Eigen::Map<const Vector>(pair.y(s, c.global[f]), d));
      l = std::min(l, z);
      u = std::max(u, z);
    }
    abs_scale += mlp.in.row(i).cwiseAbs().sum() * ymax;
    for (const HeadData& hd : data.heads) {
      if (hd.side != s) continue;
      const Vector g = (mlp.in.row(i) * hd.h->ov).transpose();
      double gl = kInf, gu = -kInf;
      for (std::uint64_t x = 0; x < c.slots; ++x) {
        if (!CanWeigh(hd, data, x)) continue;
        const double v = g.dot(Eigen::Map<const Vector>(pair.y(s, c.global[c.node_of[x]]), d));
        gl = std::min(gl, v);
        gu = std::max(gu, v);
      }
      if (gl > gu) continue;
      l += gl;
      u += gu;
      abs_scale += (mlp.in.row(i).cwiseAbs() * hd.h->ov.cwiseAbs()).sum() * ymax;
    }
    const double err =
        2.0 * ((side.y_error + 4 * d * kUnit * ymax) * (abs_scale / std::max(ymax, 1e-300)) +
               8 * kUnit * abs_scale);
    lo[i] = l - err;
    hi[i] = u + err;
  }
}

// μ for the heads weighed relative to a*, whose real paths have D ≥ 1: the term μ·(D − 1) ≥ 0
// keeps paths of the relaxation without any weight from blocking the certificate at 0
// (docs/theory.md §11.5).
double MuOf(const HeadData& hd, std::uint64_t T, double scale) {
  if (!hd.relative) return 0.0;
  const double t = static_cast<double>(T);
  return 8.0 * (t + 8) * t * kUnit * (1.0 + scale);
}

struct Checker {
  const PathPair& pair;
  const SetData& data;
  const Linearised& lin;
  const BoundOptions& options;
  DpWorkspace& ws;
  std::vector<std::vector<Token>>* candidates;
  std::uint64_t programs = 0;

  void Candidate(const DpResult& r) {
    if (candidates && options.candidates && r.last >= 0 && candidates->size() < 8)
      candidates->push_back(PathString(pair.dag(), data.c, ws, r.last, r.length));
  }

  // out[x] = w·(c + μ − λ) per slot for head i at level λ (w the weight end that maximises).
  void Fill(std::size_t i, double lambda, double mu, std::vector<double>& out) {
    const HeadData& hd = data.heads[i];
    const std::vector<double>& v = lin.values[i];
    const Compact& c = data.c;
    out.resize(c.slots);
    const double* const value = v.data();
    const std::uint64_t* const node = c.node_of.data();
    const double *const wh = hd.wh.data(), *const wl = hd.wl.data();
    double* const o = out.data();
    for (std::uint64_t x = 0; x < c.slots; ++x) {
      const double e = value[node[x]] + mu - lambda;
      const double w = e > 0 ? wh[x] : wl[x];
      o[x] = w * e;
    }
  }

  // The ratio programme of head i at level λ on arrays filled first: x1 = w·(c + μ − λ) and
  // x2 = w, the weight chosen (the reference for RatioTerms).
  DpResult ReferenceRatioProgramme(std::size_t i, double lambda, double mu) {
    const HeadData& hd = data.heads[i];
    const Compact& c = data.c;
    std::vector<double> x1(c.slots), x2(c.slots);
    for (std::uint64_t x = 0; x < c.slots; ++x) {
      const double e = lin.values[i][c.node_of[x]] + mu - lambda;
      const double w = e > 0 ? hd.wh[x] : hd.wl[x];
      x1[x] = w * e;
      x2[x] = w;
    }
    return RunDpReference(c, x1, x2, 1.0, 0.0, data.dead, ws);
  }

  // A certified upper bound on max over the set's paths of N_i/D_i: Dinkelbach's iteration
  // on max_p Σ w(c − λ) from below, then a level λ at which that maximum plus its rounding is
  // ≤ 0 (docs/theory.md §11.5, "Ratios").
  double MaxRatio(std::size_t i) {
    const HeadData& hd = data.heads[i];
    const double vmax = lin.vmax[i], vmin = lin.vmin[i];
    if (!(vmin <= vmax)) return -kInf;  // no role can weigh: the head has no real path here
    if (vmin == vmax) return vmax;
    const double scale = std::max(std::abs(vmin), std::abs(vmax));
    const double mu = MuOf(hd, data.c.T_hi, scale);
    // From the smallest value up: each step's level is the ratio of a path (Dinkelbach), raised
    // by the certification step when that stays below best_upper, so that the level past the
    // best path certifies at once.
    double lambda = vmin;
    double best_upper = vmax;
    double raise = 0.0;  // the last raise of a level that did not move the path's ratio
    int stalls = 0;
    for (int it = 0; it < 40; ++it) {
      const DpResult r =
          options.reference ? ReferenceRatioProgramme(i, lambda, mu)
                            : RunDpWith(data.c,
                                        RatioTerms{lin.values[i].data(), hd.wh.data(), hd.wl.data(),
                                                   data.c.node_of.data(), mu, lambda},
                                        1.0, 0.0, data.dead, ws);
      ++programs;
      if (r.last < 0) return -kInf;
      if (r.value - mu + r.slack <= 0) {
        best_upper = std::min(best_upper, lambda);
        break;
      }
      Candidate(r);
      const double D = r.x2;
      if (!(D > 0)) break;
      const double next = lambda + r.value / D;  // = (N + μD)/D of that path
      const double tol = 1e-13 * (1.0 + scale);
      const double step = std::max(tol, 4 * (r.slack + mu) / D);
      if (next - lambda <= tol) {
        // The path is not above λ beyond rounding: raise the level, 16 times more each time.
        if (++stalls > 6) break;
        raise = raise == 0.0 ? step : raise * 16;
        lambda = std::max(lambda, next) + raise;
      } else {
        // Dinkelbach's step, then slightly above unless that passes the best certified level
        // (a path of tiny D makes the raise huge): then the path's ratio itself.
        lambda = next + step < best_upper ? next + step : next;
        raise = 0.0;
      }
      if (lambda >= best_upper) break;
    }
    return best_upper;
  }

  // The pairing of heads a and b (docs/theory.md §11.5, "Pairing"): no path has
  // r_a + r_b > E when, over a cover of ρ ∈ [E − R_b, R_a] by intervals, each interval has an
  // s ∈ [0, 1] with max_p [s·Σ w_a(c_a − ρ) + (1 − s)·Σ w_b(c_b − (E − ρ))] ≤ 0 at both ends.
  bool Pair(std::size_t a, std::size_t b, double E, double Ra, double Rb) {
    const double lo = E - Rb, hi = Ra;
    if (!(lo < hi)) return true;
    const double scale_a = std::max(std::abs(lin.vmin[a]), std::abs(lin.vmax[a]));
    const double scale_b = std::max(std::abs(lin.vmin[b]), std::abs(lin.vmax[b]));
    const double mu_a = MuOf(data.heads[a], data.c.T_hi, scale_a + std::abs(E));
    const double mu_b = MuOf(data.heads[b], data.c.T_hi, scale_b + std::abs(E));
    struct Interval {
      double lo, hi, s;
      int depth;
    };
    std::vector<Interval> stack{{lo, hi, 0.5, 0}};
    // The inputs of the programmes at the last two ρ (an interval's ends, for every s tried).
    double filled[2] = {std::numeric_limits<double>::quiet_NaN(),
                        std::numeric_limits<double>::quiet_NaN()};
    int next_fill = 0;
    auto inputs = [&](double rho) {
      for (int i = 0; i < 2; ++i)
        if (filled[i] == rho) return i;
      const int i = next_fill;
      next_fill ^= 1;
      Fill(a, rho, mu_a, ws.ya[i]);
      Fill(b, E - rho, mu_b, ws.yb[i]);
      filled[i] = rho;
      return i;
    };
    // The programmes run, by (ρ, s): halves share their ends with their parent and each other,
    // and start from the parent's s, so a repeated (ρ, s) is the same programme (deterministic).
    struct Seen {
      double rho, s;
      DpResult r;
    };
    std::vector<Seen> seen;
    auto programme = [&](double rho, double s, bool& fresh) {
      for (const Seen& x : seen)
        if (x.rho == rho && x.s == s) {
          fresh = false;
          return x.r;
        }
      fresh = true;
      const int i = inputs(rho);
      const DpResult r = options.reference
                             ? RunDpReference(data.c, ws.ya[i], ws.yb[i], s, 1 - s, data.dead, ws)
                             : RunDp(data.c, ws.ya[i], ws.yb[i], s, 1 - s, data.dead, ws);
      ++programs;
      seen.push_back({rho, s, r});
      return r;
    };
    while (!stack.empty()) {
      const Interval iv = stack.back();
      stack.pop_back();
      // Lines s·U + (1 − s)·V − sμ_a − (1 − s)μ_b of paths seen at either end.
      std::vector<std::pair<double, double>> lines;  // (value at s = 0, value at s = 1)
      double s = iv.s;
      bool done = false;
      for (int it = 0; it < options.max_kelley && !done; ++it) {
        bool both = true;
        for (double rho : {iv.lo, iv.hi}) {
          bool fresh = true;
          const DpResult r = programme(rho, s, fresh);
          if (r.last < 0) continue;
          const double value = r.value - s * mu_a - (1 - s) * mu_b + r.slack;
          if (value > 0) {
            both = false;
            if (fresh) Candidate(r);
          }
          lines.emplace_back(r.x2 - mu_b + r.slack, r.x1 - mu_a + r.slack);
          // A line that is not finite gives no crossing to trust (an infinite d0 makes t NaN).
          if (!std::isfinite(lines.back().first) || !std::isfinite(lines.back().second))
            return false;
        }
        if (both) {
          done = true;
          break;
        }
        // Kelley's step: the s minimising the upper envelope of the lines on [0, 1].
        const auto step = KelleyStep(lines, options.reference);
        if (!step) return false;
        const auto [best_v, best_s] = *step;
        // No cover can work when at one end every s has a path above 0, rounding aside
        // (docs/theory.md §11.5, "Pairing": the maximum is convex in ρ, so the interval of a
        // cover that holds this ρ would have an end above 0 at every s).
        for (double rho : {iv.lo, iv.hi}) {
          std::vector<std::pair<double, double>> here;
          for (const Seen& x : seen)
            if (x.rho == rho && x.r.last >= 0) here.emplace_back(x.r.x2 - mu_b, x.r.x1 - mu_a);
          if (!here.empty() && (options.reference ? EnvelopeMinimumReference(here).first > 0
                                                  : EnvelopeMinimumAbove(here, 0.0)))
            return false;
        }
        if (best_v > 0) break;  // no s can work on this interval with these paths
        if (std::abs(best_s - s) < 1e-12) break;
        s = best_s;
      }
      if (done) continue;
      if (iv.depth >= options.max_rho_depth) return false;
      const double mid = 0.5 * (iv.lo + iv.hi);
      stack.push_back({mid, iv.hi, s, iv.depth + 1});
      stack.push_back({iv.lo, mid, s, iv.depth + 1});
    }
    return true;
  }
};

// Whether every path has σ(f_k − g_k) ≤ limit, for one relaxation variant.
bool CheckSigned(const PathPair& pair, const SetData& data, const Linearised& lin, double limit,
                 const BoundOptions& options, DpWorkspace& ws,
                 std::vector<std::vector<Token>>* candidates, std::uint64_t& programs) {
  if (!lin.finite) return false;
  const double E = limit - lin.kappa - lin.err;
  const std::size_t H = data.heads.size();
  if (H == 0) return E >= 0;
  // A head none of whose roles can weigh has no real path here (D ≥ 1 on every real path of a
  // head weighed relative to a*): the set holds no path.
  for (std::size_t i = 0; i < H; ++i)
    if (!(lin.vmin[i] <= lin.vmax[i])) return true;
  // Crude: every ratio at its largest value over the roles.
  double crude = 0.0;
  for (std::size_t i = 0; i < H; ++i) crude += lin.vmax[i];
  if (crude <= E) return true;
  Checker checker{pair, data, lin, options, ws, candidates};
  std::vector<double> R(H, 0.0);
  double total = 0.0;
  for (std::size_t i = 0; i < H; ++i) {
    R[i] = checker.MaxRatio(i);
    total += std::isfinite(R[i]) ? R[i] : 0.0;
  }
  programs += checker.programs;
  checker.programs = 0;
  if (total <= E) return true;
  if (H < 2 || !options.pairing) return false;
  // Pair the two heads whose values spread most; the others at their largest ratio.
  std::vector<std::size_t> order(H);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return lin.vmax[x] - lin.vmin[x] > lin.vmax[y] - lin.vmin[y];
  });
  const std::size_t a = order[0], b = order[1];
  if (!std::isfinite(R[a]) || !std::isfinite(R[b])) return false;
  double rest = 0.0;
  for (std::size_t k = 2; k < H; ++k) rest += std::isfinite(R[order[k]]) ? R[order[k]] : 0.0;
  const bool ok = checker.Pair(a, b, E - rest, R[a], R[b]);
  programs += checker.programs;
  return ok;
}

// Children that partition a set's paths: its lengths while there are several, the final
// nodes' box while it holds several count vectors, then the a* interval of a head weighed
// relative to a*, then a waypoint box at the layer with the most count vectors. Empty when
// nothing can be split.
std::vector<PathSet> Split(const PathPair& pair, const PathSet& set, const SetData& data) {
  std::vector<PathSet> children;
  const PathDag& dag = pair.dag();
  const Compact& c = data.c;
  const std::uint64_t T = set.length;
  const int D = dag.types();
  const std::uint64_t m = static_cast<std::uint64_t>(dag.view().locality) + 1;
  // 0. The lengths.
  if (set.length < set.length_hi) {
    const std::uint64_t mid = set.length + (set.length_hi - set.length) / 2;
    PathSet a = set, b = set;
    a.length_hi = mid;
    b.length = mid + 1;
    children.push_back(std::move(a));
    children.push_back(std::move(b));
    return children;
  }
  // Splits the box at layer j along its widest type; false when every type is fixed.
  auto split_box = [&](std::uint64_t j) {
    int widest = -1;
    std::int64_t width = 0;
    for (int k = 0; k < D; ++k) {
      const std::int64_t w = c.box_hi[j * D + k] - c.box_lo[j * D + k];
      if (w > width) {
        width = w;
        widest = k;
      }
    }
    if (widest < 0) return false;
    const std::int64_t mid = c.box_lo[j * D + widest] + width / 2;
    for (int half = 0; half < 2; ++half) {
      PathSet child = set;
      std::vector<std::int64_t> lo(c.box_lo.begin() + j * D, c.box_lo.begin() + (j + 1) * D);
      std::vector<std::int64_t> hi(c.box_hi.begin() + j * D, c.box_hi.begin() + (j + 1) * D);
      if (half == 0)
        hi[widest] = mid;
      else
        lo[widest] = mid + 1;
      if (j == T) {
        child.final_lo = lo;
        child.final_hi = hi;
      } else {
        bool replaced = false;
        for (CountBox& w : child.waypoints)
          if (w.layer == j) {
            w.lo = lo;
            w.hi = hi;
            replaced = true;
          }
        if (!replaced) child.waypoints.push_back({j, lo, hi});
      }
      children.push_back(std::move(child));
    }
    return true;
  };
  // 1. The final nodes, while there are several count vectors.
  if (T > m && c.alive_vectors[T] > 1 && split_box(T)) return children;
  // 2. The a* interval of a head weighed relative to a* whose roles' logits form several
  // clusters (intervals farther apart than their largest width): a path's a* is the logit of
  // one of its roles, so it lies in exactly one cluster, and the children split the clusters
  // in two.
  std::size_t split_head = data.heads.size();
  std::vector<std::pair<double, double>> best_clusters;
  for (std::size_t i = 0; i < data.heads.size(); ++i) {
    const HeadData& hd = data.heads[i];
    if (!hd.relative) continue;
    std::vector<std::pair<double, double>> roles;
    double width = 0.0;
    for (std::uint64_t x = 0; x < c.slots; ++x) {
      if (data.dead[x] || hd.hi[x] < hd.astar_lo || hd.lo[x] > hd.astar_hi) continue;
      roles.emplace_back(hd.lo[x], hd.hi[x]);
      width = std::max(width, hd.hi[x] - hd.lo[x]);
    }
    std::sort(roles.begin(), roles.end());
    std::vector<std::pair<double, double>> clusters;  // (lowest lo, highest hi)
    for (const auto& [lo, hi] : roles) {
      if (!clusters.empty() && lo <= clusters.back().second + width)
        clusters.back().second = std::max(clusters.back().second, hi);
      else
        clusters.emplace_back(lo, hi);
    }
    if (clusters.size() > std::max<std::size_t>(1, best_clusters.size())) {
      best_clusters = clusters;
      split_head = i;
    }
  }
  if (split_head < data.heads.size()) {
    const HeadData& hd = data.heads[split_head];
    const std::size_t mid = best_clusters.size() / 2;
    for (int half = 0; half < 2; ++half) {
      PathSet child = set;
      child.astar[split_head] = half == 0
                                    ? std::make_pair(hd.astar_lo, best_clusters[mid - 1].second)
                                    : std::make_pair(best_clusters[mid].first, hd.astar_hi);
      children.push_back(std::move(child));
    }
    return children;
  }
  // 3. A waypoint at the layer with the most alive count vectors.
  std::uint64_t best = 0;
  std::uint32_t most = 1;
  for (std::uint64_t j = m + 1; j < T; ++j)
    if (c.alive_vectors[j] > most) {
      most = c.alive_vectors[j];
      best = j;
    }
  if (best != 0 && split_box(best)) return children;
  return children;  // nothing to split: the set's paths differ in early windows only
}

}  // namespace

PathSet RootPathSet(const PathPair& pair, std::uint64_t length, std::uint64_t length_hi,
                    std::uint32_t final_window) {
  PathSet set;
  set.length = length;
  set.length_hi = length_hi;
  set.final_window = final_window;
  const int D = pair.dag().types();
  set.final_lo.assign(D, 0);
  set.final_hi.assign(D, std::numeric_limits<std::int64_t>::max() / 4);
  set.astar.assign(pair.heads().size(), {-kInf, kInf});
  return set;
}

double CountPaths(const PathPair& pair, const PathSet& set) {
  const Compact c = Materialise(pair, set);
  return c.empty ? 0.0 : CountCompact(c);
}

std::vector<std::vector<Token>> EnumeratePaths(const PathPair& pair, const PathSet& set,
                                               std::uint64_t cap, bool* complete) {
  std::vector<std::vector<Token>> out;
  if (complete) *complete = true;
  const Compact c = Materialise(pair, set);
  if (c.empty) return out;
  const PathDag& dag = pair.dag();
  // Nodes that reach a final node, backwards.
  std::vector<char> reach(c.n(), 0);
  for (std::uint64_t j = c.T_hi; j >= 1; --j) {
    for (std::uint64_t k = c.begin[j - 1]; k < c.begin[j]; ++k) {
      reach[k] = c.final_ok[k];
      if (j < c.T_hi)
        for (int s = 0; s < c.S && !reach[k]; ++s) {
          const std::int32_t to = c.succ[k * c.S + s];
          if (to >= 0 && reach[to]) reach[k] = 1;
        }
    }
    if (j == 1) break;
  }
  // Depth first over the reaching nodes, in index and token order; a path ends at every final
  // node it meets.
  std::vector<std::pair<std::int64_t, int>> stack;
  std::vector<Token> x;
  for (std::uint64_t k = c.begin[0]; k < c.begin[1]; ++k) {
    if (!reach[k]) continue;
    stack.assign(1, {static_cast<std::int64_t>(k), -1});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const std::uint64_t depth = stack.size();  // the layer of `node`
      if (next == -1) {
        next = 0;
        if (c.final_ok[node]) {
          if (out.size() >= cap) {
            if (complete) *complete = false;
            return out;
          }
          x.resize(depth);
          for (std::uint64_t j = 1; j <= depth; ++j)
            x[j - 1] = static_cast<Token>(dag.LastToken(j, c.local[stack[j - 1].first]));
          // Only the paths whose largest logits lie in the set's a* intervals.
          if (PathInSet(pair, set, PathNodes(dag, x))) out.push_back(x);
        }
      }
      if (depth == c.T_hi || next >= c.S) {
        stack.pop_back();
        continue;
      }
      const std::int32_t to = c.succ[node * c.S + next];
      ++next;
      if (to >= 0 && reach[to]) stack.push_back({to, -1});
    }
  }
  return out;
}

struct BoundScratch::Impl {
  DpWorkspace ws;
};
BoundScratch::BoundScratch() : impl(std::make_unique<Impl>()) {}
BoundScratch::~BoundScratch() = default;

SetBound BoundPathSet(const PathPair& pair, const PathSet& set, double limit,
                      const BoundOptions& options, BoundScratch* scratch) {
  SetBound out;
  SetData data;
  data.c = Materialise(pair, set);
  if (data.c.empty) {
    out.empty = true;
    out.holds = true;
    return out;
  }
  out.nodes = data.c.n();
  BuildHeads(pair, set, data);
  out.paths = CountSetPaths(data);
  if (out.paths == 0) {
    out.empty = true;
    out.holds = true;
    return out;
  }
  if (out.paths <= options.leaf_paths) {
    out.leaf = true;
    return out;
  }
  DpWorkspace own;
  DpWorkspace& ws = scratch ? scratch->impl->ws : own;
  // Pre-activation ranges of the second layers' MLPs.
  std::vector<std::vector<double>> pre_lo(2), pre_hi(2);
  bool relaxed = false;
  for (int s = 0; s < 2; ++s) {
    PreActivationRanges(pair, data, s, pre_lo[s], pre_hi[s]);
    for (std::size_t i = 0; i < pre_lo[s].size(); ++i)
      if (pre_lo[s][i] < 0 && pre_hi[s][i] > 0) relaxed = true;
  }
  const int outputs = pair.side(0).outputs;
  bool all = true;
  for (int k = 0; k < outputs && all; ++k)
    for (int sigma : {1, -1}) {
      bool ok = false;
      for (int variant = 0; variant < (relaxed ? 3 : 1) && !ok; ++variant) {
        const Linearised lin =
            Linearise(pair, data, k, sigma, relaxed ? variant : 2, pre_lo, pre_hi);
        ok = CheckSigned(pair, data, lin, limit, options, ws, &out.candidates, out.programs);
      }
      if (!ok) {
        all = false;
        break;
      }
    }
  out.holds = all;
  if (!all) out.children = Split(pair, set, data);
  return out;
}

}  // namespace ltsim::threshold
