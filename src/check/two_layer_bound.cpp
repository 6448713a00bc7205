// The certified two-layer simulation bound of docs/theory.md §4.7: the first layer's state
// distance (step 1), a window-by-window quantile coupling of x's and z's positions with the
// second layer's weighted-mean identity (step 2), the query's move (step 3) and the readout.
#include "ltsim/check/two_layer_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "eval/layer_math.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/first_layer.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/two_layer.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/model/constants.h"
#include "ltsim/strings/sources.h"
#include "sim/window_state.h"

namespace ltsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// z is held in memory with a few words per position (and its far counts every 64 positions).
constexpr std::uint64_t kMaxZLength = std::uint64_t{1} << 22;
constexpr int kCheckpoint = 64;

// Calls visit(token) for every token of a source, in order.
template <typename Visit>
void ForEachToken(const Source& source, Visit&& visit) {
  auto reader = source.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    const std::uint64_t n = chunk.length();
    if (chunk.kind == Chunk::Kind::kRun) {
      for (std::uint64_t k = 0; k < n; ++k) visit(chunk.run.token);
    } else {
      for (std::uint64_t k = 0; k < n; ++k) visit(chunk.at(static_cast<std::size_t>(k)));
    }
  }
}

// Radius of a ball holding every column of `v`: the smaller of the distances from the
// bounding box's centre and from the centroid.
double Radius(const Matrix& v) {
  if (v.cols() == 0) return 0.0;
  const Vector lo = v.rowwise().minCoeff(), hi = v.rowwise().maxCoeff();
  const Vector centres[2] = {(lo + hi) / 2, v.rowwise().mean()};
  double best = kInf;
  for (const Vector& c : centres)
    best = std::min(best, (v.colwise() - c).colwise().norm().maxCoeff());
  return best;
}

// The first layer's attention at a state (step 1): per head the distribution over far types
// κ (D entries) and suffix slots t (τ + 1 entries), by the rule every evaluator uses.
class LayerOneStates {
 public:
  explicit LayerOneStates(const Transformer& model)
      : model_(model),
        layer_(model.layers.front()),
        types_(model.types()),
        slots_(model.locality + 1),
        block_(types_ + slots_) {
    const int H = static_cast<int>(layer_.heads.size());
    std::vector<Vector> inputs;
    for (int r = 0; r < model.period; ++r)
      for (int s = 0; s < model.alphabet; ++s) inputs.push_back(InputVector(model, s, r));
    logits_.assign(static_cast<std::size_t>(H), std::vector<double>(types_ * types_));
    shifted_ = logits_;
    top_.assign(static_cast<std::size_t>(H), std::vector<double>(types_));
    radius_.resize(static_cast<std::size_t>(H));
    for (int h = 0; h < H; ++h) {
      const Head& head = layer_.heads[static_cast<std::size_t>(h)];
      Matrix values(model.width, types_);
      for (int q = 0; q < types_; ++q) {
        // The same product as OneLayerAttention's Logit(key, M·query): bit for bit.
        const Vector mq = head.qk * inputs[static_cast<std::size_t>(q)];
        double top = -kInf;
        for (int k = 0; k < types_; ++k) {
          const double a = inputs[static_cast<std::size_t>(k)].dot(mq);
          logits_[h][static_cast<std::size_t>(q * types_ + k)] = a;
          top = std::max(top, a);
        }
        top_[h][static_cast<std::size_t>(q)] = top;
        for (int k = 0; k < types_; ++k)
          shifted_[h][static_cast<std::size_t>(q * types_ + k)] =
              std::exp(logits_[h][static_cast<std::size_t>(q * types_ + k)] - top);
        values.col(q) = head.ov * inputs[static_cast<std::size_t>(q)];
      }
      radius_[static_cast<std::size_t>(h)] = Radius(values);
    }
    lipschitz_ =
        1.0 + (layer_.mlp ? SpectralNorm(layer_.mlp->out) * SpectralNorm(layer_.mlp->in) : 0.0);
  }

