// The expected gap of a one-layer pair under the Dirichlet prior, summed exactly over the
// sufficient statistics of every length (docs/theory.md §13).
#include "ltsim/threshold/average.h"

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "ltsim/core/error.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/threshold/threshold.h"
#include "threshold/cells.h"
#include "threshold/statistics.h"

namespace ltsim {
namespace {

using threshold::BuildPairTable;
using threshold::ContextKey;
using threshold::EvaluateSide;
using threshold::ModelTable;
using threshold::OutputGap;
using threshold::PairTable;
using threshold::SideValue;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Neumaier's compensated sum: the per-length sums add up to T^(D*) terms of very different size.
struct Sum {
  double s = 0.0, c = 0.0;
  void Add(double x) {
    const double t = s + x;
    c += std::abs(s) >= std::abs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  double value() const { return s + c; }
};

// ln n!, ln Γ(α_s + n)/Γ(α_s) and ln Γ(A + n)/Γ(A) for n ≤ N (docs/theory.md §13.1).
struct LogTables {
  std::vector<double> factorial;
  std::vector<std::vector<double>> rising;  // [s][n]
  std::vector<double> rising_total;         // A = Σ α_s
  LogTables(const std::vector<double>& alphas, std::uint64_t n_max) {
    const double total = std::accumulate(alphas.begin(), alphas.end(), 0.0);
    factorial.resize(n_max + 1);
    rising_total.resize(n_max + 1);
    rising.assign(alphas.size(), std::vector<double>(n_max + 1));
    const double lg_total = std::lgamma(total);
    for (std::uint64_t n = 0; n <= n_max; ++n) {
      const double x = static_cast<double>(n);
      factorial[n] = std::lgamma(x + 1.0);
      rising_total[n] = std::lgamma(total + x) - lg_total;
    }
    for (std::size_t s = 0; s < alphas.size(); ++s) {
      const double lg = std::lgamma(alphas[s]);
      for (std::uint64_t n = 0; n <= n_max; ++n)
        rising[s][n] = std::lgamma(alphas[s] + static_cast<double>(n)) - lg;
    }
  }
  // ln P(one string with token counts n) = Σ_s ln α_s^(n_s) − ln A^(T) (rising factorials).
  double String(const std::vector<std::uint64_t>& n, std::uint64_t length) const {
    double v = -rising_total[length];
    for (std::size_t s = 0; s < n.size(); ++s) v += rising[s][n[s]];
    return v;
  }
};

// The certified range of a model's outputs over every attention distribution on the context's
// slots: [lo_k, hi_k] (docs/theory.md §13.4).
void OutputRange(const ModelTable& t, std::vector<double>& lo, std::vector<double>& hi) {
  const int H = static_cast<int>(t.heads.size());
  const int slots = H == 0 ? 0 : static_cast<int>(t.heads[0].logit.size());
  const int K = t.outputs, M = t.neurons;
  const auto range = [&](const std::vector<double>& table, int row, double& a, double& b) {
    for (int h = 0; h < H; ++h) {
      double mn = kInf, mx = -kInf;
      for (int j = 0; j < slots; ++j) {
        const double v = table[(static_cast<std::size_t>(row) * H + h) * slots + j];
        mn = std::min(mn, v);
        mx = std::max(mx, v);
      }
      a += mn;
      b += mx;
    }
  };
  std::vector<double> z_lo(M), z_hi(M);
  for (int a = 0; a < M; ++a) {
    z_lo[a] = z_hi[a] = t.pre_base[a];
    range(t.Q, a, z_lo[a], z_hi[a]);
  }
  lo.assign(K, 0.0);
  hi.assign(K, 0.0);
  for (int k = 0; k < K; ++k) {
    double a_lo = t.out_base[k], a_hi = t.out_base[k], scale = std::abs(t.out_base[k]);
    range(t.P, k, a_lo, a_hi);
    for (int a = 0; a < M; ++a) {
      const double wb = t.WB[static_cast<std::size_t>(k) * M + a];
      const double r_lo = std::max(z_lo[a], 0.0), r_hi = std::max(z_hi[a], 0.0);
      a_lo += std::min(wb * r_lo, wb * r_hi);
      a_hi += std::max(wb * r_lo, wb * r_hi);
      scale += std::abs(wb) * std::max(std::abs(z_lo[a]), std::abs(z_hi[a]));
    }
    scale += std::abs(a_lo) + std::abs(a_hi);
    // The sums above round; widen by far more than their rounding.
    lo[k] = a_lo - 1e-12 * (1.0 + scale);
    hi[k] = a_hi + 1e-12 * (1.0 + scale);
  }
}

// [L, G] ∋ ‖f − g‖_∞ for every statistic of a context (docs/theory.md §13.4).
std::pair<double, double> ContextGapRange(const PairTable& table) {
  std::vector<double> f_lo, f_hi, g_lo, g_hi;
  OutputRange(table.side[0], f_lo, f_hi);
  OutputRange(table.side[1], g_lo, g_hi);
  double lower = 0.0, upper = 0.0;
  for (std::size_t k = 0; k < f_lo.size(); ++k) {
    upper = std::max({upper, f_hi[k] - g_lo[k], g_hi[k] - f_lo[k]});
    lower = std::max({lower, f_lo[k] - g_hi[k], g_lo[k] - f_hi[k]});
  }
  if (!std::isfinite(upper)) upper = kInf;
  return {lower, upper};
}

struct LengthSum {
  double lower = 0.0, upper = 0.0, mass = 0.0, scale = 1.0;
  std::uint64_t evaluated = 0;
};

class Averager {
 public:
  Averager(const Transformer& f, const Transformer& g, const JointView& view,
           const AverageOptions& options)
      : f_(f),
        g_(g),
        view_(view),
        S_(view.alphabet),
        D_(view.alphabet * view.period),
        m_(view.locality + 1),
        log_scaling_(f.layers.front().bias_scaling == BiasScaling::kLog ||
                     g.layers.front().bias_scaling == BiasScaling::kLog),
        logs_(options.alphas, options.max_length) {
    suffixes_ = 1;
    for (int i = 0; i < m_; ++i) suffixes_ *= static_cast<std::uint64_t>(S_);
    if (!log_scaling_) {
      tables_.resize(static_cast<std::size_t>(view.period) * suffixes_);
      ranges_.resize(tables_.size());
      for (int r = 0; r < view.period; ++r)
        for (std::uint64_t u = 0; u < suffixes_; ++u) {
          const std::size_t i = static_cast<std::size_t>(r) * suffixes_ + u;
          tables_[i] = BuildPairTable(f, g, view, Key(r, u, 0));
          ranges_[i] = ContextGapRange(tables_[i]);
        }
    }
  }

