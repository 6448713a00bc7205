// Adversarial test functions for Lemma 5.3's statistic, and their rate over n (docs/lemma53.md).
#include "ltsim/study/statistic_attack.h"

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <limits>

#include "ltsim/check/lemma53.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/sim/simulator.h"
#include "ltsim/strings/sources.h"
#include "ltsim/study/verdict.h"

namespace ltsim {
namespace {

constexpr int kMaxWindows = 4096;

struct Params {
  double s = 1, theta = 0;
  std::vector<double> b;
};

// The window index of x_{t−τ..t} (shorter at the start): Σ_{l < len} S^l + base-S value.
class WindowCoder {
 public:
  WindowCoder(int alphabet, int locality) : s_(alphabet), capacity_(locality + 1) {
    std::uint64_t count = 0, power = 1;
    for (int l = 1; l <= capacity_; ++l) {
      offset_.push_back(count);
      power *= static_cast<std::uint64_t>(s_);
      count += power;
      if (count > kMaxWindows)
        throw OptionError("locality", "more than 4096 windows S^(τ+1) at this alphabet S");
    }
    windows_ = static_cast<int>(count);
  }
  int windows() const { return windows_; }
  int Push(Token t) {
    window_.push_back(t);
    if (static_cast<int>(window_.size()) > capacity_) window_.erase(window_.begin());
    std::uint64_t code = 0;
    for (Token u : window_) code = code * static_cast<std::uint64_t>(s_) + u;
    return static_cast<int>(offset_[window_.size() - 1] + code);
  }

 private:
  int s_, capacity_, windows_ = 0;
  std::vector<std::uint64_t> offset_;
  std::vector<Token> window_;
};

// Per window: the running histograms μ_t at the positions where that window ends, flattened.
// Compressed (x longer than AttackOptions::exact_trace): positions are grouped into time buckets
// (a, a(1 + ρ)] and a window's positions in one bucket share the histogram of its first one,
// with `weight` the count; every histogram then moves by at most 2ρ in ℓ1 (‖μ_t − μ_a‖₁ ≤
// 2(t − a)/t), which `slack` records (docs/lemma53.md §4).
struct Trajectory {
  std::vector<std::vector<double>> mu;      // [window] → S·k values
  std::vector<std::vector<double>> weight;  // [window] → k counts (empty: every count 1)
  std::uint64_t length = 0;
  double slack = 0;  // the ℓ1 distance by which a compressed histogram may be off
};

constexpr double kTraceBucket = 5e-5;

Trajectory Trace(const Source& s, int alphabet, int locality,
                 std::uint64_t exact = std::numeric_limits<std::uint64_t>::max()) {
  WindowCoder coder(alphabet, locality);
  Trajectory t;
  t.mu.resize(static_cast<std::size_t>(coder.windows()));
  const bool compress = s.length() > exact;
  std::vector<std::uint64_t> last_bucket;
  if (compress) {
    t.weight.resize(t.mu.size());
    last_bucket.assign(t.mu.size(), 0);
    t.slack = 2 * kTraceBucket;
  }
  std::uint64_t bucket = 0, bucket_start = 0;
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(alphabet), 0);
  auto reader = s.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    for (std::uint64_t j = 0; j < chunk.length(); ++j) {
      const Token token = chunk.at(static_cast<std::size_t>(j));
      if (token >= alphabet) throw InputError(fmt::format("token {} outside the alphabet", token));
      ++counts[token];
      ++t.length;
      const std::size_t w = static_cast<std::size_t>(coder.Push(token));
      std::vector<double>& m = t.mu[w];
      if (compress) {
        if (static_cast<double>(t.length) >
            static_cast<double>(bucket_start) * (1 + kTraceBucket)) {
          ++bucket;
          bucket_start = t.length;
        }
        if (last_bucket[w] == bucket) {
          t.weight[w].back() += 1;
          continue;
        }
        last_bucket[w] = bucket;
        t.weight[w].push_back(1);
      }
      for (int k = 0; k < alphabet; ++k)
        m.push_back(static_cast<double>(counts[k]) / static_cast<double>(t.length));
    }
  }
  return t;
}

double Clamp(double v) { return std::max(-1.0, std::min(1.0, v)); }

