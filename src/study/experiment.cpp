// The paper's experiments on constructed models: per task and value, the needed length and trend.
#include "ltsim/study/experiment.h"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <tuple>

#include "ltsim/check/needed_length.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/construct/kgram.h"
#include "ltsim/construct/tasks.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/sim/simulator.h"
#include "ltsim/strings/source.h"
#include "ltsim/strings/sources.h"
#include "ltsim/study/point_witness.h"

namespace ltsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

InputSpec InputOf(const ExperimentOptions& o, int alphabet, int index) {
  InputSpec spec;
  spec.kind = o.input;
  spec.length = o.x_length;
  spec.alphabet = alphabet;
  spec.seed = StreamSeed(o.seed, "experiment-x", static_cast<std::uint64_t>(index));
  return spec;
}

std::unique_ptr<Source> Input(const ExperimentOptions& o, int alphabet, int index) {
  return MakeInput(InputOf(o, alphabet, index));
}

std::string SeriesDir(const ExperimentOptions& o, const std::string& task,
                      const std::string& parameter) {
  return (std::filesystem::path(o.out_dir) / (task + "-" + parameter)).string();
}

// A row's witness relative to out_dir (as experiment.json names it).
std::string RelativeStem(const std::string& task, const std::string& parameter, int index) {
  return task + "-" + parameter + "/p" + std::to_string(index);
}

// The row's needed length as a point witness (docs/witnesses.md §6): f with itself (the
// one-layer tasks' NeededLength(f, f); the k-gram's seeded simulator reads f alone), the x of
// the reported number as explicit runs, and the recheck.
std::string WriteRowWitness(const ExperimentOptions& o, const ExperimentRow& row, int index,
                            const Transformer& f, const InputSpec& input, int x_index) {
  PointWitness w;
  w.kind = "needed-length";
  w.study = "experiment";
  w.label =
      "simulator on found x: the " + row.method + " simulator's needed length (neither bound)";
  w.context = {{"task", row.task},
               {"parameter", row.parameter},
               {"value", row.value},
               {"point", index},
               {"x_index", x_index},
               {"input", InputSpecToJson(input)},
               {"censoring", CensoringName(row.task == "kgram" ? row.samples.front().censoring
                                                               : row.samples[x_index].censoring)},
               {"fixed_n", o.fixed_n},
               {"seed", o.seed}};
  w.f = w.g = f;
  w.eps = row.eps;
  w.x = ToRuns(ReadAll(*MakeInput(input), kMaxPointLength));
  w.value = row.needed;
  w.censored = !row.reached;
  if (SimulatorHas(row.method, &SimulatorTraits::block_rate)) {  // the k-gram's seeded simulator
    w.method = row.method;
    w.sim_seeds = o.kgram_seeds;
    w.sim_seed = o.seed;
  }
  RecheckPoint(w);
  const std::string stem = RelativeStem(row.task, row.parameter, index);
  WritePointWitness(w, (std::filesystem::path(o.out_dir) / stem).string());
  return stem + ".point.json";
}

// Above: no n < |x| met ε; below: the grid's first n already met it (docs/statistics.md §1).
Censoring Censor(const Transformer& f, std::uint64_t x_length, std::uint64_t needed, bool reached) {
  if (!reached) return Censoring::kAbove;
  const auto tau = static_cast<std::uint64_t>(f.locality);
  return needed <= NeededLengthGrid(tau + 2, x_length).front() ? Censoring::kBelow
                                                               : Censoring::kNone;
}

Censoring Censor(const Transformer& f, const ExperimentOptions& o, std::uint64_t needed,
                 bool reached) {
  return Censor(f, o.x_length, needed, reached);
}

void Summarise(ExperimentRow& row) {
  SeriesPoint s;
  s.samples = row.samples;
  row.censoring = PointCensoring(s);
  row.spread = SampleSpread(s);
}

// A one-layer task: frequency simulator, NeededLength of the pair (f, f), max over the x seeds.
ExperimentRow OneLayerRow(const ExperimentOptions& o, const Transformer& f, const char* task,
                          const char* parameter, double value, int index) {
  ExperimentRow row{task, parameter, value, "frequency", o.eps};
  int worst = 0;
  for (int i = 0; i < o.seeds; ++i) {
    const auto x = Input(o, f.alphabet, i);
    bool reached = false;
    const std::uint64_t needed = NeededLength(f, f, *x, o.eps, &reached);
    row.samples.push_back({static_cast<double>(needed), Censor(f, o, needed, reached)});
    if (i == 0 || needed > row.needed) {
      row.needed = needed;
      row.reached = reached;
      worst = i;
    }
    const double sim = SimAt(f, {}, *x, "frequency", std::min(o.fixed_n, o.x_length), 0);
    row.sim_at_fixed = i == 0 ? sim : std::max(row.sim_at_fixed, sim);
  }
  const InputSpec input = InputOf(o, f.alphabet, worst);
  row.x_seed = input.seed;
  if (!o.out_dir.empty()) row.witness_file = WriteRowWitness(o, row, index, f, input, worst);
  return row;
}