  // Every statistic of length T evaluated and weighted by its probability.
  LengthSum Exact(std::uint64_t length) const {
    return length <= static_cast<std::uint64_t>(m_) ? Short(length) : Long(length);
  }

  // Length T bracketed context by context: P(suffix u)·[L_u, G_u].
  LengthSum Bracket(std::uint64_t length) const {
    LengthSum out;
    Sum lower, upper;
    const int r = static_cast<int>(length % view_.period);
    std::vector<std::uint64_t> k(S_);
    for (std::uint64_t u = 0; u < suffixes_; ++u) {
      const ContextKey key = Key(r, u, length);
      std::fill(k.begin(), k.end(), 0);
      for (int s : key.suffix) ++k[s];
      const double p = std::exp(logs_.String(k, m_));
      std::pair<double, double> range;
      if (log_scaling_)
        range = ContextGapRange(BuildPairTable(f_, g_, view_, key));
      else
        range = ranges_[static_cast<std::size_t>(r) * suffixes_ + u];
      lower.Add(p * range.first);
      upper.Add(p * range.second);
      out.mass += p;
    }
    out.lower = lower.value();
    out.upper = upper.value();
    return out;
  }

 private:
  ContextKey Key(int residue, std::uint64_t code, std::uint64_t length) const {
    ContextKey key;
    key.residue = residue;
    key.length = length;
    key.suffix.resize(m_);
    for (int i = m_ - 1; i >= 0; --i) {  // the last token varies fastest
      key.suffix[i] = static_cast<int>(code % S_);
      code /= S_;
    }
    return key;
  }

  // T ≤ τ* + 1: no far position; every string is its own statistic.
  LengthSum Short(std::uint64_t length) const {
    LengthSum out;
    Sum sum, mass;
    TypeCounts joint;
    joint.alphabet = S_;
    joint.period = view_.period;
    joint.locality = view_.locality;
    joint.length = length;
    joint.far.assign(D_, 0);
    joint.suffix.assign(length, 0);
    std::vector<std::uint64_t> n(S_);
    while (true) {
      std::fill(n.begin(), n.end(), 0);
      for (Token t : joint.suffix) ++n[t];
      const double p = std::exp(logs_.String(n, length));
      const Vector a = EvaluateOneLayer(f_, Coarsen(joint, f_.period, f_.locality));
      const Vector b = EvaluateOneLayer(g_, Coarsen(joint, g_.period, g_.locality));
      sum.Add(p * threshold::Gap(a, b));
      mass.Add(p);
      out.scale = std::max({out.scale, a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff()});
      ++out.evaluated;
      std::size_t i = joint.suffix.size();
      while (i > 0 && ++joint.suffix[i - 1] == S_) joint.suffix[--i] = 0;
      if (i == 0) break;
    }
    out.lower = out.upper = sum.value();
    out.mass = mass.value();
    return out;
  }