const std::vector<double>& Weights(const Trajectory& t, std::size_t w) {
  static const std::vector<double> kNone;
  return t.weight.empty() ? kNone : t.weight[w];
}

// D_w(b, θ) = (1/T) Σ_{t ∈ x, w_t = w} c(⟨b, μ_t⟩ − θ) − (1/n) Σ_{t ∈ z, w_t = w} c(…), each
// histogram counted `weight` times (compressed x).
double Contribution(const std::vector<double>& mx, const std::vector<double>& wx, std::uint64_t tx,
                    const std::vector<double>& mz, std::uint64_t tz, const Params& p) {
  const std::size_t s = p.b.size();
  const auto side = [&](const std::vector<double>& m, const std::vector<double>& weight) {
    double sum = 0;
    for (std::size_t i = 0; i < m.size(); i += s) {
      double dot = -p.theta;
      for (std::size_t k = 0; k < s; ++k) dot += p.b[k] * m[i + k];
      sum += (weight.empty() ? 1.0 : weight[i / s]) * Clamp(dot);
    }
    return sum;
  };
  return side(mx, wx) / static_cast<double>(tx) - side(mz, {}) / static_cast<double>(tz);
}

// The searched function as a TestFunction, so the error is rechecked by AverageOverPositions.
class ClampedLinearFunction : public TestFunction {
 public:
  ClampedLinearFunction(std::vector<Params> params, int alphabet, int locality, double lipschitz)
      : params_(std::move(params)), alphabet_(alphabet), locality_(locality), l_(lipschitz) {}
  std::string name() const override { return "adversarial clamp(<b_w, mu> - theta_w)"; }
  int alphabet() const override { return alphabet_; }
  int locality() const override { return locality_; }
  int dimension() const override { return 1; }
  double size_bound() const override { return 1.0; }
  double lipschitz() const override { return l_; }
  std::unique_ptr<TestFunctionPass> Begin() const override { return std::make_unique<Pass>(*this); }

 private:
  class Pass : public TestFunctionPass {
   public:
    explicit Pass(const ClampedLinearFunction& f)
        : f_(f), coder_(f.alphabet_, f.locality_), counts_(f.alphabet_, 0), value_(1) {}
    const Vector& Push(Token token) override {
      ++counts_[token];
      ++t_;
      const Params& p = f_.params_[static_cast<std::size_t>(coder_.Push(token))];
      double dot = -p.theta;
      for (int k = 0; k < f_.alphabet_; ++k)
        dot += p.b[k] * static_cast<double>(counts_[k]) / static_cast<double>(t_);
      value_[0] = p.s * Clamp(dot);
      return value_;
    }

   private:
    const ClampedLinearFunction& f_;
    WindowCoder coder_;
    std::vector<std::uint64_t> counts_;
    std::uint64_t t_ = 0;
    Vector value_;
  };
  std::vector<Params> params_;
  int alphabet_, locality_;
  double l_;
};

}  // namespace