  /// Doubles per state: heads × (D + τ + 1).
  std::size_t size() const { return layer_.heads.size() * static_cast<std::size_t>(block_); }

  /// The distributions at position i with window w[0..m) (oldest first) and far counts `far`.
  void Attend(std::uint64_t i, const Token* w, int m, const std::uint64_t* far, double* out) const {
    const double position = static_cast<double>(i);
    const double beta = BiasScale(layer_.bias_scaling, position);
    const std::uint64_t period = static_cast<std::uint64_t>(model_.period);
    const int q = static_cast<int>(i % period) * model_.alphabet + w[m - 1];
    int slot_type[64];
    for (int t = 0; t < m; ++t)
      slot_type[t] =
          static_cast<int>((i - static_cast<std::uint64_t>(t)) % period) * model_.alphabet +
          w[m - 1 - t];
    for (std::size_t h = 0; h < layer_.heads.size(); ++h) {
      const Head& head = layer_.heads[h];
      const double* logit = &logits_[h][static_cast<std::size_t>(q * types_)];
      double* p = out + h * static_cast<std::size_t>(block_);
      double* ps = p + types_;
      double slot_logit[64];
      double a_max = -kInf, far_max = -kInf;
      for (int t = 0; t < m; ++t) {
        slot_logit[t] = logit[slot_type[t]] + beta * head.bias[t];
        a_max = std::max(a_max, slot_logit[t]);
      }
      for (int k = 0; k < types_; ++k)
        if (far[k] > 0) far_max = std::max(far_max, logit[k]);
      a_max = std::max(a_max, far_max);
      double total = 0.0;
      const double top = top_[h][static_cast<std::size_t>(q)];
      const bool table = layer_.attention == Attention::kSoftmax && top - a_max < 600.0;
      const double factor = table ? std::exp(top - a_max) : 0.0;
      const double* e = &shifted_[h][static_cast<std::size_t>(q * types_)];
      for (int k = 0; k < types_; ++k) {
        if (far[k] == 0) {
          p[k] = 0.0;
          continue;
        }
        const double w1 =
            table ? e[k] * factor
                  : AttentionWeight(layer_, model_.tie_tolerance, logit[k], a_max, position);
        p[k] = w1 * static_cast<double>(far[k]);
        total += p[k];
      }
      for (int t = 0; t < slots_; ++t) {
        ps[t] = t < m
                    ? AttentionWeight(layer_, model_.tie_tolerance, slot_logit[t], a_max, position)
                    : 0.0;
        total += ps[t];
      }
      for (int k = 0; k < block_; ++k) p[k] /= total;
    }
  }

  /// Lip(MLP₁)·Σ_h r_h·‖a_h − b_h‖₁: a bound on ‖y¹(σ) − y¹(σ')‖ for states with one window.
  double Distance(const double* a, const double* b) const {
    double sum = 0.0;
    for (std::size_t h = 0; h < layer_.heads.size(); ++h) {
      double l1 = 0.0;
      const std::size_t base = h * static_cast<std::size_t>(block_);
      for (int k = 0; k < block_; ++k) l1 += std::abs(a[base + k] - b[base + k]);
      sum += radius_[h] * l1;
    }
    return lipschitz_ * sum;
  }

 private:
  const Transformer& model_;
  const Layer& layer_;
  int types_, slots_, block_;
  std::vector<std::vector<double>> logits_, shifted_, top_;
  std::vector<double> radius_;
  double lipschitz_ = 1.0;
};

