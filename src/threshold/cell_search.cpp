// The pruned search of one-layer pairs: windows of lengths, each split into tasks (one context,
// a range of lengths) whose cells of the count lattice are evaluated or pruned by a certified
// bound (docs/theory.md §11), reduced in a fixed order so the result is the same for any
// number of threads or ranks.
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "eval/layer_math.h"
#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/core/work.h"
#include "ltsim/model/joint_view.h"
#include "threshold/cells.h"
#include "threshold/item_codec.h"
#include "threshold/searches.h"
#include "threshold/statistics.h"
#include "threshold/witness_recheck.h"

namespace ltsim::threshold {
namespace {

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

// What a merge consumed for one task: the recorded bytes and their origin (shard file and
// item), kept to check the task a decision rests on (docs/distributed.md §4.1).
struct Recorded {
  std::string bytes;
  std::string origin;
};

// How RunTasks treats a dealer's items beyond receiving them on the reducing process.
struct DealtTasks {
  bool* all_arrived = nullptr;                // set: whether every outcome reached the reducer
  bool keep_computed = false;                 // a shard: keep the outcomes this process computed
  std::vector<Recorded>* recorded = nullptr;  // a merge: each task's recorded bytes
  StopFn stop;                                // passed to the dealer
  bool stopped = false;                       // the dealer's report: stopped early
};

// The outcomes of `tasks`, each a pure function of its spec. With `dealer` (MPI ranks that
// share decisions, docs/distributed.md §2; a shard; a merge's replay) the tasks are dealt in
// chunks of `chunk` and only the reducing process receives the outcomes (the other processes'
// stay empty, or with `keep_computed` hold what they computed); without, this process runs
// them all on its arena's threads.
std::vector<TaskOutcome> RunTasks(const Transformer& f, const Transformer& g, const JointView& view,
                                  const std::vector<TaskSpec>& tasks, const EngineOptions& o,
                                  oneapi::tbb::task_arena& arena, ItemDealer* dealer,
                                  std::uint64_t chunk, DealtTasks* how = nullptr) {
  std::vector<TaskOutcome> out(tasks.size());
  DealtTasks none;
  if (how == nullptr) how = &none;
  if (how->all_arrived) *how->all_arrived = true;
  if (how->recorded) how->recorded->assign(tasks.size(), Recorded{});
  const auto run = [&](std::size_t begin, std::size_t end, TaskOutcome* into) {
    arena.execute([&] {
      oneapi::tbb::parallel_for(
          begin, end, [&](std::size_t i) { into[i - begin] = RunTask(f, g, view, tasks[i], o); });
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
        if (how->keep_computed) std::move(part.begin(), part.end(), out.begin() + begin);
        return bytes;
      },
      [&](std::uint64_t i, std::string&& bytes) {
        out[i] = TaskFromBytes(bytes, tasks[i], view);
        if (how->recorded) (*how->recorded)[i] = {std::move(bytes), g_byte_origin};
        return true;
      },
      how->stop);
  how->stopped = report.stopped;
  if (how->all_arrived) *how->all_arrived = !dealer->Reduces() || report.consumed == tasks.size();
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

// What the reducing process decides after each window, broadcast to the other ranks.
enum Decision : std::uint8_t { kGoOn, kDisagrees, kBudgetSpent, kLost, kStopped };

// a if b is NaN, b if a is, else the larger.
double NanMax(double a, double b) { return std::isnan(a) ? b : std::isnan(b) ? a : std::max(a, b); }

// One run of the pruned search. Under MPI every rank runs it and computes a share of each
// window's tasks; the reducing rank alone sees the outcomes, decides whether the search goes
// on, and broadcasts its decision, so every rank makes the same Deals and the result is the
// single process's (other ranks return an empty result).
class CellSearch {
 public:
  CellSearch(const Transformer& f, const Transformer& g, const ThresholdOptions& options)
      : f_(f),
        g_(g),
        options_(options),
        watch_(options),
        threads_(options.threads > 0 ? options.threads
                                     : oneapi::tbb::this_task_arena::max_concurrency()),
        arena_(threads_) {
    result_.method = ThresholdMethod::kStatistics;
    result_.view = JointViewOf({&f, &g});
    result_.pruned = true;
    view_ = result_.view;
    view_.period = SearchPeriod(f, g, view_.period);
    result_.search_period = view_.period;
    N_ = options.max_length;
    n_ = options.min_length;
    result_.min_length = n_;
    m_ = static_cast<std::uint64_t>(view_.locality) + 1;
    result_.threads = threads_;
    // Whom the windows' tasks are dealt to: MPI ranks that share decisions, a shard that
    // records its blocks, a merge that replays them; or nobody (this process runs them all).
    ItemDealer* const d = options.dealer;
    if (d != nullptr && d->Replays()) {
      replaying_ = true;
    } else if (d != nullptr && d->Processes() > 1 && d->Shares()) {
      shared_ = true;
    } else if (d != nullptr && !d->Reduces() && !d->Shares()) {
      recording_ = true;
    }
    dealer_ = replaying_ || shared_ || recording_ ? d : nullptr;
    reduces_ = !recording_ && (!shared_ || dealer_->Reduces());
    chunk_ = static_cast<std::uint64_t>(threads_);
    result_.max_gap_per_length.assign(N_, std::numeric_limits<double>::quiet_NaN());
    result_.gap_upper_per_length.assign(N_, std::numeric_limits<double>::quiet_NaN());
    // Inside a window only when this process runs the tasks it deals: ranks that share windows
    // stop between windows, when the reducing rank decides so; a merge computes only the
    // largest gap at T* (LargestGapAt sets it there). A shard stopped inside a task is not
    // whole and writes no file.
    if ((dealer_ == nullptr || recording_) && Watched())
      engine_.interrupted = [this] { return watch_.Fired() != ThresholdStop::kNone; };
  }

  ThresholdResult Run() {
    std::uint64_t short_first = SearchShortLengths();
    Decision short_decision = short_first != 0 ? kDisagrees : kGoOn;
    Agree(short_decision, short_first);
    if (short_decision == kDisagrees) return reduces_ ? Finish(short_first) : ThresholdResult{};
    contexts_ = AllContexts(view_);
    per_length_ = LogScaled(f_) || LogScaled(g_);
    engine_.epsilon = options_.epsilon;
    engine_.leaf_points = options_.leaf_statistics;
    engine_.count_pruned = options_.count_pruned;
    std::uint64_t a = std::max(m_ + 1, n_);
    if (recording_) return RecordWindows(a);
    while (a <= N_) {
      std::uint64_t b = 0;
      bool full = false;
      std::uint64_t first = 0;
      const Decision decision = SearchWindow(a, b, full, first);
      if (decision == kLost) {
        // Exact up to the previous window only.
        if (!reduces_) return ThresholdResult{};
        result_.complete = false;
        return Finish(a - 1);
      }
      if (decision == kDisagrees) return LargestGapAt(first, full);
      if (!reduces_) {
        if (decision == kBudgetSpent || decision == kStopped) return ThresholdResult{};
        a = b + 1;
        continue;
      }
      if (options_.progress) options_.progress(b, N_, result_.evaluations, Seconds());
      if (decision == kBudgetSpent || decision == kStopped) {
        result_.complete = false;
        result_.stopped = decision == kBudgetSpent ? ThresholdStop::kEvaluations : stopped_;
        return Finish(b);
      }
      a = b + 1;
    }
    if (!reduces_) return ThresholdResult{};
    return Finish(N_);
  }

 private:
  double Seconds() const { return watch_.Seconds(); }
  bool Watched() const { return options_.time_budget > 0.0 || options_.stop != nullptr; }

  // Every rank takes the reducing rank's decision (no-op without a sharing dealer).
  void Agree(Decision& decision, std::uint64_t& first) const {
    if (!shared_) return;
    ByteWriter w;
    FieldWriter{w}(decision, first);
    std::string bytes = w.Take();
    dealer_->Broadcast(bytes);
    ByteReader r(bytes);
    FieldReader{r}(decision, first);
  }

  // The result, exact up to `checked`, with its statistic counts and each length's bracket:
  // the upper bound is the larger of the pruned cells' bounds and the evaluated gaps.
  ThresholdResult Finish(std::uint64_t checked) {
    result_.checked_up_to = checked;
    result_.max_gap_per_length.resize(checked);
    result_.gap_upper_per_length.resize(checked);
    for (std::uint64_t t = n_; t <= checked; ++t) {
      double& upper = result_.gap_upper_per_length[t - 1];
      upper = NanMax(upper, result_.max_gap_per_length[t - 1]);
    }
    result_.exhaustive_up_to = checked;
    result_.exhaustive = true;
    for (std::uint64_t t = n_; t <= checked; ++t)
      result_.statistics_total =
          SaturatingAdd(result_.statistics_total,
                        CountStatistics(view_.alphabet, view_.period, view_.locality, t));
    result_.statistics_pruned =
        result_.statistics_total - std::min(result_.statistics_total, result_.statistics_evaluated);
    return result_;
  }

  // Lengths T ≤ τ* + 1 have no far positions: every statistic, on the reducing process, which
  // tells the others whether the search ends there. Returns the first disagreement, or 0.
  std::uint64_t SearchShortLengths() {
    for (std::uint64_t t = n_; t <= std::min(N_, m_) && (reduces_ || recording_); ++t) {
      const std::uint64_t before = result_.evaluations;
      const LengthOutcome outcome =
          SearchStatistics(f_, g_, result_.view, t, options_.epsilon, result_.evaluations);
      result_.statistics_evaluated += result_.evaluations - before;
      result_.statistics_precise += outcome.precise;
      result_.max_gap_per_length[t - 1] = outcome.max_gap;
      result_.gap_upper_per_length[t - 1] = outcome.max_gap;
      if (outcome.disagrees) {
        SetWitness(f_, g_, t,
                   ToRuns(outcome.argmax_counts ? Realise(*outcome.argmax_counts) : outcome.argmax),
                   outcome.witness_gap, options_.epsilon, result_);
        return t;
      }
    }
    return 0;
  }

  // The window from a: a single length enumerated in full while that is cheap (`full`), then
  // growing windows. Returns its last length b. A function of a and the statistics of the
  // lengths before it (never of outcomes), so a shard cuts the windows one process cuts.
  std::uint64_t WindowEnd(std::uint64_t a, bool& full) const {
    const std::uint64_t here = CountStatistics(view_.alphabet, view_.period, view_.locality, a);
    full = SaturatingAdd(cumulative_, here) <= options_.full_statistics;
    return full ? a : std::min(N_, a + std::max<std::uint64_t>(8 * view_.period, a / 8) - 1);
  }

  void CountWindow(std::uint64_t a, std::uint64_t b) {
    for (std::uint64_t t = a; t <= b; ++t)
      cumulative_ = SaturatingAdd(cumulative_,
                                  CountStatistics(view_.alphabet, view_.period, view_.locality, t));
  }

  // A shard's windows (docs/distributed.md §4.2): the windows one process cuts, each window's
  // tasks dealt to the ShardWriter, which computes this shard's blocks of them, every task's
  // outcome a function of its spec alone. The shard stops after a window in which one of its
  // own tasks disagrees (the merge's T* is then at most that task's, so the merge needs no
  // later window) or once its own tasks' evaluations pass the budget (the merge adds every
  // task's, so its total passes it by that window too); otherwise it goes on to N. It returns
  // no result: the merge replays the windows, consuming the recorded outcomes.
  ThresholdResult RecordWindows(std::uint64_t a) {
    std::uint64_t evaluations = result_.evaluations;  // the short lengths', as the merge's
    while (a <= N_) {
      bool full = false;
      const std::uint64_t b = WindowEnd(a, full);
      engine_.goal = Goal::kFirst;
      engine_.prune = !full;
      const std::vector<TaskSpec> tasks = WindowTasks(contexts_, view_, a, b, per_length_);
      DealtTasks how;
      how.keep_computed = true;
      if (Watched()) how.stop = [this] { return watch_.Fired() != ThresholdStop::kNone; };
      const std::vector<TaskOutcome> own =
          RunTasks(f_, g_, view_, tasks, engine_, arena_, dealer_, chunk_, &how);
      if (how.stopped) {
        ThresholdResult stopped;
        stopped.complete = false;
        stopped.stopped = watch_.Fired();
        return stopped;
      }
      bool disagrees = false;
      for (const TaskOutcome& o : own) {
        evaluations += o.evaluations;
        disagrees = disagrees || o.first_T != 0;
      }
      CountWindow(a, b);
      if (disagrees || (evaluations > options_.max_evaluations && b < N_)) break;
      a = b + 1;
    }
    return ThresholdResult{};
  }

  // A merge's check of the task the window's first disagreement rests on (the first with
  // first_T = first): computed again, it must give the recorded bytes, so a forged item cannot
  // decide T* (docs/distributed.md §4.1).
  void ConfirmFirst(const std::vector<TaskSpec>& tasks, const std::vector<TaskOutcome>& outcomes,
                    std::uint64_t first) {
    std::size_t i = 0;
    while (i < outcomes.size() && outcomes[i].first_T != first) ++i;
    LTSIM_CHECK(i < outcomes.size());
    EngineOptions engine = engine_;
    engine.interrupted = nullptr;  // the recorded task ran whole
    std::string again;
    arena_.execute([&] { again = TaskBytes(RunTask(f_, g_, view_, tasks[i], engine)); });
    if (again != recorded_[i].bytes)
      throw InputError(recorded_[i].origin +
                       ": the recorded result differs from the one this command computes (a "
                       "forged or corrupted shard; run the shard again)");
  }

  // Sets b and the window's first disagreement; returns the agreed decision.
  Decision SearchWindow(std::uint64_t a, std::uint64_t& b, bool& full, std::uint64_t& first) {
    b = WindowEnd(a, full);
    engine_.goal = Goal::kFirst;
    engine_.prune = !full;
    const std::vector<TaskSpec> tasks = WindowTasks(contexts_, view_, a, b, per_length_);
    bool arrived = true;
    DealtTasks how;
    how.all_arrived = &arrived;
    if (replaying_) how.recorded = &recorded_;
    const std::vector<TaskOutcome> outcomes =
        RunTasks(f_, g_, view_, tasks, engine_, arena_, dealer_, chunk_, &how);
    first = 0;
    for (const TaskOutcome& o : outcomes)
      if (o.first_T != 0 && (first == 0 || o.first_T < first)) first = o.first_T;
    if (replaying_ && first != 0) ConfirmFirst(tasks, outcomes, first);
    // An interrupted task finished every length below its stopped_at: the window is certified
    // below the smallest of them (and below a disagreement, whose largest gap is not searched).
    std::uint64_t stopped_below = 0;
    for (const TaskOutcome& o : outcomes)
      if (o.stopped_at != 0 && (stopped_below == 0 || o.stopped_at < stopped_below))
        stopped_below = o.stopped_at;
    if (stopped_below != 0) {
      stopped_ = watch_.Fired();
      if (stopped_ == ThresholdStop::kNone) stopped_ = ThresholdStop::kTimeBudget;
      const std::uint64_t cut = first != 0 ? std::min(first, stopped_below) : stopped_below;
      AddWindow(tasks, outcomes, cut);
      b = std::max(a, cut) - 1;
      first = 0;
      return kStopped;  // one process: nobody to agree with
    }
    if (reduces_) AddWindow(tasks, outcomes, first);
    CountWindow(a, b);
    const ThresholdStop fired = reduces_ && b < N_ ? watch_.Fired() : ThresholdStop::kNone;
    if (fired != ThresholdStop::kNone) stopped_ = fired;
    Decision decision = !arrived                                                   ? kLost
                        : first != 0                                               ? kDisagrees
                        : result_.evaluations > options_.max_evaluations && b < N_ ? kBudgetSpent
                        : fired != ThresholdStop::kNone                            ? kStopped
                                                                                   : kGoOn;
    Agree(decision, first);
    return decision;
  }

  // The window's counts and per-length maxima, below its first disagreement.
  void AddWindow(const std::vector<TaskSpec>& tasks, const std::vector<TaskOutcome>& outcomes,
                 std::uint64_t first) {
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      const TaskOutcome& o = outcomes[i];
      result_.evaluations += o.evaluations;
      result_.statistics_precise += o.precise;
      result_.cells += o.cells;
      result_.cells_pruned += o.cells_pruned;
      result_.max_pruned_bound = std::max(result_.max_pruned_bound, o.max_pruned_bound);
      for (std::size_t q = 0; q < o.evaluated.size(); ++q) {
        const std::uint64_t T =
            tasks[i].T_base + (static_cast<std::uint64_t>(tasks[i].k_lo) + q) * view_.period;
        if (first != 0 && T >= first) break;
        result_.statistics_evaluated += o.evaluated[q];
        if (o.pruned.size() > q) result_.statistics_pruned_counted += o.pruned[q];
        double& best = result_.max_gap_per_length[T - 1];
        if (!std::isnan(o.max_gap[q]) && (std::isnan(best) || o.max_gap[q] > best))
          best = o.max_gap[q];
        double& upper = result_.gap_upper_per_length[T - 1];
        upper = NanMax(upper, o.max_bound[q]);
      }
    }
  }

  // The largest gap at T* = first and its statistic: every statistic of T* evaluated or
  // bounded by a certified bound ≤ the largest gap found.
  ThresholdResult LargestGapAt(std::uint64_t first, bool full) {
    engine_.goal = Goal::kMax;
    engine_.prune = !full;
    const std::vector<TaskSpec> at = WindowTasks(contexts_, view_, first, first, true);
    bool best_arrived = true;
    DealtTasks how;
    how.all_arrived = &best_arrived;
    // The shards stopped at their own first disagreements, not knowing T*: a merge computes
    // the largest gap at T* itself (one length).
    if (replaying_ && Watched())
      engine_.interrupted = [this] { return watch_.Fired() != ThresholdStop::kNone; };
    const std::vector<TaskOutcome> best =
        RunTasks(f_, g_, view_, at, engine_, arena_, replaying_ ? nullptr : dealer_, chunk_, &how);
    if (!reduces_) return ThresholdResult{};
    bool interrupted = false;
    for (const TaskOutcome& o : best) interrupted = interrupted || o.stopped_at != 0;
    if (!best_arrived || interrupted) {
      // T* is known to disagree, but not its largest gap and witness: exact below it only.
      result_.complete = false;
      if (interrupted) {
        stopped_ = watch_.Fired();
        result_.stopped = stopped_ == ThresholdStop::kNone ? ThresholdStop::kTimeBudget : stopped_;
      }
      return Finish(first - 1);
    }
    std::size_t arg = best.size();
    for (std::size_t i = 0; i < best.size(); ++i) {
      const TaskOutcome& o = best[i];
      result_.evaluations += o.evaluations;
      result_.statistics_precise += o.precise;
      result_.cells += o.cells;
      result_.cells_pruned += o.cells_pruned;
      result_.statistics_evaluated += o.evaluated[0];
      result_.gap_upper_per_length[first - 1] =
          NanMax(result_.gap_upper_per_length[first - 1], NanMax(o.max_bound[0], o.max_gap[0]));
      if (!o.pruned.empty()) result_.statistics_pruned_counted += o.pruned[0];
      if (!o.best_counts.empty() && (arg == best.size() || o.best_gap > best[arg].best_gap))
        arg = i;
    }
    LTSIM_CHECK(arg < best.size());  // the kFirst search found a disagreeing statistic here
    result_.max_gap_per_length[first - 1] = best[arg].best_gap;
    const TypeCounts joint = JointCounts(view_, at[arg], best[arg].best_counts, first);
    SetWitness(f_, g_, first, ToRuns(Realise(joint)), best[arg].best_gap, options_.epsilon,
               result_);
    if (options_.progress) options_.progress(first, N_, result_.evaluations, Seconds());
    return Finish(first);
  }

  const Transformer& f_;
  const Transformer& g_;
  const ThresholdOptions& options_;
  const StopWatch watch_;
  ThresholdStop stopped_ = ThresholdStop::kNone;  // what stopped the search, if anything
  ThresholdResult result_;
  JointView view_;  // the joint view with the search period Δ'
  std::uint64_t N_ = 0, n_ = 1, m_ = 0;
  const int threads_;
  oneapi::tbb::task_arena arena_;
  ItemDealer* dealer_ = nullptr;    // the windows' dealer (below), or null: this process alone
  bool shared_ = false;             // MPI ranks that share decisions (docs/distributed.md §2)
  bool recording_ = false;          // a shard: records its blocks of every window (§4.2)
  bool replaying_ = false;          // a merge: consumes the shards' recorded outcomes (§4.2)
  std::vector<Recorded> recorded_;  // a merge: the current window's recorded bytes
  bool reduces_ = true;
  std::uint64_t chunk_ = 1;
  EngineOptions engine_;
  std::vector<Context> contexts_;
  bool per_length_ = false;
  std::uint64_t cumulative_ = 0;  // statistics of every length before the current window
};

}  // namespace

ThresholdResult FindByCells(const Transformer& f, const Transformer& g,
                            const ThresholdOptions& options) {
  return CellSearch(f, g, options).Run();
}

}  // namespace ltsim::threshold