double WindowTransportBound(const std::vector<double>& x, std::uint64_t tx,
                            const std::vector<double>& z, std::uint64_t tz, int alphabet,
                            double lipschitz, double size_bound) {
  const std::size_t s = static_cast<std::size_t>(alphabet);
  const std::uint64_t nx = x.size() / s, nz = z.size() / s;
  const double a = tx ? static_cast<double>(nx) / static_cast<double>(tx) : 0.0;
  const double b = tz ? static_cast<double>(nz) / static_cast<double>(tz) : 0.0;
  // The unmatched mass |a − b| costs at most G (|p| ≤ G) ...
  double bound = size_bound * std::abs(a - b);
  if (nx == 0 || nz == 0) return bound;
  // ... and the common mass m = min(a, b), spread evenly over each side's points, is moved by a
  // coupling: any coupling bounds ∫p d(α̃ − β̃) by Σ mass·min(L‖μ − μ'‖₁, 2G). Sorting both
  // sides lexicographically makes the north-west-corner coupling the monotone (optimal) one
  // for S = 2, where μ is one number; for S > 2 it is a feasible coupling, so still a bound.
  const auto sorted = [&](const std::vector<double>& v, std::uint64_t count) {
    std::vector<std::uint32_t> order(count);
    for (std::uint64_t i = 0; i < count; ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](std::uint32_t i, std::uint32_t j) {
      return std::lexicographical_compare(v.begin() + i * s, v.begin() + (i + 1) * s,
                                          v.begin() + j * s, v.begin() + (j + 1) * s);
    });
    return order;
  };
  const std::vector<std::uint32_t> ox = sorted(x, nx), oz = sorted(z, nz);
  // Integer masses: an x point carries nz units, a z point nx units (nx·nz in total each side).
  std::uint64_t i = 0, j = 0, rx = nz, rz = nx;
  double moved = 0;
  while (i < nx && j < nz) {
    const std::uint64_t q = std::min(rx, rz);
    double distance = 0;
    for (std::size_t k = 0; k < s; ++k) distance += std::abs(x[ox[i] * s + k] - z[oz[j] * s + k]);
    moved += static_cast<double>(q) * std::min(lipschitz * distance, 2 * size_bound);
    rx -= q;
    rz -= q;
    if (rx == 0) ++i, rx = nz;
    if (rz == 0) ++j, rz = nx;
  }
  return bound + moved * std::min(a, b) / (static_cast<double>(nx) * static_cast<double>(nz));
}

namespace {

// WindowTransportBound for x's histograms with counts `wx` (a compressed trajectory): masses
// wx_i/tx and 1/tz, both sides scaled to the common mass and paired by the north-west corner
// of their lexicographic orders.
double WeightedTransportBound(const std::vector<double>& x, const std::vector<double>& wx,
                              std::uint64_t tx, const std::vector<double>& z, std::uint64_t tz,
                              int alphabet, double lipschitz, double size_bound) {
  const std::size_t s = static_cast<std::size_t>(alphabet);
  const std::size_t nx = x.size() / s, nz = z.size() / s;
  double a = 0;
  for (double w : wx) a += w / static_cast<double>(tx);
  const double b = tz ? static_cast<double>(nz) / static_cast<double>(tz) : 0.0;
  double bound = size_bound * std::abs(a - b);
  if (nx == 0 || nz == 0) return bound;
  const auto sorted = [&](const std::vector<double>& v, std::size_t count) {
    std::vector<std::uint32_t> order(count);
    for (std::size_t i = 0; i < count; ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](std::uint32_t i, std::uint32_t j) {
      return std::lexicographical_compare(v.begin() + i * s, v.begin() + (i + 1) * s,
                                          v.begin() + j * s, v.begin() + (j + 1) * s);
    });
    return order;
  };
  const std::vector<std::uint32_t> ox = sorted(x, nx), oz = sorted(z, nz);
  // Normalised masses: x point i carries wx_i/(a·tx), a z point 1/nz; both sum to 1.
  std::size_t i = 0, j = 0;
  double rx = wx[ox[0]] / (a * static_cast<double>(tx)), rz = 1.0 / static_cast<double>(nz);
  double moved = 0;
  while (i < nx && j < nz) {
    const double q = std::min(rx, rz);
    double distance = 0;
    for (std::size_t k = 0; k < s; ++k) distance += std::abs(x[ox[i] * s + k] - z[oz[j] * s + k]);
    moved += q * std::min(lipschitz * distance, 2 * size_bound);
    rx -= q;
    rz -= q;
    if (rx <= 0 && ++i < nx) rx = wx[ox[i]] / (a * static_cast<double>(tx));
    if (rz <= 0 && ++j < nz) rz = 1.0 / static_cast<double>(nz);
  }
  return bound + moved * std::min(a, b);
}

}  // namespace