  // T > τ* + 1: far counts c_κ (κ = r·S + s) of every residue class, and the last τ* + 1 tokens.
  // P = Π_r N_r!/Π_s c_(s,r)! · Π_s α_s^(n_s) / A^(T) with n_s = Σ_r c_(s,r) + #{s in the suffix}
  // (docs/theory.md §13.2).
  LengthSum Long(std::uint64_t length) const {
    LengthSum out;
    Sum sum, mass;
    const int period = view_.period;
    const std::uint64_t far = length - m_;
    const int r = static_cast<int>(length % period);
    std::vector<std::uint64_t> class_size(period);
    double log_arrangements = 0.0;
    for (int q = 0; q < period; ++q) {
      class_size[q] = threshold::ClassSize(far, period, q);
      log_arrangements += logs_.factorial[class_size[q]];
    }
    std::vector<std::uint64_t> c(D_), n(S_), k(S_);
    SideValue va, vb;
    for (std::uint64_t u = 0; u < suffixes_; ++u) {
      const ContextKey key = Key(r, u, length);
      PairTable local;
      const PairTable* table = &local;
      if (log_scaling_)
        local = BuildPairTable(f_, g_, view_, key);
      else
        table = &tables_[static_cast<std::size_t>(r) * suffixes_ + u];
      std::fill(k.begin(), k.end(), 0);
      for (int s : key.suffix) ++k[s];
      std::fill(c.begin(), c.end(), 0);
      for (int q = 0; q < period; ++q) c[static_cast<std::size_t>(q) * S_] = class_size[q];
      while (true) {
        double lp = log_arrangements - logs_.rising_total[length];
        for (int s = 0; s < S_; ++s) n[s] = k[s];
        for (int kappa = 0; kappa < D_; ++kappa) {
          lp -= logs_.factorial[c[kappa]];
          n[kappa % S_] += c[kappa];
        }
        for (int s = 0; s < S_; ++s) lp += logs_.rising[s][n[s]];
        const double p = std::exp(lp);
        EvaluateSide(table->side[0], D_, c, length, va);
        EvaluateSide(table->side[1], D_, c, length, vb);
        sum.Add(p * OutputGap(va.out, vb.out));
        mass.Add(p);
        for (double y : va.out) out.scale = std::max(out.scale, std::abs(y));
        for (double y : vb.out) out.scale = std::max(out.scale, std::abs(y));
        ++out.evaluated;
        int q = period - 1;
        while (q >= 0 && !NextComposition(&c[static_cast<std::size_t>(q) * S_], S_)) --q;
        if (q < 0) break;
      }
    }
    out.lower = out.upper = sum.value();
    out.mass = mass.value();
    return out;
  }

