// The first length where two models disagree by more than ε, exactly for one-layer pairs.
#include "ltsim/threshold/threshold.h"

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

#include "eval/layer_math.h"
#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/core/work.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/precise.h"
#include "ltsim/eval/two_layer.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/strings/sources.h"
#include "threshold/cells.h"

namespace ltsim {
namespace {

using Uint128 = unsigned __int128;
constexpr std::uint64_t kSaturated = std::uint64_t{1} << 62;

std::uint64_t SaturatingMul(std::uint64_t a, std::uint64_t b) {
  const Uint128 product = static_cast<Uint128>(a) * b;
  return product >= kSaturated ? kSaturated : static_cast<std::uint64_t>(product);
}

std::uint64_t SaturatingAdd(std::uint64_t a, std::uint64_t b) {
  return std::min(kSaturated, std::min(a, kSaturated) + std::min(b, kSaturated));
}

// C(n + k, k), the number of ways to split n positions among k + 1 tokens; saturating.
std::uint64_t Multichoose(std::uint64_t n, int k) {
  Uint128 c = 1;
  for (int i = 1; i <= k; ++i) {
    c = c * (n + i) / i;  // C(n + i, i) = C(n + i − 1, i − 1)·(n + i)/i, exact
    if (c >= kSaturated) return kSaturated;
  }
  return static_cast<std::uint64_t>(c);
}

// N_r = #{1 ≤ j ≤ far : j ≡ r (mod Δ)}.
std::uint64_t ClassSize(std::uint64_t far, int period, int r) {
  const std::uint64_t delta = period;
  return far / delta + (r >= 1 && static_cast<std::uint64_t>(r) <= far % delta ? 1 : 0);
}

// ---- Checks, all before any evaluation -----------------------------------------------------

bool TwoLayerPair(const Transformer& f, const Transformer& g) {
  return f.layers.size() > 1 || g.layers.size() > 1;
}

void CheckCommon(const Transformer& f, const Transformer& g, const ThresholdOptions& options) {
  if (!std::isfinite(options.epsilon) || options.epsilon < 0.0)
    throw OptionError("epsilon", fmt::format("must be finite and ≥ 0, not {}", options.epsilon));
  if (options.max_length < 1 || options.max_length > kThresholdMaxLength)
    throw OptionError("max_length", fmt::format("must be in [1, {}] (the threshold limit), not {}",
                                                kThresholdMaxLength, options.max_length));
  if (f.layers.size() > 2 || g.layers.size() > 2)
    throw InputError(fmt::format("threshold: models of one or two layers only (F has {}, G has {})",
                                 f.layers.size(), g.layers.size()));
  if (f.outputs() != g.outputs())
    throw InputError(fmt::format("threshold: F has {} outputs and G has {}; they must match",
                                 f.outputs(), g.outputs()));
  JointViewOf({&f, &g});  // throws on different alphabets
}

// Δ* = lcm of the periods and τ* = max of the localities, within the exact searches' limits
// on the types D* = S·Δ* and on τ* (both searches, pruned or not).
std::pair<long long, int> CheckTypeLimits(const Transformer& f, const Transformer& g) {
  const long long period = std::lcm<long long>(f.period, g.period);  // no int overflow
  if (period > kThresholdMaxTypes || f.alphabet * period > kThresholdMaxTypes)
    throw InputError(fmt::format(
        "threshold: D* = S·Δ* = {}·{} types (Δ* = lcm({}, {})), over the exact search's limit "
        "of {}",
        f.alphabet, period, f.period, g.period, kThresholdMaxTypes));
  const int locality = std::max(f.locality, g.locality);
  if (locality > kThresholdMaxLocality)
    throw InputError(
        fmt::format("threshold: τ* = {} (max of the localities), over the exact "
                    "search's limit of {}",
                    locality, kThresholdMaxLocality));
  return {period, locality};
}

void CheckStatisticsLimits(const Transformer& f, const Transformer& g, std::uint64_t max_length) {
  const auto [period, locality] = CheckTypeLimits(f, g);
  std::uint64_t total = 0;
  for (std::uint64_t t = 1; t <= max_length; ++t) {
    const std::uint64_t next =
        SaturatingAdd(total, CountStatistics(f.alphabet, period, locality, t));
    if (next > kThresholdMaxStatistics)
      throw OptionError("max_length",
                        fmt::format("the exact search needs more than {} statistics (S = {}, "
                                    "Δ* = {}, τ* = {}); the largest max length within the limit "
                                    "is {}",
                                    kThresholdMaxStatistics, f.alphabet, period, locality, t - 1),
                        std::to_string(max_length));
    total = next;
  }
}

// T_ex: the largest T ≤ min(N, kThresholdExhaustiveMaxLength) with Σ_{t ≤ T} S^t within the
// exhaustive budget.
std::uint64_t ExhaustiveLength(int alphabet, std::uint64_t max_length) {
  std::uint64_t total = 0, power = 1, length = 0;
  while (length < std::min(max_length, kThresholdExhaustiveMaxLength)) {
    power = SaturatingMul(power, alphabet);
    if (SaturatingAdd(total, power) > kThresholdExhaustiveStrings) break;
    total += power;
    ++length;
  }
  return length;
}

void CheckStringLimits(const Transformer& f, const Transformer& g, const ThresholdOptions& o) {
  if (o.samples_per_length < 1) throw OptionError("samples_per_length", "must be at least 1");
  for (const Transformer* m : {&f, &g}) {
    if (m->layers.size() == 2 && m->types() > kTwoLayerMaxTypes && o.max_length > kReferenceLimit)
      throw OptionError("max_length",
                        fmt::format("a two-layer model with S·Δ = {} > {} is evaluated by the "
                                    "reference evaluator, up to {} tokens",
                                    m->types(), kTwoLayerMaxTypes, kReferenceLimit),
                        std::to_string(o.max_length));
  }
  const std::uint64_t exhaustive = ExhaustiveLength(f.alphabet, o.max_length);
  Uint128 tokens = 0;
  for (std::uint64_t t = exhaustive + 1; t <= o.max_length; ++t) {
    tokens += static_cast<Uint128>(t) * o.samples_per_length;
    if (tokens > kThresholdMaxRandomTokens)
      throw OptionError("max_length",
                        fmt::format("the random search reads more than {} tokens at {} samples per "
                                    "length; the largest max length within the limit is {}",
                                    kThresholdMaxRandomTokens, o.samples_per_length, t - 1),
                        std::to_string(o.max_length));
  }
}

// ---- The enumeration of statistics ---------------------------------------------------------

// Every statistic (far counts per type, suffix) of one length in a view, in a fixed order:
// the suffix fastest, then the composition of each residue class, the last class first.
class StatisticsOdometer {
 public:
  StatisticsOdometer(const JointView& view, std::uint64_t length) {
    counts_.alphabet = view.alphabet;
    counts_.period = view.period;
    counts_.locality = view.locality;
    counts_.length = length;
    const std::uint64_t m = std::min<std::uint64_t>(length, view.locality + 1);
    counts_.suffix.assign(m, 0);
    counts_.far.assign(static_cast<std::size_t>(view.alphabet) * view.period, 0);
    for (int r = 0; r < view.period; ++r)
      counts_.far[counts_.TypeIndex(0, r)] = ClassSize(length - m, view.period, r);
  }