// A k-gram point: one x (seed index 0), SeededNeededLength with the k-gram method.
ExperimentRow KGramRow(const ExperimentOptions& o, int alphabet, int k, const char* parameter,
                       double value, int index) {
  KGramOptions kgram;
  kgram.alphabet = alphabet;
  kgram.k = k;
  const Transformer f = MakeKGram(kgram);
  ExperimentRow row{"kgram", parameter, value, o.kgram_method, o.kgram_eps};
  const auto x = Input(o, alphabet, 0);
  row.samples.push_back(KGramNeededSample(f, *x, o.kgram_eps, o.kgram_method, o.kgram_seeds, o.seed,
                                          &row.needed, &row.reached));
  const Vector on_x = Evaluate(f, *x);
  for (int i = 0; i < o.kgram_seeds; ++i) {
    const double sim = SimAt(f, on_x, *x, o.kgram_method, std::min(o.fixed_n, o.x_length),
                             StreamSeed(o.seed, "experiment-z", static_cast<std::uint64_t>(i)));
    row.sim_at_fixed = i == 0 ? sim : std::max(row.sim_at_fixed, sim);
  }
  const InputSpec input = InputOf(o, alphabet, 0);
  row.x_seed = input.seed;
  if (!o.out_dir.empty()) row.witness_file = WriteRowWitness(o, row, index, f, input, 0);
  return row;
}

ExperimentTrend MakeTrend(const std::vector<ExperimentRow>& rows, const std::string& task,
                          const std::string& parameter, std::uint64_t seed) {
  ExperimentTrend t;
  t.task = task;
  t.parameter = parameter;
  std::vector<SeriesPoint> series;
  for (const ExperimentRow& r : rows) {
    if (r.task != task || r.parameter != parameter) continue;
    t.values.push_back(r.value);
    t.needed.push_back(r.needed);
    SeriesPoint p;
    p.value = p.regressor = r.value;
    p.samples = r.samples;
    series.push_back(p);
  }
  FitOptions fit;
  fit.seed = StreamSeed(seed, "experiment-fit/" + task + "/" + parameter);
  t.estimate = FitSeries(series, fit);
  t.trend = DecideTrend(series, t.estimate);
  t.rises = t.trend.trend == Trend::kRises;
  t.monotone = t.trend.monotone;
  return t;
}

void Validate(const ExperimentOptions& o) {
  if (o.threads < 0) throw OptionError("threads", "must be at least 0");
  for (double w : o.omegas)
    if (!(w > 0) || !std::isfinite(w)) throw OptionError("omegas", "ω must be positive");
  for (int p : o.primes) {
    if (p < 2 || p > 4096) throw OptionError("primes", "p must be in [2, 4096]");
    // ModPTask(p, k) is the paper's task for a prime p (docs/theory.md §6).
    for (int q = 2; q * q <= p; ++q)
      if (p % q == 0) throw OptionError("primes", std::to_string(p) + " is not a prime");
  }
  for (int s : o.alphabets)
    if (s < 2) throw OptionError("alphabets", "S must be at least 2");
  for (int k : o.ks)
    if (k < 1) throw OptionError("ks", "k must be at least 1");
  if (!(o.eps > 0 && o.eps < 1)) throw OptionError("eps", "must be in (0, 1)");
  if (!(o.kgram_eps > 0 && o.kgram_eps < 1)) throw OptionError("kgram_eps", "must be in (0, 1)");
  if (!(o.accuracy > 0 && o.accuracy < 1)) throw OptionError("accuracy", "must be in (0, 1)");
  if (o.seeds < 1) throw OptionError("seeds", "must be at least 1");
  if (o.kgram_seeds < 1) throw OptionError("kgram_seeds", "must be at least 1");
  if (o.x_length < 10) throw OptionError("x_length", "must be at least 10");
  if (!SimulatorHas(o.kgram_method, &SimulatorTraits::block_rate))
    throw OptionError("kgram_method",
                      "must be " + JoinNames(SimulatorNamesWith(&SimulatorTraits::block_rate)));
  // Names the bad option before any work (S, k within MakeKGram's limits).
  for (int s : o.alphabets) ValidateKGramOptions({.alphabet = s, .k = o.kgram_fixed_k});
  for (int k : o.ks) ValidateKGramOptions({.alphabet = o.kgram_fixed_alphabet, .k = k});
}

}  // namespace

