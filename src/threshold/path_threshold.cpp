// The path search of `ltsim threshold` for pairs with a two-layer model (docs/theory.md §11.5):
// short lengths string by string, then windows of lengths whose every string is a path of the
// node DAG, searched set by set in parallel tasks, and random strings beyond the limits.
#include "threshold/path_threshold.h"

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/precise.h"
#include "ltsim/eval/two_layer.h"
#include "ltsim/strings/sources.h"
#include "threshold/length_search.h"
#include "threshold/path_bound.h"
#include "threshold/path_dag.h"
#include "threshold/statistics.h"
#include "threshold/witness_recheck.h"

namespace ltsim::threshold {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Bytes a node costs: the y¹ tables (shared when the first layers are the same) and, per
// thread, the arrays of a set spanning every node: the compact indices (global 8, local 4),
// successors (4 per token), final and dead flags (1 + 1) and slot's node (8); the dynamic
// programme's value and parent arrays (12, counted as 16) and four inputs (ya[2], yb[2]: 32,
// counted as 48: an upper estimate, which fixes the limit N'); per head four
// interval arrays and values (40).
std::uint64_t BytesPerNode(const Transformer& f, const Transformer& g, int threads) {
  const bool shared = SameFirstLayer(f, g);
  const std::uint64_t tables = 8u * (f.width + (shared ? 0 : g.width));
  std::uint64_t heads = 0;
  for (const Transformer* m : {&f, &g})
    if (m->layers.size() > 1) heads += m->layers[1].heads.size();
  const std::uint64_t per_thread = 8 + 4 + 4u * f.alphabet + 1 + 1 + 8 + 16 + 48 + 40 * heads;
  return tables + per_thread * static_cast<std::uint64_t>(std::max(threads, 1));
}

// Every string of length T in order (the last token fastest).
bool NextString(std::vector<Token>& x, int alphabet) {
  for (std::size_t k = x.size(); k-- > 0;) {
    if (++x[k] < alphabet) return true;
    x[k] = 0;
  }
  return false;
}

struct Evaluated {
  double gap = -1.0;
  bool disagrees = false;
};

Evaluated EvaluateString(const PathPair& pair, const std::vector<Token>& x, double epsilon) {
  Vector a, b;
  PathOutputs(pair, PathNodes(pair.dag(), x), a, b);
  Evaluated e;
  e.gap = PathGap(a, b);
  e.disagrees = ThresholdDisagrees(e.gap, epsilon, a, b);
  return e;
}

enum class Goal { kFirst, kMax };

// A task: one final window, consecutive lengths whose windows have one length.
struct Task {
  std::uint32_t window = 0;
  std::uint64_t T_lo = 0, T_hi = 0;
};

// What a task found, per length of its range.
struct TaskOutcome {
  std::vector<double> max_gap;  // [T − T_lo]: the largest gap evaluated (NaN: none)
  std::uint64_t first = 0;      // kFirst: the smallest disagreeing length found, 0 if none
  double best_gap = -1.0;       // kMax: the largest disagreeing gap, with its string
  std::vector<Token> best;
  std::uint64_t evaluations = 0, sets = 0, pruned = 0, leaves = 0, programs = 0;
  std::uint64_t unfinished = 0;  // the smallest length the budget left uncovered, 0 if none
};

// Branch and bound over the paths of a task (docs/theory.md §11.5, "The search"): depth
// first, shorter lengths first, each set bounded against ε (kFirst: lengths at or beyond the
// first disagreement found are dropped) or against the largest gap found so far (kMax, one
// length: the largest gap and a string realising it). Deterministic.
TaskOutcome SearchTask(const PathPair& pair, const Task& task, double epsilon, Goal goal,
                       const BoundOptions& bo, std::uint64_t budget, BoundScratch& scratch) {
  TaskOutcome out;
  out.max_gap.assign(task.T_hi - task.T_lo + 1, kNaN);
  std::vector<PathSet> stack{RootPathSet(pair, task.T_lo, task.T_hi, task.window)};
  auto note = [&](const std::vector<Token>& x) {
    const std::uint64_t T = x.size();
    if (out.first != 0 && T >= out.first) return;
    const Evaluated e = EvaluateString(pair, x, epsilon);
    ++out.evaluations;
    double& m = out.max_gap[T - task.T_lo];
    if (std::isnan(m) || e.gap > m) m = e.gap;
    if (!e.disagrees) return;
    if (goal == Goal::kFirst) out.first = T;
    if (e.gap > out.best_gap) {
      out.best_gap = e.gap;
      out.best = x;
    }
  };
  while (!stack.empty()) {
    PathSet set = std::move(stack.back());
    stack.pop_back();
    if (out.first != 0) {
      if (set.length >= out.first) continue;
      set.length_hi = std::min(set.length_hi, out.first - 1);
    }
    if (out.evaluations + out.programs > budget) {
      // Every length from the smallest one still pending is uncovered.
      std::uint64_t pending = set.length;
      for (const PathSet& p : stack) pending = std::min(pending, p.length);
      out.unfinished = pending;
      return out;
    }
    const double limit = goal == Goal::kFirst ? epsilon : std::max(epsilon, out.best_gap);
    SetBound b = BoundPathSet(pair, set, limit, bo, &scratch);
    ++out.sets;
    out.programs += b.programs;
    for (const auto& x : b.candidates) note(x);
    if (b.empty) continue;
    if (b.holds) {
      ++out.pruned;
      continue;
    }
    if (b.leaf || b.children.empty()) {
      ++out.leaves;
      bool all = true;
      for (const auto& x :
           EnumeratePaths(pair, set, std::numeric_limits<std::uint64_t>::max(), &all))
        note(x);
      LTSIM_CHECK(all);
      continue;
    }
    for (auto it = b.children.rbegin(); it != b.children.rend(); ++it)
      stack.push_back(std::move(*it));
  }
  return out;
}

std::vector<Task> WindowTasks(const PathDag& dag, std::uint64_t a, std::uint64_t b) {
  std::vector<Task> tasks;
  const std::uint64_t m = static_cast<std::uint64_t>(dag.view().locality) + 1;
  // Lengths with windows shorter than τ* + 1 one by one, the rest in chunks.
  std::uint64_t T = a;
  while (T <= b) {
    const std::uint64_t l = std::min(T, m);
    std::uint64_t windows = 1;
    for (std::uint64_t t = 0; t < l; ++t)
      windows *= static_cast<std::uint64_t>(dag.view().alphabet);
    const std::uint64_t hi = T < m ? T : b;
    const std::uint64_t count = hi - T + 1;
    const std::uint64_t chunks =
        std::min(count, std::max<std::uint64_t>(1, (16 + windows - 1) / windows));
    for (std::uint32_t w = 0; w < windows; ++w)
      for (std::uint64_t q = 0; q < chunks; ++q)
        tasks.push_back({w, T + count * q / chunks, T + count * (q + 1) / chunks - 1});
    T = hi + 1;
  }
  return tasks;
}

// The witness: re-evaluated as a string by the evaluators, then in 50 digits.
void SetPathWitness(const Transformer& f, const Transformer& g, const std::vector<Token>& x,
                    double found_gap, double epsilon, ThresholdResult& result) {
  result.first_disagreement = x.size();
  result.witness = ToRuns(x);
  const auto source = MakeRunSource(result.witness, "witness");
  result.f_witness = Evaluate(f, *source);
  result.g_witness = Evaluate(g, *source);
  result.gap = Gap(result.f_witness, result.g_witness);
  RecheckWitness(f, g, epsilon, result);
  // The tables and the evaluators agree to rounding, except where a second-layer weight sits
  // at its hardmax or finite threshold within rounding (docs/theory.md §11.5).
  if (!(result.gap == found_gap ||
        std::abs(result.gap - found_gap) <= 1e-9 * (1.0 + std::abs(found_gap))))
    result.recheck.note += fmt::format(
        "; the path search's tables gave this witness the gap {} (a weight at a rounding "
        "threshold, decided differently by the evaluators)",
        found_gap);
}

}  // namespace