  const TypeCounts& counts() const { return counts_; }

  bool Next() {
    for (std::size_t k = counts_.suffix.size(); k-- > 0;) {
      if (++counts_.suffix[k] < counts_.alphabet) return true;
      counts_.suffix[k] = 0;
    }
    for (int r = counts_.period - 1; r >= 0; --r)
      if (NextComposition(&counts_.far[counts_.TypeIndex(0, r)], counts_.alphabet)) return true;
    return false;
  }

 private:
  TypeCounts counts_;
};

// A string with these statistics: each residue class's far positions take its tokens in
// increasing order, then the suffix. Checked by recounting.
std::vector<Token> Realise(const TypeCounts& counts) {
  std::vector<std::uint64_t> left = counts.far;
  std::vector<int> token(counts.period, 0);
  std::vector<Token> x;
  x.reserve(counts.length);
  for (std::uint64_t j = 1; j <= counts.far_length(); ++j) {
    const int r = counts.Residue(j);
    while (left[counts.TypeIndex(token[r], r)] == 0) ++token[r];
    --left[counts.TypeIndex(token[r], r)];
    x.push_back(static_cast<Token>(token[r]));
  }
  x.insert(x.end(), counts.suffix.begin(), counts.suffix.end());
  const TypeCounts check = CountTypes(x, counts.alphabet, counts.period, counts.locality);
  LTSIM_CHECK(check.far == counts.far && check.suffix == counts.suffix);
  return x;
}

// ‖a − b‖_∞, and +∞ when either output is not finite (weights that are finite can still
// overflow an output): such a string disagrees beyond any ε, and NaN never hides it.
double Gap(const Vector& a, const Vector& b) {
  if (!a.allFinite() || !b.allFinite()) return std::numeric_limits<double>::infinity();
  return SupDistance(a, b);
}

// The gap of one statistic or string, and whether it disagrees (ThresholdDisagrees).
double StatisticGap(const Transformer& f, const Transformer& g, const TypeCounts& joint,
                    double epsilon, bool& disagrees) {
  const Vector a = EvaluateOneLayer(f, Coarsen(joint, f.period, f.locality));
  const Vector b = EvaluateOneLayer(g, Coarsen(joint, g.period, g.locality));
  const double gap = Gap(a, b);
  disagrees = ThresholdDisagrees(gap, epsilon, a, b);
  return gap;
}

double StringGap(const Transformer& f, const Transformer& g, const std::vector<Token>& x,
                 double epsilon, bool& disagrees) {
  const auto source = MakeTokenSource(x, "x");
  const Vector a = Evaluate(f, *source), b = Evaluate(g, *source);
  const double gap = Gap(a, b);
  disagrees = ThresholdDisagrees(gap, epsilon, a, b);
  return gap;
}

// The largest gap of one length and where it was first reached in search order: a string,
// or statistics that Realise turns into one when they are reported.
struct LengthOutcome {
  double max_gap = -1.0;
  // The disagreeing statistic (or string) with the largest gap, first in search order.
  bool disagrees = false;
  double witness_gap = -1.0;
  std::vector<Token> argmax;
  std::optional<TypeCounts> argmax_counts;
};

void Note(double gap, bool disagrees, LengthOutcome& outcome) {
  outcome.max_gap = std::max(outcome.max_gap, gap);
  outcome.disagrees = outcome.disagrees || disagrees;
}

LengthOutcome SearchStatistics(const Transformer& f, const Transformer& g, const JointView& view,
                               std::uint64_t length, double epsilon, std::uint64_t& evaluations) {
  StatisticsOdometer odometer(view, length);
  LengthOutcome outcome;
  do {
    bool disagrees = false;
    const double gap = StatisticGap(f, g, odometer.counts(), epsilon, disagrees);
    ++evaluations;
    Note(gap, disagrees, outcome);
    if (disagrees && gap > outcome.witness_gap) {
      outcome.witness_gap = gap;
      outcome.argmax_counts = odometer.counts();
    }
  } while (odometer.Next());
  return outcome;
}

void Consider(const Transformer& f, const Transformer& g, const std::vector<Token>& x,
              double epsilon, LengthOutcome& outcome) {
  bool disagrees = false;
  const double gap = StringGap(f, g, x, epsilon, disagrees);
  Note(gap, disagrees, outcome);
  if (disagrees && gap > outcome.witness_gap) {
    outcome.witness_gap = gap;
    outcome.argmax = x;
  }
}

LengthOutcome SearchAllStrings(const Transformer& f, const Transformer& g, int alphabet,
                               std::uint64_t length, double epsilon, std::uint64_t& evaluations) {
  std::vector<Token> x(length, 0);
  LengthOutcome outcome;
  while (true) {
    Consider(f, g, x, epsilon, outcome);
    ++evaluations;
    std::size_t k = length;
    while (k > 0 && ++x[k - 1] == alphabet) x[--k] = 0;
    if (k == 0) return outcome;
  }
}

LengthOutcome SearchRandomStrings(const Transformer& f, const Transformer& g, int alphabet,
                                  std::uint64_t length, const ThresholdOptions& options,
                                  std::uint64_t& evaluations) {
  boost::random::mt19937_64 engine(StreamSeed(options.seed, "threshold", length));
  boost::random::uniform_int_distribution<int> token(0, alphabet - 1);
  LengthOutcome outcome;
  std::vector<Token> x(length);
  for (std::uint64_t k = 0; k < options.samples_per_length; ++k) {
    for (Token& s : x) s = static_cast<Token>(token(engine));
    Consider(f, g, x, options.epsilon, outcome);
    ++evaluations;
  }
  return outcome;
}

// The witness in 50 digits (eval/precise.h): confirmed when its precise gap exceeds ε.
void RecheckWitness(const Transformer& f, const Transformer& g, double epsilon,
                    ThresholdResult& result) {
  ThresholdResult::Recheck& r = result.recheck;
  const auto witness = MakeRunSource(result.witness, "witness");
  std::string why;
  for (const Transformer* m : {&f, &g}) {
    if (!PreciseEvaluable(*m, witness->length(), &why)) {
      r.status = "skipped";
      r.note = why;
      return;
    }
  }
  const PreciseReal gap =
      PreciseSupDistance(EvaluatePrecise(f, *witness), EvaluatePrecise(g, *witness));
  r.precise_gap = PreciseText(gap);
  r.status = gap > PreciseReal(epsilon) ? "confirmed" : "unconfirmed";
  r.note =
      fmt::format("the witness string re-evaluated with {}-digit arithmetic; {} ε", kPreciseDigits,
                  r.status == "confirmed" ? "its gap exceeds" : "its gap does not exceed");
}

// Sets the witness from a string or statistics and re-evaluates it as a string.
void SetWitness(const Transformer& f, const Transformer& g, std::uint64_t length,
                std::vector<Run> runs, double found_gap, double epsilon, ThresholdResult& result) {
  result.first_disagreement = length;
  result.witness = std::move(runs);
  const auto witness = MakeRunSource(result.witness, "witness");
  result.f_witness = Evaluate(f, *witness);
  result.g_witness = Evaluate(g, *witness);
  result.gap = Gap(result.f_witness, result.g_witness);
  // f depends on the statistics alone, and the evaluators agree to rounding (evaluate.h).
  LTSIM_CHECK(result.gap == found_gap ||
              std::abs(result.gap - found_gap) <= 1e-9 * (1.0 + found_gap));
  RecheckWitness(f, g, epsilon, result);
}

// Records one length's outcome; true when it is the first disagreement (the search stops).
bool Record(const Transformer& f, const Transformer& g, std::uint64_t length,
            const LengthOutcome& outcome, double epsilon, ThresholdResult& result) {
  result.max_gap_per_length.push_back(outcome.max_gap);
  result.checked_up_to = length;
  if (!outcome.disagrees) return false;
  SetWitness(f, g, length,
             ToRuns(outcome.argmax_counts ? Realise(*outcome.argmax_counts) : outcome.argmax),
             outcome.witness_gap, epsilon, result);
  return true;
}

// One length's outcome as bytes for the dealer (core/work.h): exact, so the reducer records
// what a single process would.
std::string OutcomeBytes(const LengthOutcome& o, std::uint64_t evaluations) {
  ByteWriter w;
  w.Put(o.max_gap);
  w.Put(o.disagrees);
  w.Put(o.witness_gap);
  w.Put(evaluations);
  w.PutVector(o.argmax);
  w.Put<bool>(o.argmax_counts.has_value());
  if (o.argmax_counts) {
    const TypeCounts& c = *o.argmax_counts;
    w.Put(c.alphabet);
    w.Put(c.period);
    w.Put(c.locality);
    w.Put(c.length);
    w.PutVector(c.far);
    w.PutVector(c.suffix);
  }
  return w.Take();
}

LengthOutcome OutcomeFromBytes(const std::string& bytes, std::uint64_t& evaluations) {
  ByteReader r(bytes);
  LengthOutcome o;
  o.max_gap = r.Get<double>();
  o.disagrees = r.Get<bool>();
  o.witness_gap = r.Get<double>();
  evaluations += r.Get<std::uint64_t>();
  o.argmax = r.GetVector<Token>();
  if (r.Get<bool>()) {
    TypeCounts c;
    c.alphabet = r.Get<int>();
    c.period = r.Get<int>();
    c.locality = r.Get<int>();
    c.length = r.Get<std::uint64_t>();
    c.far = r.GetVector<std::uint64_t>();
    c.suffix = r.GetVector<Token>();
    o.argmax_counts = std::move(c);
  }
  return o;
}

// Lengths 1 … N are the dealer's items (weighted by their evaluations, so short lengths travel
// together), reduced in order until the first disagreement; `search` runs one length.
void SearchLengths(const Transformer& f, const Transformer& g, const ThresholdOptions& options,
                   const std::function<double(std::uint64_t)>& weight,
                   const std::function<LengthOutcome(std::uint64_t, std::uint64_t&)>& search,
                   ThresholdResult& result) {
  ItemDealer& dealer = options.dealer ? *options.dealer : LocalDealer();
  const auto start = std::chrono::steady_clock::now();
  DealWeighted(
      dealer, 1, options.max_length + 1, weight,
      [&](std::uint64_t t) {
        std::uint64_t evaluations = 0;
        const LengthOutcome outcome = search(t, evaluations);
        return OutcomeBytes(outcome, evaluations);
      },
      [&](std::uint64_t t, std::string&& bytes) {
        const LengthOutcome outcome = OutcomeFromBytes(bytes, result.evaluations);
        if (Record(f, g, t, outcome, options.epsilon, result)) return false;
        if (options.progress)
          options.progress(
              t, options.max_length, result.evaluations,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        return true;
      });
}

ThresholdResult FindByStatistics(const Transformer& f, const Transformer& g,
                                 const ThresholdOptions& options) {
  ThresholdResult result;
  result.method = ThresholdMethod::kStatistics;
  result.view = JointViewOf({&f, &g});
  const JointView view = result.view;
  SearchLengths(
      f, g, options,
      [&](std::uint64_t t) {
        return static_cast<double>(CountStatistics(view.alphabet, view.period, view.locality, t));
      },
      [&](std::uint64_t t, std::uint64_t& evaluations) {
        return SearchStatistics(f, g, view, t, options.epsilon, evaluations);
      },
      result);
  result.exhaustive_up_to = result.checked_up_to;
  result.exhaustive = true;
  result.statistics_evaluated = result.evaluations;
  for (std::uint64_t t = 1; t <= result.checked_up_to; ++t)
    result.statistics_total = SaturatingAdd(
        result.statistics_total,
        CountStatistics(result.view.alphabet, result.view.period, result.view.locality, t));
  return result;
}

// ---- The pruned search (docs/theory.md §11) --------------------------------------------------

using threshold::Goal;
using threshold::TaskOutcome;
using threshold::TaskSpec;

void CheckCellLimits(const Transformer& f, const Transformer& g, const ThresholdOptions& o) {
  const auto [period, locality] = CheckTypeLimits(f, g);
  std::uint64_t contexts = static_cast<std::uint64_t>(period);
  for (int t = 0; t <= locality; ++t) contexts = SaturatingMul(contexts, f.alphabet);
  if (contexts > kThresholdMaxContexts)
    throw InputError(fmt::format(
        "threshold: Δ*·S^(τ*+1) = {}·{}^{} contexts, over the pruned search's limit of {}", period,
        f.alphabet, locality + 1, kThresholdMaxContexts));
  if (!(o.leaf_statistics >= 1.0)) throw InputError("threshold: leaf statistics must be ≥ 1");
}

bool LogScaled(const Transformer& m) { return m.layers.front().bias_scaling == BiasScaling::kLog; }

struct Context {
  int residue;
  std::vector<int> suffix;
  std::uint64_t T_base;
};

std::vector<Context> AllContexts(const JointView& view) {
  const int m = view.locality + 1;
  std::uint64_t suffixes = 1;
  for (int t = 0; t < m; ++t) suffixes *= view.alphabet;
  std::vector<Context> contexts;
  for (int rho = 0; rho < view.period; ++rho) {
    std::uint64_t base = static_cast<std::uint64_t>(m) + 1;
    while (base % view.period != static_cast<std::uint64_t>(rho)) ++base;
    for (std::uint64_t code = 0; code < suffixes; ++code) {
      std::vector<int> suffix(m);
      std::uint64_t c = code;
      for (int t = m - 1; t >= 0; --t) {
        suffix[t] = static_cast<int>(c % view.alphabet);
        c /= view.alphabet;
      }
      contexts.push_back({rho, std::move(suffix), base});
    }
  }
  return contexts;
}

// The tasks of lengths [a, b]: each context's lengths in the window, one task a length for
// log-scaled models (their suffix logits depend on T), otherwise split into chunks so that
// there are at least 16 tasks. Only the window and the view decide the tasks, never the threads.
std::vector<TaskSpec> WindowTasks(const std::vector<Context>& contexts, const JointView& view,
                                  std::uint64_t a, std::uint64_t b, bool per_length) {
  std::vector<TaskSpec> tasks;
  const std::uint64_t period = static_cast<std::uint64_t>(view.period);
  const std::uint64_t chunks_wanted = std::max<std::uint64_t>(1, 16 / contexts.size());
  for (const Context& c : contexts) {
    if (b < c.T_base) continue;
    const std::uint64_t k_lo = a <= c.T_base ? 0 : (a - c.T_base + period - 1) / period;
    const std::uint64_t k_hi = (b - c.T_base) / period;
    if (k_lo > k_hi) continue;
    const std::uint64_t count = k_hi - k_lo + 1;
    const std::uint64_t chunks = per_length ? count : std::min(count, chunks_wanted);
    for (std::uint64_t q = 0; q < chunks; ++q) {
      TaskSpec t;
      t.key.residue = c.residue;
      t.key.suffix = c.suffix;
      t.T_base = c.T_base;
      t.k_lo = static_cast<std::int64_t>(k_lo + count * q / chunks);
      t.k_hi = static_cast<std::int64_t>(k_lo + count * (q + 1) / chunks) - 1;
      t.key.length = c.T_base + static_cast<std::uint64_t>(t.k_lo) * period;
      tasks.push_back(std::move(t));
    }
  }
  return tasks;
}

// One task's outcome as exact bytes for the dealer (core/work.h).
std::string TaskBytes(const TaskOutcome& o) {
  ByteWriter w;
  w.Put(o.first_T);
  w.Put(o.best_gap);
  w.PutVector(o.best_counts);
  w.Put(o.best_T);
  w.PutVector(o.evaluated);
  w.PutVector(o.pruned);
  w.PutVector(o.max_gap);
  w.Put(o.evaluations);
  w.Put(o.cells);
  w.Put(o.cells_pruned);
  w.Put(o.max_pruned_bound);
  return w.Take();
}

TaskOutcome TaskFromBytes(const std::string& bytes) {
  ByteReader r(bytes);
  TaskOutcome o;
  o.first_T = r.Get<std::uint64_t>();
  o.best_gap = r.Get<double>();
  o.best_counts = r.GetVector<std::uint64_t>();
  o.best_T = r.Get<std::uint64_t>();
  o.evaluated = r.GetVector<std::uint64_t>();
  o.pruned = r.GetVector<std::uint64_t>();
  o.max_gap = r.GetVector<double>();
  o.evaluations = r.Get<std::uint64_t>();
  o.cells = r.Get<std::uint64_t>();
  o.cells_pruned = r.Get<std::uint64_t>();
  o.max_pruned_bound = r.Get<double>();
  return o;
}

// The outcomes of `tasks`, each a pure function of its spec. With `dealer` (MPI ranks that
// share decisions, docs/distributed.md §2) the tasks are dealt in chunks of `chunk` and only
// the reducing rank receives the outcomes (the other ranks' stay empty); without, this
// process runs them all on its arena's threads.
std::vector<TaskOutcome> RunTasks(const Transformer& f, const Transformer& g, const JointView& view,
                                  const std::vector<TaskSpec>& tasks,
                                  const threshold::EngineOptions& o, oneapi::tbb::task_arena& arena,
                                  ItemDealer* dealer, std::uint64_t chunk,
                                  bool* all_arrived = nullptr) {
  std::vector<TaskOutcome> out(tasks.size());
  if (all_arrived) *all_arrived = true;
  const auto run = [&](std::size_t begin, std::size_t end, TaskOutcome* into) {
    arena.execute([&] {
      oneapi::tbb::parallel_for(begin, end, [&](std::size_t i) {
        into[i - begin] = threshold::RunTask(f, g, view, tasks[i], o);
      });
    });
  };
  if (dealer == nullptr) {
    run(0, tasks.size(), out.data());
    return out;
  }
  // A dealer that stopped early (a rank died) leaves outcomes missing on the reducer: the
  // caller must not read them as "no disagreement".
  const std::uint64_t wanted = std::min<std::uint64_t>(
      std::max<std::uint64_t>(
          1, (tasks.size() + 2 * dealer->Processes() - 1) / (2 * dealer->Processes())),
      chunk);
  const DealReport report = dealer->Deal(
      0, tasks.size(), wanted,
      [&](std::uint64_t begin, std::uint64_t end) {
        std::vector<TaskOutcome> part(end - begin);
        run(begin, end, part.data());
        std::vector<std::string> bytes;
        bytes.reserve(part.size());
        for (const TaskOutcome& p : part) bytes.push_back(TaskBytes(p));
        return bytes;
      },
      [&](std::uint64_t i, std::string&& bytes) {
        out[i] = TaskFromBytes(bytes);
        return true;
      });
  if (all_arrived) *all_arrived = !dealer->Reduces() || report.consumed == tasks.size();
  return out;
}

TypeCounts JointCounts(const JointView& view, const TaskSpec& task,
                       const std::vector<std::uint64_t>& far, std::uint64_t length) {
  TypeCounts c;
  c.alphabet = view.alphabet;
  c.period = view.period;
  c.locality = view.locality;
  c.length = length;
  c.far = far;
  c.suffix.assign(task.key.suffix.begin(), task.key.suffix.end());
  return c;
}

// The smallest divisor Δ' of Δ* such that both models' inputs y⁰(s, r) depend on r only
// through r mod Δ' (bitwise equal vectors): the models cannot tell apart residues ≡ mod Δ',
// so the statistics of period Δ' are sufficient too and the search runs on them.
int SearchPeriod(const Transformer& f, const Transformer& g, int period) {
  for (int candidate = 1; candidate < period; ++candidate) {
    if (period % candidate != 0) continue;
    bool same = true;
    for (const Transformer* m : {&f, &g})
      for (int s = 0; s < m->alphabet && same; ++s)
        for (int r = 0; r < period && same; ++r)
          same =
              InputVector(*m, s, r % m->period) == InputVector(*m, s, (r % candidate) % m->period);
    if (same) return candidate;
  }
  return period;
}

ThresholdResult FindByCells(const Transformer& f, const Transformer& g,
                            const ThresholdOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  ThresholdResult result;
  result.method = ThresholdMethod::kStatistics;
  result.view = JointViewOf({&f, &g});
  result.pruned = true;
  JointView view = result.view;
  view.period = SearchPeriod(f, g, view.period);
  result.search_period = view.period;
  const std::uint64_t N = options.max_length;
  const std::uint64_t m = static_cast<std::uint64_t>(view.locality) + 1;
  const int threads =
      options.threads > 0 ? options.threads : oneapi::tbb::this_task_arena::max_concurrency();
  result.threads = threads;
  oneapi::tbb::task_arena arena(threads);
  // Under MPI every rank runs this loop and computes a share of each window's tasks; the
  // reducing rank alone sees the outcomes, decides whether the search goes on, and broadcasts
  // its decision, so every rank makes the same Deals and the result is the single process's.
  ItemDealer* dealer =
      options.dealer != nullptr && options.dealer->Processes() > 1 && options.dealer->Shares()
          ? options.dealer
          : nullptr;
  const bool reduces = dealer == nullptr || dealer->Reduces();
  const auto chunk = static_cast<std::uint64_t>(threads);
  enum Decision : std::uint8_t { kGoOn, kDisagrees, kBudgetSpent, kLost };
  const auto agree = [&](Decision& decision, std::uint64_t& first) {
    if (dealer == nullptr) return;
    ByteWriter w;
    w.Put(decision);
    w.Put(first);
    std::string bytes = w.Take();
    dealer->Broadcast(bytes);
    ByteReader r(bytes);
    decision = r.Get<Decision>();
    first = r.Get<std::uint64_t>();
  };
  result.max_gap_per_length.assign(N, std::numeric_limits<double>::quiet_NaN());
  const auto finish = [&](std::uint64_t checked) {
    result.checked_up_to = checked;
    result.max_gap_per_length.resize(checked);
    result.exhaustive_up_to = checked;
    result.exhaustive = true;
    for (std::uint64_t t = 1; t <= checked; ++t)
      result.statistics_total = SaturatingAdd(
          result.statistics_total, CountStatistics(view.alphabet, view.period, view.locality, t));
    result.statistics_pruned =
        result.statistics_total - std::min(result.statistics_total, result.statistics_evaluated);
    return result;
  };
  // Lengths T ≤ τ* + 1 have no far positions: every statistic, as before, on the reducing
  // process, which tells the others whether the search ends there.
  std::uint64_t short_first = 0;
  for (std::uint64_t t = 1; t <= std::min(N, m) && reduces; ++t) {
    const std::uint64_t before = result.evaluations;
    const LengthOutcome outcome =
        SearchStatistics(f, g, result.view, t, options.epsilon, result.evaluations);
    result.statistics_evaluated += result.evaluations - before;
    result.max_gap_per_length[t - 1] = outcome.max_gap;
    if (outcome.disagrees) {
      SetWitness(f, g, t,
                 ToRuns(outcome.argmax_counts ? Realise(*outcome.argmax_counts) : outcome.argmax),
                 outcome.witness_gap, options.epsilon, result);
      short_first = t;
      break;
    }
  }
  Decision short_decision = short_first != 0 ? kDisagrees : kGoOn;
  agree(short_decision, short_first);
  if (short_decision == kDisagrees) return reduces ? finish(short_first) : ThresholdResult{};
  const std::vector<Context> contexts = AllContexts(view);
  const bool per_length = LogScaled(f) || LogScaled(g);
  threshold::EngineOptions eo;
  eo.epsilon = options.epsilon;
  eo.leaf_points = options.leaf_statistics;
  eo.count_pruned = options.count_pruned;
  std::uint64_t cumulative = 0;
  std::uint64_t a = m + 1;
  while (a <= N) {
    // The window: single lengths enumerated in full while that is cheap, then growing windows.
    const std::uint64_t here = CountStatistics(view.alphabet, view.period, view.locality, a);
    const bool full = SaturatingAdd(cumulative, here) <= options.full_statistics;
    const std::uint64_t b =
        full ? a : std::min(N, a + std::max<std::uint64_t>(8 * view.period, a / 8) - 1);
    eo.goal = Goal::kFirst;
    eo.prune = !full;
    const std::vector<TaskSpec> tasks = WindowTasks(contexts, view, a, b, per_length);
    bool arrived = true;
    const std::vector<TaskOutcome> outcomes =
        RunTasks(f, g, view, tasks, eo, arena, dealer, chunk, &arrived);
    std::uint64_t first = 0;
    for (const TaskOutcome& o : outcomes)
      if (o.first_T != 0 && (first == 0 || o.first_T < first)) first = o.first_T;
    for (std::size_t i = 0; i < tasks.size() && reduces; ++i) {
      const TaskOutcome& o = outcomes[i];
      result.evaluations += o.evaluations;
      result.cells += o.cells;
      result.cells_pruned += o.cells_pruned;
      result.max_pruned_bound = std::max(result.max_pruned_bound, o.max_pruned_bound);
      for (std::size_t q = 0; q < o.evaluated.size(); ++q) {
        const std::uint64_t T =
            tasks[i].T_base + (static_cast<std::uint64_t>(tasks[i].k_lo) + q) * view.period;
        if (first != 0 && T >= first) break;
        result.statistics_evaluated += o.evaluated[q];
        if (o.pruned.size() > q) result.statistics_pruned_counted += o.pruned[q];
        double& best = result.max_gap_per_length[T - 1];
        if (!std::isnan(o.max_gap[q]) && (std::isnan(best) || o.max_gap[q] > best))
          best = o.max_gap[q];
      }
    }
    for (std::uint64_t t = a; t <= b; ++t)
      cumulative =
          SaturatingAdd(cumulative, CountStatistics(view.alphabet, view.period, view.locality, t));
    Decision decision = !arrived                                                ? kLost
                        : first != 0                                            ? kDisagrees
                        : result.evaluations > options.max_evaluations && b < N ? kBudgetSpent
                                                                                : kGoOn;
    agree(decision, first);
    if (decision == kLost) {
      // Exact up to the previous window only.
      if (!reduces) return ThresholdResult{};
      result.complete = false;
      return finish(a - 1);
    }
    if (decision == kDisagrees) {
      // The largest gap at T* and its statistic: every statistic of T* evaluated or bounded by
      // a certified bound ≤ the largest gap found.
      eo.goal = Goal::kMax;
      eo.prune = !full;
      const std::vector<TaskSpec> at = WindowTasks(contexts, view, first, first, true);
      bool best_arrived = true;
      const std::vector<TaskOutcome> best =
          RunTasks(f, g, view, at, eo, arena, dealer, chunk, &best_arrived);
      if (!reduces) return ThresholdResult{};
      if (!best_arrived) {
        // T* is known to disagree, but not its largest gap and witness: exact below it only.
        result.complete = false;
        return finish(first - 1);
      }
      std::size_t arg = best.size();
      for (std::size_t i = 0; i < best.size(); ++i) {
        const TaskOutcome& o = best[i];
        result.evaluations += o.evaluations;
        result.cells += o.cells;
        result.cells_pruned += o.cells_pruned;
        result.statistics_evaluated += o.evaluated[0];
        if (!o.pruned.empty()) result.statistics_pruned_counted += o.pruned[0];
        if (!o.best_counts.empty() && (arg == best.size() || o.best_gap > best[arg].best_gap))
          arg = i;
      }
      LTSIM_CHECK(arg < best.size());  // the kFirst search found a disagreeing statistic here
      result.max_gap_per_length[first - 1] = best[arg].best_gap;
      const TypeCounts joint = JointCounts(view, at[arg], best[arg].best_counts, first);
      SetWitness(f, g, first, ToRuns(Realise(joint)), best[arg].best_gap, options.epsilon, result);
      if (options.progress) options.progress(first, N, result.evaluations, seconds());
      return finish(first);
    }
    if (!reduces) {
      if (decision == kBudgetSpent) return ThresholdResult{};
      a = b + 1;
      continue;
    }
    if (options.progress) options.progress(b, N, result.evaluations, seconds());
    if (decision == kBudgetSpent) {
      result.complete = false;
      return finish(b);
    }
    a = b + 1;
  }
  if (!reduces) return ThresholdResult{};
  return finish(N);
}

ThresholdResult FindByStrings(const Transformer& f, const Transformer& g,
                              const ThresholdOptions& options) {
  ThresholdResult result;
  result.method = ThresholdMethod::kExhaustiveRandom;
  result.view = JointViewOf({&f, &g});
  result.samples_per_length = options.samples_per_length;
  const int alphabet = result.view.alphabet;
  const std::uint64_t exhaustive = ExhaustiveLength(alphabet, options.max_length);
  SearchLengths(
      f, g, options,
      [&](std::uint64_t t) {
        // Tokens read: S^t strings of t tokens, or the samples.
        const double strings = t <= exhaustive ? std::pow(static_cast<double>(alphabet), t)
                                               : static_cast<double>(options.samples_per_length);
        return strings * static_cast<double>(t);
      },
      [&](std::uint64_t t, std::uint64_t& evaluations) {
        return t <= exhaustive ? SearchAllStrings(f, g, alphabet, t, options.epsilon, evaluations)
                               : SearchRandomStrings(f, g, alphabet, t, options, evaluations);
      },
      result);
  result.exhaustive_up_to = std::min(exhaustive, result.checked_up_to);
  result.exhaustive = result.checked_up_to <= exhaustive;
  return result;
}

}  // namespace

bool ThresholdDisagrees(double gap, double epsilon, const Vector& f, const Vector& g) {
  return threshold::Disagrees(gap, epsilon, std::vector<double>(f.data(), f.data() + f.size()),
                              std::vector<double>(g.data(), g.data() + g.size()));
}

const char* ThresholdMethodName(ThresholdMethod method) {
  return method == ThresholdMethod::kStatistics ? "statistics" : "exhaustive+random";
}

std::uint64_t CountStatistics(int alphabet, int period, int locality, std::uint64_t length) {
  const std::uint64_t m = std::min<std::uint64_t>(length, static_cast<std::uint64_t>(locality) + 1);
  std::uint64_t count = 1;
  for (std::uint64_t k = 0; k < m; ++k) count = SaturatingMul(count, alphabet);
  for (int r = 0; r < period; ++r)
    count = SaturatingMul(count, Multichoose(ClassSize(length - m, period, r), alphabet - 1));
  return count;
}

ThresholdResult FindThreshold(const Transformer& f, const Transformer& g,
                              const ThresholdOptions& options) {
  CheckCommon(f, g, options);
  if (TwoLayerPair(f, g)) {
    CheckStringLimits(f, g, options);
    return FindByStrings(f, g, options);
  }
  if (options.prune) {
    CheckCellLimits(f, g, options);
    // MPI ranks share the pruned search's windows (FindByCells); shards cannot, since each
    // window depends on the previous one's outcomes: the reducing process runs it alone.
    if (options.dealer && !options.dealer->Reduces() && !options.dealer->Shares())
      return ThresholdResult{};
    return FindByCells(f, g, options);
  }
  CheckStatisticsLimits(f, g, options.max_length);
  return FindByStatistics(f, g, options);
}

}  // namespace ltsim