AttackResult AttackStatistic(const Source& x, const AttackOptions& o) {
  if (o.alphabet < 1) throw OptionError("alphabet", "must be at least 1");
  if (o.locality < 0) throw OptionError("locality", "must be at least 0");
  if (!(o.lipschitz >= 0) || !std::isfinite(o.lipschitz))
    throw OptionError("lipschitz", "must be finite and ≥ 0");
  if (o.length < 1) throw OptionError("length", "must be at least 1");
  JointView view{o.alphabet, 1, o.locality};
  if (!o.models.empty()) view = JointViewOf(o.models);
  const TypeCounts counts = CountTypes(x, view.alphabet, view.period, view.locality);
  const auto simulator = MakeSimulator(o.method);
  const Simulation sim =
      simulator->Simulate({x, counts, o.models, o.length, o.seed, o.block_length});
  const auto z = MakeRunSource(sim.z, "z");
  const Trajectory tx = Trace(x, o.alphabet, o.locality, o.exact_trace),
                   tz = Trace(*z, o.alphabet, o.locality);
  AttackResult r;
  r.x_length = tx.length;
  r.z_length = tz.length;
  boost::random::mt19937_64 engine(StreamSeed(o.seed, "attack"));
  boost::random::uniform_real_distribution<double> unit(-1, 1);
  boost::random::normal_distribution<double> normal(0, 1);
  const std::size_t windows = tx.mu.size();
  std::vector<Params> best(windows);
  for (std::size_t w = 0; w < windows; ++w) {
    best[w].b.assign(static_cast<std::size_t>(o.alphabet), 0.0);
    if (tx.mu[w].empty() && tz.mu[w].empty()) continue;
    ++r.windows;
    double best_value = -1;
    for (int restart = 0; restart < o.restarts; ++restart) {
      Params p;
      for (int k = 0; k < o.alphabet; ++k) p.b.push_back(o.lipschitz * unit(engine));
      p.theta = (o.lipschitz + 1) * unit(engine);
      double value =
          std::abs(Contribution(tx.mu[w], Weights(tx, w), tx.length, tz.mu[w], tz.length, p));
      for (int it = 0; it < o.iterations; ++it) {
        Params q = p;
        const double step = 0.3 * std::exp(-2.0 * it / std::max(1, o.iterations));
        for (double& b : q.b)
          b = std::clamp(b + step * o.lipschitz * normal(engine), -o.lipschitz, o.lipschitz);
        q.theta += step * (o.lipschitz + 1) * normal(engine);
        const double v =
            std::abs(Contribution(tx.mu[w], Weights(tx, w), tx.length, tz.mu[w], tz.length, q));
        if (v >= value) p = std::move(q), value = v;
      }
      if (value > best_value) best_value = value, best[w] = p;
    }
    best[w].s = Contribution(tx.mu[w], Weights(tx, w), tx.length, tz.mu[w], tz.length, best[w]) >= 0
                    ? 1
                    : -1;
    r.adversarial += best_value;
  }
  for (std::size_t w = 0; w < windows; ++w)
    r.certified += tx.weight.empty()
                       ? WindowTransportBound(tx.mu[w], tx.length, tz.mu[w], tz.length, o.alphabet,
                                              o.lipschitz)
                       : WeightedTransportBound(tx.mu[w], tx.weight[w], tx.length, tz.mu[w],
                                                tz.length, o.alphabet, o.lipschitz, 1.0);
  // A compressed x: each histogram moved by at most `slack` in ℓ1, worth L·slack over the whole
  // mass (docs/lemma53.md §4).
  r.certified += o.lipschitz * tx.slack;
  const ClampedLinearFunction adversary(best, o.alphabet, o.locality, o.lipschitz);
  r.rechecked =
      std::abs(AverageOverPositions(x, adversary)[0] - AverageOverPositions(*z, adversary)[0]);
  // The search on a compressed x optimised an approximation: the error reported is the found
  // function's exact one (a measurement, hence a lower bound on the supremum).
  if (!tx.weight.empty()) r.adversarial = r.rechecked;
  for (int k = 0; k < o.random_functions; ++k) {
    const RandomLipschitzFunction p(StreamSeed(o.seed, "attack-random", k), o.alphabet, o.locality,
                                    o.lipschitz);
    r.random_best = std::max(
        r.random_best, std::abs(AverageOverPositions(x, p)[0] - AverageOverPositions(*z, p)[0]));
  }
  r.reference_rate =
      (1 + o.lipschitz) * (o.locality + 1) / std::cbrt(static_cast<double>(o.length));
  for (std::size_t w = 0; w < windows && w < 4; ++w)
    r.function += fmt::format("{}w{}: s {} b [{:.3g}{}] θ {:.3g}", w ? "; " : "", w, best[w].s,
                              best[w].b[0], best[w].b.size() > 1 ? ", …" : "", best[w].theta);
  return r;
}