// The second layer's position masses μ_j = e^(b_j − b_max)/B̃ of one head on a string of length
// `length` (b_j = β₂(length)·φ[length − j] on the last τ + 1 positions, 0 elsewhere).
struct Masses {
  Masses(const Layer& layer, const Head& head, std::uint64_t length, int locality) {
    const double beta = BiasScale(layer.bias_scaling, static_cast<double>(length));
    const int m = static_cast<int>(std::min<std::uint64_t>(length, locality + 1));
    std::uint64_t far = length - static_cast<std::uint64_t>(m);
    near.resize(static_cast<std::size_t>(m));
    shift = far > 0 ? 0.0 : -kInf;
    for (int t = 0; t < m; ++t) {
      near[static_cast<std::size_t>(t)] = beta * head.bias[t];
      shift = std::max(shift, near[static_cast<std::size_t>(t)]);
    }
    total = static_cast<double>(far) * std::exp(-shift);
    for (double& b : near) total += std::exp(b - shift);
    this->length = length;
  }
  /// b_j of position j.
  double bias(std::uint64_t j) const {
    const std::uint64_t t = length - j;
    return t < near.size() ? near[static_cast<std::size_t>(t)] : 0.0;
  }
  double mass(std::uint64_t j) const { return std::exp(bias(j) - shift) / total; }
  std::vector<double> near;
  double shift = 0.0, total = 0.0;
  std::uint64_t length = 0;
};

// A running max-shifted softmax sum Σ e^(a − A)·y and Σ e^(a − A).
struct SoftmaxSum {
  explicit SoftmaxSum(int width) : sum(Vector::Zero(width)) {}
  void Add(double a, const Vector& y) {
    if (a > shift) {
      if (std::isfinite(shift)) {
        const double f = std::exp(shift - a);
        sum *= f;
        total *= f;
      }
      shift = a;
    }
    const double w = std::exp(a - shift);
    sum += w * y;
    total += w;
  }
  Vector sum;
  double total = 0.0, shift = -kInf;
};

// What the coupling needs of one second-layer head on one string: its query (x's), masses,
// the shift and total of its weights, and the weight w = α/μ of position j from its logit.
struct HeadSide {
  HeadSide(const Layer& layer, const Head& head, std::uint64_t length, int locality)
      : masses(layer, head, length, locality) {}
  double Weight(double content_logit) const {
    return std::exp(content_logit - shift + masses.shift) * masses.total / total;
  }
  Masses masses;
  double shift = 0.0, total = 0.0;
};

// One window's positions of z in time order, and a coupling cursor per second-layer head.
struct ZWindow {
  std::vector<std::uint32_t> positions;  // 1-based positions of z
  std::vector<double> mass_x, mass_z;    // a_w and b_w per head
  std::vector<std::size_t> index;        // cursor per head: which position
  std::vector<double> remaining;         // cursor per head: its normalised mass not yet paired
  std::uint64_t cached = 0;              // the z position whose states `cache` holds
  std::vector<double> cache;
};

}  // namespace

std::string TwoLayerBoundRefusal(const Transformer& model) {
  if (model.layers.size() != 2) return "the two-layer bound needs a model with two layers";
  if (model.layers[1].attention != Attention::kSoftmax)
    return "the two-layer bound needs a softmax second layer (hardmax and finite attention "
           "jump with the query)";
  if (model.types() > kTwoLayerMaxTypes)
    return "the two-layer bound's tables need D = S·Delta <= " + std::to_string(kTwoLayerMaxTypes);
  if (!WindowCodesFit(model.alphabet, model.period, model.locality))
    return "the two-layer bound indexes windows by 62-bit codes: S^(tau+1)·max(Delta, tau + 2) "
           "must stay below 2^62";
  return "";
}

double FirstLayerStateDistance(const Transformer& model, const std::vector<Token>& a,
                               const std::vector<Token>& b) {
  LTSIM_CHECK(!model.layers.empty() && !a.empty() && !b.empty());
  StateTracker sa(model.alphabet, model.period, model.locality),
      sb(model.alphabet, model.period, model.locality);
  for (Token t : a) sa.Push(t);
  for (Token t : b) sb.Push(t);
  if (sa.code() != sb.code()) return kInf;
  const LayerOneStates states(model);
  std::vector<double> pa(states.size()), pb(states.size());
  states.Attend(sa.position(), sa.window(), sa.window_length(), sa.far(), pa.data());
  states.Attend(sb.position(), sb.window(), sb.window_length(), sb.far(), pb.data());
  return states.Distance(pa.data(), pb.data());
}