  const Transformer& f_;
  const Transformer& g_;
  const JointView view_;
  const int S_, D_, m_;
  const bool log_scaling_;
  const LogTables logs_;
  std::uint64_t suffixes_ = 1;
  std::vector<PairTable> tables_;
  std::vector<std::pair<double, double>> ranges_;
};

void CheckAverage(const Transformer& f, const Transformer& g, const AverageOptions& o,
                  JointView& view) {
  if (f.layers.size() != 1 || g.layers.size() != 1)
    throw InputError(fmt::format(
        "average: the average case is not exact for two layers (F has {} layer(s), G has {}); "
        "one-layer pairs only",
        f.layers.size(), g.layers.size()));
  if (f.outputs() != g.outputs())
    throw InputError(fmt::format("average: F has {} outputs and G has {}; they must match",
                                 f.outputs(), g.outputs()));
  view = JointViewOf({&f, &g});  // throws on different alphabets
  if (o.alphas.size() != static_cast<std::size_t>(view.alphabet))
    throw OptionError("alphas", fmt::format("has {} values; the models' alphabet has {} tokens",
                                            o.alphas.size(), view.alphabet));
  for (std::size_t s = 0; s < o.alphas.size(); ++s)
    if (!std::isfinite(o.alphas[s]) || o.alphas[s] <= 0.0 || o.alphas[s] > 1e12)
      throw OptionError("alphas",
                        fmt::format("α_{} = {} must be finite, > 0 and ≤ 1e12", s, o.alphas[s]));
  if (o.max_length < 1 || o.max_length > kAverageMaxLength)
    throw OptionError("max_length",
                      fmt::format("must be in [1, {}], not {}", kAverageMaxLength, o.max_length));
  if ((static_cast<std::uint64_t>(view.alphabet) + 2) * (o.max_length + 1) >
      kAverageMaxTableEntries)
    throw OptionError(
        "max_length",
        fmt::format("{} needs log tables of (S + 2)·(N + 1) = {} entries at S = {}, "
                    "over the limit of {}",
                    o.max_length,
                    (static_cast<std::uint64_t>(view.alphabet) + 2) * (o.max_length + 1),
                    view.alphabet, kAverageMaxTableEntries));
  if (o.epsilon && (!std::isfinite(*o.epsilon) || *o.epsilon < 0.0))
    throw OptionError("epsilon", fmt::format("must be finite and ≥ 0, not {}", *o.epsilon));
  const long long types = static_cast<long long>(view.alphabet) * view.period;
  if (types > kThresholdMaxTypes)
    throw InputError(fmt::format("average: D* = S·Δ* = {}·{} types, over the limit of {}",
                                 view.alphabet, view.period, kThresholdMaxTypes));
  if (view.locality > kThresholdMaxLocality)
    throw InputError(fmt::format("average: τ* = {}, over the limit of {}", view.locality,
                                 kThresholdMaxLocality));
  std::uint64_t contexts = static_cast<std::uint64_t>(view.period);
  for (int i = 0; i <= view.locality; ++i)
    contexts = threshold::SaturatingMul(contexts, static_cast<std::uint64_t>(view.alphabet));
  if (contexts > kAverageMaxContexts)
    throw InputError(fmt::format("average: Δ*·S^(τ*+1) = {}·{}^{} contexts, over the limit of {}",
                                 view.period, view.alphabet, view.locality + 1,
                                 kAverageMaxContexts));
}

}  // namespace

AverageResult AverageGap(const Transformer& f, const Transformer& g,
                         const AverageOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  AverageResult result;
  CheckAverage(f, g, options, result.view);
  const JointView view = result.view;
  const std::uint64_t N = options.max_length;
  const std::uint64_t m = static_cast<std::uint64_t>(view.locality) + 1;
  // Lengths ≤ τ* + 1 are always summed (S^T ≤ the context limit); longer ones while the
  // cumulative count of statistics stays within the budget.
  std::uint64_t exact_to = 0, total = 0;
  for (std::uint64_t t = 1; t <= N; ++t) {
    const std::uint64_t count = CountStatistics(view.alphabet, view.period, view.locality, t);
    total = threshold::SaturatingAdd(total, count);
    if (t > m && total > options.max_statistics) break;
    exact_to = t;
  }
  for (std::uint64_t t = exact_to + 1; t <= N; ++t)
    result.statistics_pruned = threshold::SaturatingAdd(
        result.statistics_pruned, CountStatistics(view.alphabet, view.period, view.locality, t));

  const Averager averager(f, g, view, options);
  std::vector<LengthSum> sums(N);
  const int threads =
      options.threads > 0 ? options.threads : oneapi::tbb::this_task_arena::max_concurrency();
  result.threads = threads;
  oneapi::tbb::task_arena arena(threads);
  // Chunks of lengths, so that progress is reported from this thread; each length's sum is
  // computed by one task in a fixed order, so no result depends on the threads.
  const std::uint64_t chunk = std::max<std::uint64_t>(64, 8 * static_cast<std::uint64_t>(threads));
  for (std::uint64_t begin = 0; begin < N; begin += chunk) {
    const std::uint64_t end = std::min(N, begin + chunk);
    arena.execute([&] {
      oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<std::uint64_t>(begin, end, 1),
                                [&](const oneapi::tbb::blocked_range<std::uint64_t>& range) {
                                  for (std::uint64_t i = range.begin(); i != range.end(); ++i) {
                                    const std::uint64_t t = i + 1;
                                    sums[i] =
                                        t <= exact_to ? averager.Exact(t) : averager.Bracket(t);
                                  }
                                });
    });
    if (options.progress) options.progress(end, N);
  }

  result.lower.resize(N);
  result.upper.resize(N);
  result.mass.resize(N);
  result.exact_per_length.resize(N);
  result.exact_up_to = exact_to;
  const double eps = options.epsilon.value_or(0.0);
  bool searching = options.epsilon.has_value();
  for (std::uint64_t i = 0; i < N; ++i) {
    const LengthSum& s = sums[i];
    result.lower[i] = s.lower;
    result.upper[i] = s.upper;
    result.mass[i] = s.mass;
    result.exact_per_length[i] = i + 1 <= exact_to;
    result.statistics_evaluated += s.evaluated;
    if (result.exact_per_length[i])
      result.max_mass_error = std::max(result.max_mass_error, std::abs(s.mass - 1.0));
    if (searching) {
      const double boundary = eps + kThresholdGapTolerance * s.scale;
      if (s.lower > boundary) {
        result.first_average_disagreement = i + 1;
        searching = false;
      } else if (s.upper > boundary) {
        result.decided = false;
        searching = false;
      }
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace ltsim