InputSearchResult SearchAdversarialInput(const InputSpec& start, const AttackOptions& attack,
                                         int proposals, std::uint64_t seed) {
  InputSearchResult best;
  best.spec = start;
  best.result = AttackStatistic(*MakeInput(start), attack);
  boost::random::mt19937_64 engine(StreamSeed(seed, "x-search"));
  const auto pick = [&](int n) {
    return boost::random::uniform_int_distribution<int>(0, n - 1)(engine);
  };
  const auto factor = [&](double f) { return pick(2) == 0 ? f : 1 / f; };
  for (int k = 0; k < proposals; ++k) {
    InputSpec spec = best.spec;
    if (AdaptsToLength(start.kind)) {
      // The run families (docs/lemma53.md §2): another run family, the run length ×/÷ 2 or
      // ×/÷ 1.25, or a new generator seed; x stays one of them, its run length now fitted to
      // this n by the climb.
      constexpr InputKind kRunKinds[] = {InputKind::kRuns, InputKind::kLongRuns,
                                         InputKind::kStride};
      const auto scaled = [&](double f) {
        const double r = static_cast<double>(spec.run_length) * factor(f);
        return static_cast<std::uint64_t>(std::clamp(std::llround(r), 1LL, 1LL << 40));
      };
      switch (pick(4)) {
        case 0:
          spec.kind = kRunKinds[pick(3)];
          break;
        case 1:
          spec.run_length = scaled(2);
          break;
        case 2:
          spec.run_length = scaled(1.25);
          break;
        default:
          spec.seed = StreamSeed(seed, "x-search-seed", static_cast<std::uint64_t>(k));
          break;
      }
    } else
      switch (pick(6)) {
        case 0:  // another fixed generator family (stress included)
          spec.kind =
              kInputKindNames.entries[static_cast<std::size_t>(pick(kFixedInputKinds))].value;
          break;
        case 1:
          spec.alpha = std::clamp(spec.alpha * factor(4), 1e-3, 1e3);
          break;
        case 2:
          spec.noise = std::clamp(spec.noise * factor(2), 1e-4, 1.0);
          break;
        case 3:
          spec.pattern = std::max(1, spec.pattern + (pick(2) == 0 ? 1 : -1) * (1 + pick(3)));
          break;
        case 4:
          spec.parents = std::max(1, spec.parents + (pick(2) == 0 ? 1 : -1));
          break;
        default:
          spec.seed = StreamSeed(seed, "x-search-seed", static_cast<std::uint64_t>(k));
          break;
      }
    std::unique_ptr<Source> x;
    try {
      x = MakeInput(spec);  // a move can leave the generator's range (parents > its window)
    } catch (const InputError&) {
      continue;  // rejected, like a move that does not raise the error
    }
    AttackResult r = AttackStatistic(*x, attack);
    if (r.adversarial > best.result.adversarial) {
      best.spec = spec;
      best.result = std::move(r);
      ++best.accepted;
    }
  }
  return best;
}