TwoLayerBound CertifyTwoLayerSimulation(const Transformer& model, const Source& x,
                                        const Source& z) {
  TwoLayerBound r;
  r.reason = TwoLayerBoundRefusal(model);
  if (!r.reason.empty()) return r;
  if (z.length() > kMaxZLength) {
    r.reason = "the two-layer bound holds z in memory: |z| <= " + std::to_string(kMaxZLength);
    return r;
  }
  const int S = model.alphabet, P = model.period, tau = model.locality, D = model.types();
  const std::vector<Token> zt = ReadAll(z, kMaxZLength);
  const std::uint64_t T = x.length(), n = zt.size();
  if (T == 0 || n == 0) {
    r.reason = "the two-layer bound needs non-empty x and z";
    return r;
  }
  const Layer& second = model.layers[1];
  const int G = static_cast<int>(second.heads.size());
  const LayerOneStates states(model);
  const std::size_t block = states.size();

  // The last positions (step 4) and the second layer's query of x.
  const TypeCounts cx = CountTypes(x, S, P, tau);
  const TypeCounts cz = CountTypes(zt, S, P, tau);
  const Vector y_last_x = FirstLayerOutput(model, cx), y_last_z = FirstLayerOutput(model, cz);
  {
    const int mx = static_cast<int>(cx.suffix.size()), mz = static_cast<int>(cz.suffix.size());
    const std::uint64_t code_x = WindowCode(cx.suffix.data(), mx, T, S, P, tau);
    const std::uint64_t code_z = WindowCode(cz.suffix.data(), mz, n, S, P, tau);
    r.last_window_matches = code_x == code_z;
    if (r.last_window_matches) {
      std::vector<double> px(block), pz(block);
      states.Attend(T, cx.suffix.data(), mx, cx.far.data(), px.data());
      states.Attend(n, cz.suffix.data(), mz, cz.far.data(), pz.data());
      r.last_position = states.Distance(px.data(), pz.data());
    } else {
      r.last_position = (y_last_x - y_last_z).norm();
    }
  }
  std::vector<Vector> queries, own_queries;
  std::vector<double> query_on_z(static_cast<std::size_t>(G), kInf);
  std::vector<double> ov_norm, qk_norm;
  for (const Head& head : second.heads) {
    queries.push_back(head.qk * y_last_x);
    own_queries.push_back(head.qk * y_last_z);
    ov_norm.push_back(SpectralNorm(head.ov));
    qk_norm.push_back(SpectralNorm(head.qk));
  }
  std::vector<HeadSide> xs, zs;
  for (const Head& head : second.heads) {
    xs.emplace_back(second, head, T, tau);
    zs.emplace_back(second, head, n, tau);
  }

  // z's windows, in time order, and its far counts every kCheckpoint positions.
  std::unordered_map<std::uint64_t, int> z_index;
  std::vector<ZWindow> windows;
  std::vector<int> z_window(n + 1);
  std::vector<std::uint64_t> checkpoints;
  {
    StateTracker st(S, P, tau);
    checkpoints.insert(checkpoints.end(), st.far(), st.far() + D);
    for (std::uint64_t k = 1; k <= n; ++k) {
      st.Push(zt[k - 1]);
      auto [it, fresh] = z_index.emplace(st.code(), static_cast<int>(windows.size()));
      if (fresh) windows.emplace_back();
      windows[static_cast<std::size_t>(it->second)].positions.push_back(
          static_cast<std::uint32_t>(k));
      z_window[k] = it->second;
      if (k % kCheckpoint == 0) checkpoints.insert(checkpoints.end(), st.far(), st.far() + D);
    }
  }
  for (ZWindow& w : windows) {
    w.mass_x.assign(static_cast<std::size_t>(G), 0.0);
    w.mass_z.assign(static_cast<std::size_t>(G), 0.0);
    w.index.assign(static_cast<std::size_t>(G), 0);
    w.remaining.assign(static_cast<std::size_t>(G), 0.0);
  }
  const bool cache = windows.size() * block <= (std::size_t{1} << 24);
  // The states of z's position k (from the last checkpoint at or before k).
  std::vector<std::uint64_t> far_buffer(static_cast<std::size_t>(D));
  auto attend_z = [&](std::uint64_t k, double* out) {
    const std::uint64_t c = k / kCheckpoint;
    std::copy_n(checkpoints.begin() + static_cast<std::ptrdiff_t>(c * D), D, far_buffer.begin());
    const std::uint64_t far_end = k > static_cast<std::uint64_t>(tau) + 1 ? k - tau - 1 : 0;
    const std::uint64_t far_begin =
        c * kCheckpoint > static_cast<std::uint64_t>(tau) + 1 ? c * kCheckpoint - tau - 1 : 0;
    for (std::uint64_t p = far_begin + 1; p <= far_end; ++p)
      ++far_buffer[static_cast<std::size_t>(p % static_cast<std::uint64_t>(P)) * S + zt[p - 1]];
    const int m = static_cast<int>(std::min<std::uint64_t>(k, static_cast<std::uint64_t>(tau) + 1));
    states.Attend(k, zt.data() + (k - static_cast<std::uint64_t>(m)), m, far_buffer.data(), out);
  };

  // Pass 1 over x: each head's output o_x (query of x), its weights' shift and total, and
  // the masses a_w of z's windows.
  std::vector<Vector> o_x;
  {
    std::vector<SoftmaxSum> sums(static_cast<std::size_t>(G), SoftmaxSum(model.width));
    FirstLayerStream stream(model);
    StateTracker st(S, P, tau);
    ForEachToken(x, [&](Token token) {
      const Vector& y = stream.Push(token);
      st.Push(token);
      const std::uint64_t j = st.position();
      const auto found = z_index.find(st.code());
      for (int g = 0; g < G; ++g) {
        const double b = xs[static_cast<std::size_t>(g)].masses.bias(j);
        sums[static_cast<std::size_t>(g)].Add(y.dot(queries[static_cast<std::size_t>(g)]) + b, y);
        if (found != z_index.end())
          windows[static_cast<std::size_t>(found->second)].mass_x[static_cast<std::size_t>(g)] +=
              xs[static_cast<std::size_t>(g)].masses.mass(j);
      }
    });
    for (int g = 0; g < G; ++g) {
      const SoftmaxSum& s = sums[static_cast<std::size_t>(g)];
      xs[static_cast<std::size_t>(g)].shift = s.shift;
      xs[static_cast<std::size_t>(g)].total = s.total;
      o_x.push_back(s.sum / s.total);
    }
  }

  // Passes over z: its weights under x's query (shift, total), the radii of {y'} and {O_g y'},
  // then per position and head w'_k and ‖O_g(y'_k − o_x)‖, and z's unmatched sums.
  std::vector<double> z_weight(static_cast<std::size_t>(n + 1) * G),
      z_distance(static_cast<std::size_t>(n + 1) * G);
  double r_z = 0.0;
  std::vector<double> r_oz(static_cast<std::size_t>(G), 0.0);
  std::vector<double> z_left_weighted(static_cast<std::size_t>(G), 0.0),
      z_left_mass(static_cast<std::size_t>(G), 0.0);
  {
    const int d = model.width;
    Vector lo = Vector::Constant(d, kInf), hi = Vector::Constant(d, -kInf);
    std::vector<Vector> olo(static_cast<std::size_t>(G), Vector::Constant(d, kInf)),
        ohi(static_cast<std::size_t>(G), Vector::Constant(d, -kInf));
    std::vector<SoftmaxSum> sums(static_cast<std::size_t>(G), SoftmaxSum(d)),
        own(static_cast<std::size_t>(G), SoftmaxSum(d));
    {
      FirstLayerStream stream(model);
      for (std::uint64_t k = 1; k <= n; ++k) {
        const Vector& y = stream.Push(zt[k - 1]);
        lo = lo.cwiseMin(y);
        hi = hi.cwiseMax(y);
        for (int g = 0; g < G; ++g) {
          const Vector oy = second.heads[static_cast<std::size_t>(g)].ov * y;
          olo[static_cast<std::size_t>(g)] = olo[static_cast<std::size_t>(g)].cwiseMin(oy);
          ohi[static_cast<std::size_t>(g)] = ohi[static_cast<std::size_t>(g)].cwiseMax(oy);
          const double b = zs[static_cast<std::size_t>(g)].masses.bias(k);
          sums[static_cast<std::size_t>(g)].Add(y.dot(queries[static_cast<std::size_t>(g)]) + b, y);
          own[static_cast<std::size_t>(g)].Add(y.dot(own_queries[static_cast<std::size_t>(g)]) + b,
                                               y);
          windows[static_cast<std::size_t>(z_window[k])].mass_z[static_cast<std::size_t>(g)] +=
              zs[static_cast<std::size_t>(g)].masses.mass(k);
        }
      }
    }
    for (int g = 0; g < G; ++g) {
      const std::size_t gi = static_cast<std::size_t>(g);
      zs[gi].shift = sums[gi].shift;
      zs[gi].total = sums[gi].total;
      // Step 3 measured on z: ‖O_g(o(ν_z, q_x) − o(ν_z, q_z))‖.
      query_on_z[gi] =
          (second.heads[gi].ov * (sums[gi].sum / sums[gi].total - own[gi].sum / own[gi].total))
              .norm();
    }
    const Vector centre = (lo + hi) / 2;
    FirstLayerStream stream(model);
    for (std::uint64_t k = 1; k <= n; ++k) {
      const Vector& y = stream.Push(zt[k - 1]);
      r_z = std::max(r_z, (y - centre).norm());
      const ZWindow& w = windows[static_cast<std::size_t>(z_window[k])];
      for (int g = 0; g < G; ++g) {
        const std::size_t gi = static_cast<std::size_t>(g);
        const Matrix& ov = second.heads[gi].ov;
        const Vector oy = ov * y;
        r_oz[gi] = std::max(r_oz[gi], (oy - (olo[gi] + ohi[gi]) / 2).norm());
        const double weight = zs[gi].Weight(y.dot(queries[gi]));
        const double distance = (oy - ov * o_x[gi]).norm();
        z_weight[k * G + gi] = weight;
        z_distance[k * G + gi] = distance;
        const double matched = std::min(w.mass_x[gi], w.mass_z[gi]);
        const double left = zs[gi].masses.mass(k) * (1.0 - matched / w.mass_z[gi]);
        if (left > 0.0) {
          z_left_weighted[gi] += left * weight * distance;
          z_left_mass[gi] += left * weight;
        }
      }
    }
  }
  for (ZWindow& w : windows)
    for (int g = 0; g < G; ++g)
      w.remaining[static_cast<std::size_t>(g)] =
          zs[static_cast<std::size_t>(g)].masses.mass(w.positions.front()) /
          w.mass_z[static_cast<std::size_t>(g)];

  // Pass 2 over x: the quantile coupling of each window, head by head.
  std::vector<double> transport(static_cast<std::size_t>(G), 0.0),
      x_left(static_cast<std::size_t>(G), 0.0), x_left_distance(static_cast<std::size_t>(G), 0.0),
      coupled(static_cast<std::size_t>(G), 0.0), unmatched_mass(static_cast<std::size_t>(G), 0.0);
  {
    FirstLayerStream stream(model);
    StateTracker st(S, P, tau);
    std::vector<double> px(block), pz(block);
    ForEachToken(x, [&](Token token) {
      const Vector& y = stream.Push(token);
      st.Push(token);
      const std::uint64_t j = st.position();
      const auto found = z_index.find(st.code());
      ZWindow* w =
          found == z_index.end() ? nullptr : &windows[static_cast<std::size_t>(found->second)];
      bool attended = false;
      for (int g = 0; g < G; ++g) {
        const std::size_t gi = static_cast<std::size_t>(g);
        const double mu = xs[gi].masses.mass(j);
        const double wj = xs[gi].Weight(y.dot(queries[gi]));
        const double ej = (second.heads[gi].ov * (y - o_x[gi])).norm();
        double left = mu;
        if (w != nullptr && w->mass_z[gi] > 0.0) {
          if (!attended) {
            states.Attend(j, st.window(), st.window_length(), st.far(), px.data());
            attended = true;
          }
          const double matched = std::min(w->mass_x[gi], w->mass_z[gi]);
          double u = mu / w->mass_x[gi];  // x's normalised mass still to pair
          left = mu - matched * u;
          while (u > 0.0 && w->index[gi] < w->positions.size()) {
            const std::uint64_t k = w->positions[w->index[gi]];
            const double t = std::min(u, w->remaining[gi]);
            const double* pk = pz.data();
            if (cache) {
              if (w->cached != k) {
                w->cache.resize(block);
                attend_z(k, w->cache.data());
                w->cached = k;
              }
              pk = w->cache.data();
            } else {
              attend_z(k, pz.data());
            }
            const double c = states.Distance(px.data(), pk);
            const double wk = z_weight[k * G + gi];
            transport[gi] += matched * t * (wk * ov_norm[gi] * c + std::abs(wj - wk) * ej);
            coupled[gi] += matched * t * c;
            u -= t;
            w->remaining[gi] -= t;
            if (w->remaining[gi] <= 0.0 && ++w->index[gi] < w->positions.size())
              w->remaining[gi] = zs[gi].masses.mass(w->positions[w->index[gi]]) / w->mass_z[gi];
          }
          if (u > 0.0) left += matched * u;  // rounding left x's mass unpaired
        }
        if (left > 0.0) {
          unmatched_mass[gi] += left;
          x_left[gi] += left * wj * ej;
          x_left_distance[gi] += left * ej;
        }
      }
    });
  }

  double transport_sum = 0.0, unmatched_sum = 0.0, query_sum = 0.0, mass = 0.0, distance = 0.0;
  for (int g = 0; g < G; ++g) {
    const std::size_t gi = static_cast<std::size_t>(g);
    // The leftovers are coupled by the product coupling λ_j·λ'_k/U: x's side enters through
    // the λ-weighted mean of e_j (docs/theory.md §4.7, step 2).
    const double mean_left =
        unmatched_mass[gi] > 0.0 ? x_left_distance[gi] / unmatched_mass[gi] : 0.0;
    transport_sum += transport[gi];
    unmatched_sum += x_left[gi] + z_left_weighted[gi] + 2.0 * mean_left * z_left_mass[gi];
    query_sum += std::min(r_oz[gi] * r_z * qk_norm[gi] * r.last_position, query_on_z[gi]);
    mass = std::max(mass, unmatched_mass[gi]);
    distance = std::max(distance, coupled[gi]);
  }
  r.output_factor = ReadoutLipschitz(model);
  r.transport = transport_sum;
  r.unmatched = unmatched_sum;
  r.query = query_sum;
  r.unmatched_mass = mass;
  r.coupled_distance = distance;
  r.bound = r.output_factor * (r.last_position + transport_sum + unmatched_sum + query_sum);
  return r;
}

}  // namespace ltsim