std::uint64_t PathSearchLength(const Transformer& f, const Transformer& g, std::uint64_t max_length,
                               int threads) {
  const JointView view = JointViewOf({&f, &g});
  const std::uint64_t per_node = BytesPerNode(f, g, threads);
  const std::uint64_t cap = kThresholdPathMaxNodes + 1;
  if (PathDag::CountNodes(view, 1, cap) > kThresholdPathMaxNodes) return 0;
  std::uint64_t lo = 1, hi = max_length;
  auto fits = [&](std::uint64_t n) {
    const std::uint64_t nodes = PathDag::CountNodes(view, n, cap);
    return nodes <= kThresholdPathMaxNodes &&
           static_cast<double>(nodes) * static_cast<double>(per_node) <=
               static_cast<double>(kThresholdPathMaxBytes);
  };
  if (!fits(1)) return 0;
  if (fits(hi)) return hi;
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

void CheckPathLimits(const Transformer& f, const Transformer& g, const ThresholdOptions& o,
                     std::uint64_t exact) {
  if (o.samples_per_length < 1) throw OptionError("samples_per_length", "must be at least 1");
  if (!(o.leaf_paths >= 1.0)) throw OptionError("leaf_paths", "must be at least 1");
  for (const Transformer* m : {&f, &g})
    if (m->layers.size() == 2 && m->types() > kTwoLayerMaxTypes && o.max_length > kReferenceLimit)
      throw OptionError("max_length",
                        fmt::format("a two-layer model with S·Δ = {} > {} is evaluated by the "
                                    "reference evaluator, up to {} tokens",
                                    m->types(), kTwoLayerMaxTypes, kReferenceLimit),
                        std::to_string(o.max_length));
  unsigned __int128 tokens = 0;
  for (std::uint64_t t = exact + 1; t <= o.max_length; ++t) {
    tokens += static_cast<unsigned __int128>(t) * o.samples_per_length;
    if (tokens > kThresholdMaxRandomTokens)
      throw OptionError("max_length",
                        fmt::format("beyond the path search's limit (length {}) the random "
                                    "search reads more than {} tokens at {} samples per length; "
                                    "the largest max length within the limit is {}",
                                    exact, kThresholdMaxRandomTokens, o.samples_per_length, t - 1),
                        std::to_string(o.max_length));
  }
}

ThresholdResult FindByPaths(const Transformer& f, const Transformer& g,
                            const ThresholdOptions& options) {
  {
    const int threads =
        options.threads > 0 ? options.threads : oneapi::tbb::this_task_arena::max_concurrency();
    CheckPathLimits(
        f, g, options,
        std::min(options.max_length, PathSearchLength(f, g, options.max_length, threads)));
  }
  if (options.min_length > 1)
    throw OptionError("min_length",
                      "is not supported by the two-layer path search (docs/theory.md §11.5): "
                      "use the string search (--no-paths)");
  if (options.dealer && !options.dealer->Reduces()) return ThresholdResult{};
  const StopWatch watch(options);
  const auto start = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  ThresholdResult result;
  result.method = ThresholdMethod::kPaths;
  result.view = JointViewOf({&f, &g});
  const int threads =
      options.threads > 0 ? options.threads : oneapi::tbb::this_task_arena::max_concurrency();
  result.threads = threads;
  const std::uint64_t N = options.max_length;
  const std::uint64_t exact = std::min(N, PathSearchLength(f, g, N, threads));
  result.paths.limit_length = exact;
  const double eps = options.epsilon;
  const int S = result.view.alphabet;
  result.max_gap_per_length.assign(N, kNaN);
  oneapi::tbb::task_arena arena(threads);
  PathDag dag(result.view);
  PathPair pair(f, g, dag);
  std::uint64_t checked = 0;
  std::uint64_t exact_at_first = 0;  // T* when its largest gap was maximised exactly
  bool found = false;
  // A budget or a signal stops the search between lengths (phase 1, 3) or windows (phase 2).
  const auto stopped = [&]() {
    const ThresholdStop why = watch.Fired();
    if (why == ThresholdStop::kNone) return false;
    result.complete = false;
    result.stopped = why;
    return true;
  };
  const auto finish = [&](std::uint64_t checked_to, bool exhaustive_to_checked) {
    result.checked_up_to = checked_to;
    result.max_gap_per_length.resize(checked_to);
    // Certified brackets (docs/theory.md §11.4): exact on the lengths enumerated string by
    // string and at a T* the path search maximised; elsewhere no upper bound is reported.
    result.gap_upper_per_length.assign(checked_to, kNaN);
    for (std::uint64_t t = 1; t <= std::min(checked_to, result.paths.enumerated_up_to); ++t)
      result.gap_upper_per_length[t - 1] = result.max_gap_per_length[t - 1];
    if (exact_at_first != 0 && exact_at_first <= checked_to)
      result.gap_upper_per_length[exact_at_first - 1] =
          result.max_gap_per_length[exact_at_first - 1];
    result.exhaustive_up_to = std::min(checked_to, exact);
    result.exhaustive = exhaustive_to_checked && checked_to <= exact;
    result.paths.nodes = dag.nodes();
    return result;
  };
  // 1. Short lengths string by string, on the DAG's tables (their maxima are exact).
  std::uint64_t total = 0, power = 1, T = 0;
  while (T < exact) {
    if (stopped()) return finish(checked, true);
    if (power > options.full_strings) break;
    power *= static_cast<std::uint64_t>(S);
    if (total + power > options.full_strings) break;
    ++T;
    total += power;
    dag.Extend(T);
    arena.execute([&] { pair.Extend(); });
    std::vector<Token> x(T, 0), best;
    double max_gap = -1.0, best_gap = -1.0;
    bool disagrees = false;
    do {
      const Evaluated e = EvaluateString(pair, x, eps);
      ++result.evaluations;
      max_gap = std::max(max_gap, e.gap);
      if (e.disagrees && e.gap > best_gap) {
        best_gap = e.gap;
        best = x;
        disagrees = true;
      }
    } while (NextString(x, S));
    result.max_gap_per_length[T - 1] = max_gap;
    result.paths.enumerated_up_to = T;
    checked = T;
    if (disagrees) {
      SetPathWitness(f, g, best, best_gap, eps, result);
      if (options.progress) options.progress(T, N, result.evaluations, seconds());
      return finish(T, true);
    }
  }
  // 2. Windows of lengths, each a set of independent tasks.
  BoundOptions bo;
  bo.leaf_paths = options.leaf_paths;
  // The bound's arrays, one per arena slot for the whole search (they never change a result):
  // a task uses the slot of the thread running it, and the arena has exactly `threads` slots.
  std::vector<BoundScratch> scratches(static_cast<std::size_t>(threads));
  const auto scratch = [&]() -> BoundScratch& {
    const int slot = oneapi::tbb::this_task_arena::current_thread_index();
    LTSIM_CHECK(slot >= 0 && slot < threads);
    return scratches[static_cast<std::size_t>(slot)];
  };
  std::uint64_t a = checked + 1;
  while (a <= exact && !found) {
    if (stopped()) return finish(checked, true);
    const std::uint64_t b = std::min(exact, a + std::max<std::uint64_t>(8, a / 8) - 1);
    dag.Extend(b);
    arena.execute([&] { pair.Extend(); });
    const std::vector<Task> tasks = WindowTasks(dag, a, b);
    std::vector<TaskOutcome> outcomes(tasks.size());
    const std::uint64_t budget = options.max_evaluations;
    arena.execute([&] {
      oneapi::tbb::parallel_for(std::size_t{0}, tasks.size(), [&](std::size_t i) {
        outcomes[i] = SearchTask(pair, tasks[i], eps, Goal::kFirst, bo, budget, scratch());
      });
    });
    // The first disagreement, and the first length a budget left uncovered.
    std::uint64_t first = 0, unfinished = 0;
    for (const TaskOutcome& o : outcomes) {
      if (o.first != 0 && (first == 0 || o.first < first)) first = o.first;
      if (o.unfinished != 0 && (unfinished == 0 || o.unfinished < unfinished))
        unfinished = o.unfinished;
    }
    const std::uint64_t stop =
        unfinished != 0 && (first == 0 || unfinished <= first) ? unfinished : 0;
    auto add = [&](const TaskOutcome& o) {
      result.evaluations += o.evaluations;
      result.paths.sets += o.sets;
      result.paths.sets_pruned += o.pruned;
      result.paths.leaves += o.leaves;
      result.paths.programs += o.programs;
    };
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      add(outcomes[i]);
      for (std::uint64_t L = tasks[i].T_lo; L <= tasks[i].T_hi; ++L) {
        if ((first != 0 && L >= first) || (stop != 0 && L >= stop)) break;
        const double gap = outcomes[i].max_gap[L - tasks[i].T_lo];
        double& m = result.max_gap_per_length[L - 1];
        if (!std::isnan(gap) && (std::isnan(m) || gap > m)) m = gap;
      }
    }
    if (stop != 0) {
      result.complete = false;
      result.stopped = ThresholdStop::kEvaluations;
      return finish(stop - 1, true);
    }
    if (first != 0) {
      // The largest gap at T* over every final window, and a string realising it.
      const std::uint64_t m = static_cast<std::uint64_t>(result.view.locality) + 1;
      std::uint64_t windows = 1;
      for (std::uint64_t t = 0; t < std::min(first, m); ++t)
        windows *= static_cast<std::uint64_t>(S);
      std::vector<TaskOutcome> best(windows);
      arena.execute([&] {
        oneapi::tbb::parallel_for(std::uint64_t{0}, windows, [&](std::uint64_t w) {
          best[w] = SearchTask(pair, {static_cast<std::uint32_t>(w), first, first}, eps, Goal::kMax,
                               bo, std::numeric_limits<std::uint64_t>::max(), scratch());
        });
      });
      std::size_t arg = windows;
      for (std::size_t w = 0; w < windows; ++w) {
        add(best[w]);
        if (!best[w].best.empty() && (arg == windows || best[w].best_gap > best[arg].best_gap))
          arg = w;
      }
      LTSIM_CHECK(arg < windows);  // the kFirst search found a disagreeing string at T*
      result.max_gap_per_length[first - 1] = best[arg].best_gap;
      exact_at_first = first;
      SetPathWitness(f, g, best[arg].best, best[arg].best_gap, eps, result);
      if (options.progress) options.progress(first, N, result.evaluations, seconds());
      return finish(first, true);
    }
    checked = b;
    if (options.progress) options.progress(b, N, result.evaluations, seconds());
    if (result.evaluations + result.paths.programs > options.max_evaluations && b < N) {
      result.complete = false;
      result.stopped = ThresholdStop::kEvaluations;
      return finish(b, true);
    }
    a = b + 1;
  }
  std::vector<BoundScratch>().swap(scratches);  // phase 3 needs no bound
  // 3. Beyond the limits: random strings, a measurement.
  if (checked < N) {
    result.samples_per_length = options.samples_per_length;
    for (std::uint64_t L = checked + 1; L <= N; ++L) {
      if (stopped()) return finish(L - 1, false);
      boost::random::mt19937_64 engine(StreamSeed(options.seed, "threshold", L));
      boost::random::uniform_int_distribution<int> token(0, S - 1);
      std::vector<Token> x(L), best;
      double max_gap = -1.0, best_gap = -1.0;
      for (std::uint64_t k = 0; k < options.samples_per_length; ++k) {
        for (Token& s : x) s = static_cast<Token>(token(engine));
        const auto source = MakeTokenSource(x, "x");
        const Vector fa = Evaluate(f, *source), ga = Evaluate(g, *source);
        const double gap = Gap(fa, ga);
        ++result.evaluations;
        max_gap = std::max(max_gap, gap);
        if (ThresholdDisagrees(gap, eps, fa, ga) && gap > best_gap) {
          best_gap = gap;
          best = x;
        }
      }
      result.max_gap_per_length[L - 1] = max_gap;
      if (!best.empty()) {
        SetPathWitness(f, g, best, best_gap, eps, result);
        return finish(L, false);
      }
      if (options.progress) options.progress(L, N, result.evaluations, seconds());
    }
  }
  return finish(N, true);
}

}  // namespace ltsim::threshold