AttackSweepResult RunAttackSweep(const AttackSweepOptions& o) {
  if (o.lengths.size() < 3) throw OptionError("lengths", "a rate needs at least 3 lengths");
  for (std::uint64_t n : o.lengths)
    if (n < 2 || n >= o.x_length) throw OptionError("lengths", "each n must be in [2, |x|)");
  if (o.seeds < 1) throw OptionError("seeds", "must be at least 1");
  AttackSweepResult result;
  result.options = o;
  const std::size_t M = o.methods.size(), N = o.lengths.size(), I = o.inputs.size(),
                    K = static_cast<std::size_t>(o.seeds);
  std::vector<double> error(M * N * I * K);
  result.cells.resize(error.size());
  // x per family and n: a fixed family's x is the same at every n, a run family's run length
  // follows n (AdaptedInput).
  std::vector<std::unique_ptr<Source>> xs(I * N);
  for (std::size_t i = 0; i < I; ++i) {
    InputSpec spec;
    spec.kind = o.inputs[i];
    spec.length = o.x_length;
    spec.alphabet = o.alphabet;
    spec.seed = StreamSeed(o.seed, "attack-x", i);
    result.inputs.push_back(spec);
    for (std::size_t n = 0; n < N; ++n) {
      const InputSpec adapted = AdaptedInput(spec, o.lengths[n], o.locality);
      result.adapted_inputs.push_back(adapted);
      if (AdaptsToLength(spec.kind) || n == 0) xs[i * N + n] = MakeInput(adapted);
    }
  }
  const auto x_of = [&](std::size_t i, std::size_t n) -> const Source& {
    return *xs[i * N + (AdaptsToLength(o.inputs[i]) ? n : 0)];
  };
  const int threads = o.threads > 0 ? o.threads : oneapi::tbb::this_task_arena::max_concurrency();
  oneapi::tbb::task_arena arena(threads);
  std::atomic<std::uint64_t> finished{0};
  arena.execute([&] {
    oneapi::tbb::parallel_for(std::size_t{0}, error.size(), [&](std::size_t t) {
      const std::size_t i = (t / K) % I, n = (t / K / I) % N, m = t / K / I / N;
      AttackOptions a;
      a.method = o.methods[m];
      a.length = o.lengths[n];
      a.alphabet = o.alphabet;
      a.locality = o.locality;
      a.lipschitz = o.lipschitz;
      a.iterations = o.iterations;
      a.restarts = o.restarts;
      a.random_functions = o.random_functions;
      a.seed = StreamSeed(o.seed, "attack-z", t);
      const AttackResult r = AttackStatistic(x_of(i, n), a);
      error[t] = r.adversarial;
      result.cells[t] = {r.adversarial, r.certified, a};
      if (o.progress) o.progress(++finished, error.size());
    });
  });
  // The searched family: from the fixed family with the largest error of each (scheme, n, z
  // seed), a hill climb over x's generator with the same attack (so it starts at that error).
  const std::size_t searched = o.x_search > 0 ? 1 : 0;
  std::vector<double> searched_error(searched * M * N * K);
  result.searched_inputs.resize(searched_error.size());
  result.searched_cells.resize(searched_error.size());
  if (searched) {
    arena.execute([&] {
      oneapi::tbb::parallel_for(std::size_t{0}, searched_error.size(), [&](std::size_t c) {
        const std::size_t k = c % K, n = (c / K) % N, m = c / K / N;
        std::size_t start = 0;
        for (std::size_t i = 1; i < I; ++i)
          if (error[((m * N + n) * I + i) * K + k] > error[((m * N + n) * I + start) * K + k])
            start = i;
        const AttackCell& from = result.cells[((m * N + n) * I + start) * K + k];
        const InputSearchResult r =
            SearchAdversarialInput(result.Input(start, n), from.options, o.x_search,
                                   StreamSeed(o.seed, "attack-x-search", c));
        searched_error[c] = r.result.adversarial;
        result.searched_inputs[c] = r.spec;
        result.searched_cells[c] = {r.result.adversarial, r.result.certified, from.options};
      });
    });
  }
  FitOptions fit;
  fit.seed = StreamSeed(o.seed, "attack-fit");
  const auto censor = [](double e) {
    // An error at the floor of double sums (z reproduces x's statistic) is only ≤ that value.
    return e <= 1e-12 ? Censoring::kBelow : Censoring::kNone;
  };
  std::vector<ExponentEstimate> worst_rate(M);
  std::vector<std::vector<ExponentEstimate>> family_rate(
      M, std::vector<ExponentEstimate>(I + searched));
  for (std::size_t m = 0; m < M; ++m) {
    AttackSeries worst{o.methods[m], "worst", {}, {}, {}};
    std::vector<AttackSeries> families;
    for (std::size_t i = 0; i < I; ++i)
      families.push_back({o.methods[m], InputKindName(o.inputs[i]), {}, {}, {}});
    for (std::size_t n = 0; n < N; ++n) {
      SeriesPoint w;
      w.value = w.regressor = static_cast<double>(o.lengths[n]);
      for (std::size_t k = 0; k < K; ++k) {
        double e = 0;
        for (std::size_t i = 0; i < I; ++i) e = std::max(e, error[((m * N + n) * I + i) * K + k]);
        if (searched) e = std::max(e, searched_error[(m * N + n) * K + k]);
        w.samples.push_back({std::max(e, 1e-300), censor(e)});
      }
      worst.points.push_back(w);
      double worst_certified = 0;
      for (std::size_t i = 0; i < I; ++i) {
        SeriesPoint p;
        p.value = p.regressor = w.value;
        double certified = 0;
        for (std::size_t k = 0; k < K; ++k) {
          const std::size_t t = ((m * N + n) * I + i) * K + k;
          p.samples.push_back({std::max(error[t], 1e-300), censor(error[t])});
          certified = std::max(certified, result.cells[t].certified);
        }
        families[i].points.push_back(p);
        families[i].certified.push_back(certified);
        worst_certified = std::max(worst_certified, certified);
      }
      worst.certified.push_back(worst_certified);
    }
    if (searched) {
      AttackSeries found{o.methods[m], "searched", {}, {}, {}};
      for (std::size_t n = 0; n < N; ++n) {
        SeriesPoint p;
        p.value = p.regressor = static_cast<double>(o.lengths[n]);
        double certified = 0;
        for (std::size_t k = 0; k < K; ++k) {
          const std::size_t c = (m * N + n) * K + k;
          p.samples.push_back({std::max(searched_error[c], 1e-300), censor(searched_error[c])});
          certified = std::max(certified, result.searched_cells[c].certified);
        }
        found.points.push_back(p);
        found.certified.push_back(certified);
        worst.certified[n] = std::max(worst.certified[n], certified);
      }
      families.push_back(found);
    }
    worst.rate = FitSeries(worst.points, fit);
    worst_rate[m] = worst.rate;
    result.series.push_back(worst);
    for (std::size_t i = 0; i < families.size(); ++i) {
      families[i].rate = FitSeries(families[i].points, fit);
      family_rate[m][i] = families[i].rate;
      result.series.push_back(families[i]);
    }
  }
  const auto markov = std::find(o.methods.begin(), o.methods.end(), "markov");
  if (markov == o.methods.end()) {
    result.markov_rate_verdict = "markov is not among the methods";
    return result;
  }
  const std::size_t mk = static_cast<std::size_t>(markov - o.methods.begin());
  const Lemma53Decision decision = DecideLemma53Rate(result, mk);
  result.markov_rate_verdict =
      std::string(VerdictName(decision.verdict.verdict)) + ": " + decision.verdict.reason;
  for (std::size_t m = 0; m < M; ++m) {
    if (m == mk) continue;
    bool everywhere = true;
    for (std::size_t i = 0; i < I + searched; ++i) {
      const ExponentEstimate& a = family_rate[m][i];
      const ExponentEstimate& b = family_rate[mk][i];
      everywhere = everywhere && a.ci && b.ci && a.ci->second < b.ci->first;
    }
    if (everywhere) result.beats_markov_everywhere.push_back(o.methods[m]);
  }
  return result;
}