Sample KGramNeededSample(const Transformer& f, const Source& x, double eps,
                         const std::string& method, int seeds, std::uint64_t seed,
                         std::uint64_t* needed, bool* reached) {
  bool met = false;
  const std::uint64_t n = SeededNeededLength(f, x, eps, method, seeds, seed, &met);
  if (needed) *needed = n;
  if (reached) *reached = met;
  return {static_cast<double>(n), Censor(f, x.length(), n, met)};
}

ExperimentResult RunExperiment(const ExperimentOptions& options) {
  Validate(options);
  const ExperimentOptions& o = options;
  ExperimentResult r;
  r.options = o;
  // Every row is a pure function of the options: computed in parallel, stored by index, so
  // the result does not depend on the thread count (docs/design.md §4).
  std::vector<std::function<ExperimentRow()>> jobs;
  for (int i = 0; i < static_cast<int>(o.omegas.size()); ++i)
    jobs.push_back([&o, i, w = o.omegas[i]] {
      return OneLayerRow(o, MakeSimpleTask(w, o.accuracy), "simple-task", "omega", w, i);
    });
  for (int i = 0; i < static_cast<int>(o.primes.size()); ++i)
    jobs.push_back([&o, i, p = o.primes[i]] {
      return OneLayerRow(o, MakeModPTask(p, 1 % p), "modp-task", "p", p, i);
    });
  for (int i = 0; i < static_cast<int>(o.alphabets.size()); ++i)
    jobs.push_back(
        [&o, i, s = o.alphabets[i]] { return KGramRow(o, s, o.kgram_fixed_k, "S", s, i); });
  for (int i = 0; i < static_cast<int>(o.ks.size()); ++i)
    jobs.push_back(
        [&o, i, k = o.ks[i]] { return KGramRow(o, o.kgram_fixed_alphabet, k, "k", k, i); });
  if (!o.out_dir.empty()) {
    std::error_code error;
    const std::tuple<const char*, const char*, bool> dirs[] = {
        {"simple-task", "omega", !o.omegas.empty()},
        {"modp-task", "p", !o.primes.empty()},
        {"kgram", "S", !o.alphabets.empty()},
        {"kgram", "k", !o.ks.empty()}};
    for (const auto& [task, parameter, used] : dirs)
      if (used && !error) std::filesystem::create_directories(SeriesDir(o, task, parameter), error);
    if (error) throw OptionError("out_dir", error.message(), o.out_dir);
  }
  r.rows.resize(jobs.size());
  const int threads = o.threads > 0 ? o.threads : oneapi::tbb::this_task_arena::max_concurrency();
  oneapi::tbb::task_arena arena(threads);
  std::atomic<std::uint64_t> finished{0};
  arena.execute([&] {
    oneapi::tbb::parallel_for(std::size_t{0}, jobs.size(), [&](std::size_t i) {
      r.rows[i] = jobs[i]();
      if (o.progress) o.progress(++finished, jobs.size());
    });
  });
  for (ExperimentRow& row : r.rows) Summarise(row);
  const std::pair<const char*, const char*> series[] = {
      {"simple-task", "omega"}, {"modp-task", "p"}, {"kgram", "S"}, {"kgram", "k"}};
  for (const auto& [task, parameter] : series) {
    ExperimentTrend t = MakeTrend(r.rows, task, parameter, o.seed);
    if (!t.values.empty()) r.trends.push_back(std::move(t));
  }
  return r;
}

io::Json ExperimentOptionsToJson(const ExperimentOptions& o) {
  return io::Json{{"omegas", o.omegas},
                  {"primes", o.primes},
                  {"alphabets", o.alphabets},
                  {"ks", o.ks},
                  {"kgram_fixed_k", o.kgram_fixed_k},
                  {"kgram_fixed_alphabet", o.kgram_fixed_alphabet},
                  {"eps", o.eps},
                  {"kgram_eps", o.kgram_eps},
                  {"accuracy", o.accuracy},
                  {"seeds", o.seeds},
                  {"kgram_seeds", o.kgram_seeds},
                  {"x_length", o.x_length},
                  {"fixed_n", o.fixed_n},
                  {"input", InputKindName(o.input)},
                  {"kgram_method", o.kgram_method}};
}

}  // namespace ltsim