const InputSpec& AttackSweepResult::Input(std::size_t input, std::size_t n) const {
  return adapted_inputs.at(input * options.lengths.size() + n);
}

std::uint64_t Lemma53BlockLength(std::uint64_t n) {
  return static_cast<std::uint64_t>(std::ceil(std::cbrt(static_cast<double>(n)) - 1e-9));
}

InputSpec AdaptedInput(const InputSpec& base, std::uint64_t n, int locality) {
  InputSpec spec = base;
  const std::uint64_t block = std::max<std::uint64_t>(1, Lemma53BlockLength(n));
  if (base.kind == InputKind::kRuns) spec.run_length = block;
  if (base.kind == InputKind::kLongRuns) spec.run_length = 4 * block;
  if (base.kind == InputKind::kStride) {
    // Half the stride of `blocks` at n (docs/theory.md §4.6): k = ⌈(n − m)/ℓ⌉ blocks over the
    // T − m far positions, m = τ + 1; with S = 2 the period 2·run_length is the stride, so every
    // block starts at the same phase of x.
    const std::uint64_t m = static_cast<std::uint64_t>(locality) + 1;
    const std::uint64_t far_z = n > m ? n - m : 1, far_x = base.length > m ? base.length - m : 1;
    const std::uint64_t k = (far_z + block - 1) / block;
    spec.run_length = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::llround(static_cast<double>(far_x) / (2.0 * k))));
  }
  return spec;
}

WorstCaseSeries Lemma53WorstSeries(const AttackSweepResult& sweep, std::size_t method) {
  const AttackSweepOptions& o = sweep.options;
  const std::size_t N = o.lengths.size(), I = o.inputs.size(),
                    K = static_cast<std::size_t>(o.seeds);
  const auto measured = [](double e) {
    return e <= 1e-12 ? Sample{1e-12, Censoring::kBelow} : Sample{e, Censoring::kNone};
  };
  WorstCaseSeries w;
  for (std::size_t n = 0; n < N; ++n) {
    SeriesPoint l, u;
    l.value = u.value = l.regressor = u.regressor = static_cast<double>(o.lengths[n]);
    for (std::size_t k = 0; k < K; ++k) {
      double error = 0, certified = 0;
      for (std::size_t i = 0; i < I; ++i) {
        error = std::max(error, sweep.Cell(method, n, i, k).error);
        certified = std::max(certified, sweep.Cell(method, n, i, k).certified);
      }
      if (!sweep.searched_cells.empty()) {
        const AttackCell& c = sweep.searched_cells[(method * N + n) * K + k];
        error = std::max(error, c.error);
        certified = std::max(certified, c.certified);
      }
      l.samples.push_back(measured(error));
      u.samples.push_back(measured(certified));
    }
    w.lower.push_back(l);
    w.upper.push_back(u);
  }
  return w;
}

Lemma53Decision DecideLemma53Rate(const AttackSweepResult& sweep, std::size_t method) {
  const AttackSweepOptions& o = sweep.options;
  const WorstCaseSeries series = Lemma53WorstSeries(sweep, method);
  FitOptions fit;
  fit.scale = FitScale::kLogLog;
  fit.seed = StreamSeed(o.seed, "lemma53-fit/" + o.methods[method]);
  Lemma53Decision d;
  d.lower = FitSeries(series.lower, fit);
  fit.seed = StreamSeed(o.seed, "lemma53-fit/" + o.methods[method] + "/upper");
  d.upper = FitSeries(series.upper, fit);
  constexpr double kRate = -1.0 / 3;
  d.verdict = DecideRateVerdict(d.lower, d.upper, kRate, kLemma53Resolution * std::abs(kRate));
  std::string inputs;
  for (InputKind kind : o.inputs)
    inputs += (inputs.empty() ? "" : ", ") + std::string(InputKindName(kind));
  if (o.x_search > 0) inputs += ", searched x";
  const double first = static_cast<double>(o.lengths.front()),
               last = static_cast<double>(o.lengths.back());
  d.verdict.reason += fmt::format(
      " [rule: docs/statistics.md §4; the worst of {} per z seed; n = {} … {} ({:.1f} decades, {} "
      "points), {} z seed{} a point, |x| = {}, sweep seed {}]",
      inputs, o.lengths.front(), o.lengths.back(), std::log10(last / first), o.lengths.size(),
      o.seeds, o.seeds == 1 ? "" : "s", o.x_length, o.seed);
  return d;
}

const AttackCell& AttackSweepResult::Cell(std::size_t method, std::size_t n, std::size_t input,
                                          std::size_t seed) const {
  const std::size_t N = options.lengths.size(), I = options.inputs.size(),
                    K = static_cast<std::size_t>(options.seeds);
  return cells.at(((method * N + n) * I + input) * K + seed);
}

io::Json AttackSweepOptionsToJson(const AttackSweepOptions& o) {
  std::string inputs;
  for (InputKind kind : o.inputs)
    inputs += (inputs.empty() ? "" : ",") + std::string(InputKindName(kind));
  io::Json json{{"methods", o.methods},   {"lengths", o.lengths},   {"inputs", inputs},
                {"x_length", o.x_length}, {"seeds", o.seeds},       {"lipschitz", o.lipschitz},
                {"locality", o.locality}, {"alphabet", o.alphabet}, {"iterations", o.iterations}};
  if (o.x_search > 0) json["x_search"] = o.x_search;  // absent: the fixed families only
  return json;
}

}  // namespace ltsim
