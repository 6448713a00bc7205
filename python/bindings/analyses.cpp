// The long computations in Python: threshold, certify, profile, simulate, sandwich and a fuzz
// campaign over a user's pair, each without the GIL, with progress and Ctrl-C (docs/python.md).
#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>

#include "common.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/fuzz/campaign.h"
#include "ltsim/fuzz/case_runner.h"
#include "ltsim/gen/input_generator.h"
#include "ltsim/sim/simulator.h"
#include "ltsim/threshold/certify.h"
#include "ltsim/threshold/profile.h"
#include "ltsim/threshold/threshold.h"

namespace ltsim::python {
namespace {

// Arrays handed to Python at most this long (z, witnesses); longer strings stay as runs.
constexpr std::uint64_t kMaxArrayTokens = std::uint64_t{1} << 31;

py::dict ThresholdDict(const ThresholdResult& r) {
  py::dict d;
  const bool found = r.first_disagreement.has_value();
  d["method"] = ThresholdMethodName(r.method);
  d["view"] = py::dict(py::arg("alphabet") = r.view.alphabet, py::arg("period") = r.view.period,
                       py::arg("locality") = r.view.locality);
  d["first_disagreement"] = found ? py::object(py::int_(*r.first_disagreement)) : py::none();
  d["gap"] = found ? py::object(py::float_(r.gap)) : py::none();
  d["witness_runs"] = found ? py::object(RunsToNumpy(r.witness)) : py::none();
  d["witness"] = found ? py::object(RunsToTokens(r.witness, kMaxArrayTokens)) : py::none();
  d["f_witness"] = found ? py::object(VectorToNumpy(r.f_witness)) : py::none();
  d["g_witness"] = found ? py::object(VectorToNumpy(r.g_witness)) : py::none();
  d["checked_up_to"] = r.checked_up_to;
  d["exhaustive"] = r.exhaustive;
  d["exhaustive_up_to"] = r.exhaustive_up_to;
  d["samples_per_length"] = r.samples_per_length;
  d["evaluations"] = r.evaluations;
  d["recheck"] =
      found ? py::object(py::dict(py::arg("status") = kRecheckClaimNames.Name(r.recheck.status),
                                  py::arg("precise_gap") = r.recheck.precise_gap,
                                  py::arg("note") = r.recheck.note))
            : py::none();
  d["pruned"] = r.pruned;
  d["search_period"] = r.search_period > 0 ? r.search_period : r.view.period;
  d["statistics_total"] = r.statistics_total;
  d["statistics_evaluated"] = r.statistics_evaluated;
  d["statistics_pruned"] = r.statistics_pruned;
  d["cells"] = r.cells;
  d["cells_pruned"] = r.cells_pruned;
  d["max_pruned_bound"] = r.pruned ? py::object(py::float_(r.max_pruned_bound)) : py::none();
  d["complete"] = r.complete;
  d["threads"] = r.threads;
  py::array_t<double> gaps(static_cast<py::ssize_t>(r.max_gap_per_length.size()));
  auto g = gaps.mutable_unchecked<1>();
  for (std::size_t k = 0; k < r.max_gap_per_length.size(); ++k)
    g(static_cast<py::ssize_t>(k)) = r.max_gap_per_length[k];
  d["max_gap_per_length"] = gaps;
  return d;
}

py::dict SimulationDict(const Simulation& s) {
  py::dict d;
  d["runs"] = RunsToNumpy(s.z);
  d["z"] = RunsToTokens(s.z, kMaxArrayTokens);
  d["length"] = s.length;
  d["eta"] = s.eta;
  d["theta"] = s.theta;
  d["detail"] = s.detail;
  return d;
}

py::dict SideDict(const ModelSide& side) {
  py::dict d;
  d["on_x"] = VectorToNumpy(side.on_x);
  d["on_z"] = VectorToNumpy(side.on_z);
  d["sim"] = side.sim;
  d["lipschitz"] = side.lipschitz;
  d["logit_margin"] = side.logit_margin;
  d["log2_hardmax_length"] = side.log2_hardmax_length;
  d["eta_achieved"] = side.eta_achieved;
  return d;
}

py::dict SandwichDict(const SandwichResult& r) {
  py::dict d;
  d["f"] = SideDict(r.f);
  d["g"] = SideDict(r.g);
  d["gap_z"] = r.gap_z;
  d["gap_x"] = r.gap_x;
  d["x_length"] = r.x_length;
  d["z_length"] = r.z_length;
  d["method"] = r.method;
  d["simulation"] = SimulationDict(r.simulation);
  d["holds"] = r.holds;
  d["rate_holds"] = r.rate_holds;
  return d;
}

SandwichOptions MethodOptions(const std::string& method, std::uint64_t z_length, std::uint64_t seed,
                              std::uint64_t block_length) {
  SandwichOptions options;
  options.method = method;
  options.length = z_length;
  options.seed = seed;
  options.block_length = block_length;
  if (z_length < 1) throw OptionError("length", "must be at least 1", std::to_string(z_length));
  return options;
}

py::dict Threshold(const ModelPtr& f, const ModelPtr& g, double eps, std::uint64_t max_length,
                   std::uint64_t seed, std::uint64_t samples, bool prune, int threads,
                   std::uint64_t max_evaluations, py::object progress) {
  if (threads < 0 || threads > kMaxCampaignThreads)
    throw OptionError("threads", "must be in [0, 1024] (0: every core)", std::to_string(threads));
  ProgressHook hook(std::move(progress));
  ThresholdOptions options;
  options.epsilon = eps;
  options.max_length = max_length;
  options.seed = seed;
  options.samples_per_length = samples;
  options.prune = prune;
  options.threads = threads;
  options.max_evaluations = max_evaluations;
  options.progress = [&hook](std::uint64_t done, std::uint64_t total, std::uint64_t, double) {
    hook.Report(done, total);
  };
  const ThresholdResult result =
      RunWithoutGil(hook, [&] { return FindThreshold(*f, *g, options); });
  return ThresholdDict(result);
}

py::dict CertifyDict(const CertifyResult& r) {
  py::dict d;
  d["verdict"] = CertifyVerdictName(r.verdict);
  d["view"] = py::dict(py::arg("alphabet") = r.view.alphabet, py::arg("period") = r.view.period,
                       py::arg("locality") = r.view.locality);
  const auto optional = [](const std::optional<std::uint64_t>& v) {
    return v ? py::object(py::int_(*v)) : py::object(py::none());
  };
  d["first_disagreement"] = optional(r.first_disagreement);
  d["first_disagreement_at_most"] = optional(r.first_disagreement_at_most);
  const bool witness = !r.witness.empty();
  d["witness"] = witness ? py::object(RunsToTokens(r.witness, kMaxArrayTokens)) : py::none();
  d["witness_runs"] = witness ? py::object(RunsToNumpy(r.witness)) : py::none();
  d["witness_gap"] = witness ? py::object(py::float_(r.witness_gap)) : py::none();
  d["sup_gap_lower"] = r.sup_gap_lower;
  d["sup_gap_upper"] = r.sup_gap_upper;
  d["exact_up_to"] = r.exact_up_to;
  d["exact_bound"] = r.exact_bound;
  d["limit_bound"] = r.limit_bound;
  d["tolerance"] = r.tolerance;
  d["reason"] = r.reason.empty() ? py::object(py::none()) : py::object(py::str(r.reason));
  d["boxes"] = r.boxes;
  d["threshold_runs"] = r.threshold_runs;
  d["threshold_evaluations"] = r.threshold_evaluations;
  return d;
}

py::dict Certify(const ModelPtr& f, const ModelPtr& g, double eps, std::uint64_t seed, int threads,
                 std::uint64_t initial_length, std::uint64_t max_exact_length, double tolerance,
                 std::uint64_t max_boxes, py::object progress) {
  if (threads < 0 || threads > kMaxCampaignThreads)
    throw OptionError("threads", "must be in [0, 1024] (0: every core)", std::to_string(threads));
  CheckPair(*f, *g);
  ProgressHook hook(std::move(progress));
  CertifyOptions options;
  options.epsilon = eps;
  options.seed = seed;
  options.threads = threads;
  options.initial_length = initial_length;
  options.max_exact_length = max_exact_length;
  options.tolerance = tolerance;
  options.max_boxes = max_boxes;
  // Boxes bounded so far; the total is not known in advance.
  options.progress = [&hook](std::uint64_t boxes, const std::string&) { hook.Report(boxes, 0); };
  const CertifyResult result =
      RunWithoutGil(hook, [&] { return ::ltsim::Certify(*f, *g, options); });
  return CertifyDict(result);
}

py::dict ProfileDict(const ProfileResult& r) {
  py::dict d;
  const auto n = static_cast<py::ssize_t>(r.points.size());
  py::array_t<std::uint64_t> lengths(n);
  py::array_t<double> lower(n), upper(n);
  auto L = lengths.mutable_unchecked<1>();
  auto lo = lower.mutable_unchecked<1>();
  auto hi = upper.mutable_unchecked<1>();
  py::list witnesses;
  for (py::ssize_t i = 0; i < n; ++i) {
    const ProfilePoint& p = r.points[static_cast<std::size_t>(i)];
    L(i) = p.length;
    lo(i) = p.lower;
    hi(i) = p.upper;
    witnesses.append(p.witness.empty() ? py::object(py::none())
                                       : py::object(RunsToNumpy(p.witness)));
  }
  d["view"] = py::dict(py::arg("alphabet") = r.view.alphabet, py::arg("period") = r.view.period,
                       py::arg("locality") = r.view.locality);
  d["lengths"] = lengths;
  d["gap_lower"] = lower;
  d["gap_upper"] = upper;
  d["witness_runs"] = witnesses;
  d["train_gap_lower"] = r.train_lower;
  d["train_gap_upper"] = r.train_upper;
  d["sup_gap_lower"] = r.sup_lower;
  d["sup_gap_upper"] = r.sup_upper;
  const bool witness = !r.sup_witness.empty();
  d["sup_witness_runs"] = witness ? py::object(RunsToNumpy(r.sup_witness)) : py::none();
  d["sup_witness_length"] = r.sup_witness_length;
  d["sup_status"] = r.sup_status;
  d["certify_runs"] = r.certify_runs;
  d["ratio_lower"] = r.ratio_lower;
  d["ratio_upper"] = r.ratio_upper;
  return d;
}

py::dict Profile(const ModelPtr& f, const ModelPtr& g, std::uint64_t train_length,
                 std::uint64_t max_length, int points, double tolerance, int max_certify_runs,
                 std::uint64_t max_boxes, std::uint64_t certify_evaluations, std::uint64_t seed,
                 int threads, py::object progress) {
  if (threads < 0 || threads > kMaxCampaignThreads)
    throw OptionError("threads", "must be in [0, 1024] (0: every core)", std::to_string(threads));
  CheckPair(*f, *g);
  ProgressHook hook(std::move(progress));
  ProfileOptions options;
  options.train_length = train_length;
  options.max_length = max_length;
  options.points = points;
  options.tolerance = tolerance;
  options.max_certify_runs = max_certify_runs;
  options.max_boxes = max_boxes;
  options.certify_evaluations = certify_evaluations;
  options.seed = seed;
  options.threads = threads;
  options.progress = [&hook](std::uint64_t done, std::uint64_t total, const std::string&) {
    hook.Report(done, total);
  };
  const ProfileResult result = RunWithoutGil(hook, [&] { return ComputeProfile(*f, *g, options); });
  return ProfileDict(result);
}

py::dict Simulate(const std::vector<ModelPtr>& models, const py::object& x,
                  const std::string& method, std::uint64_t z_length, std::uint64_t seed,
                  std::uint64_t block_length, py::object progress) {
  if (models.empty() || models.size() > 2)
    throw OptionError("models", "give one or two models", std::to_string(models.size()));
  ProgressHook hook(std::move(progress));
  const SandwichOptions options = MethodOptions(method, z_length, seed, block_length);
  std::unique_ptr<Source> source = WithHook(SourceFromPython(x, "x"), hook);
  std::vector<const Transformer*> pointers;
  for (const ModelPtr& model : models) pointers.push_back(model.get());
  const Simulation s =
      RunWithoutGil(hook, [&] { return RunSimulation(pointers, *source, options); });
  return SimulationDict(s);
}

py::dict Sandwich(const ModelPtr& f, const ModelPtr& g, const py::object& x,
                  const std::string& method, std::uint64_t z_length, std::uint64_t seed,
                  std::uint64_t block_length, py::object progress) {
  ProgressHook hook(std::move(progress));
  const SandwichOptions options = MethodOptions(method, z_length, seed, block_length);
  std::unique_ptr<Source> source = WithHook(SourceFromPython(x, "x"), hook);
  const SandwichResult r =
      RunWithoutGil(hook, [&] { return RunSandwich(*f, *g, *source, options); });
  return SandwichDict(r);
}

// ---- fuzz over a user's pair ----

py::dict CaseDict(const CaseSpec& c, const CaseResult& r) {
  py::dict d;
  d["index"] = c.index;
  d["input"] =
      py::dict(py::arg("kind") = InputKindName(c.input.kind), py::arg("length") = c.input.length,
               py::arg("seed") = c.input.seed, py::arg("alpha") = c.input.alpha,
               py::arg("parents") = c.input.parents, py::arg("pattern") = c.input.pattern);
  d["method"] = c.method;
  d["target_length"] = c.target_length;
  d["error"] = r.error.empty() ? py::object(py::none()) : py::object(py::str(r.error));
  d["sim_f"] = r.sandwich.f.sim;
  d["sim_g"] = r.sandwich.g.sim;
  d["gap_z"] = r.sandwich.gap_z;
  d["gap_x"] = r.sandwich.gap_x;
  d["z_length"] = r.sandwich.z_length;
  d["eta"] = r.sandwich.simulation.eta;
  d["statistic"] = r.statistic;
  py::dict outcomes;
  for (int p = 0; p < kPropertyCount; ++p) {
    const Outcome& o = r.outcomes[p];
    if (!o.checked) continue;
    outcomes[PropertyName(static_cast<Property>(p))] = py::dict(
        py::arg("holds") = o.holds, py::arg("observed") = o.observed, py::arg("bound") = o.bound,
        py::arg("ratio") = o.ratio, py::arg("recheck") = kRecheckClaimNames.Name(o.recheck.status));
  }
  d["properties"] = outcomes;
  return d;
}

py::list FuzzPair(const ModelPtr& f, const ModelPtr& g, std::uint64_t cases, std::uint64_t seed,
                  const std::vector<std::string>& inputs, const std::vector<std::string>& methods,
                  std::uint64_t min_length, std::uint64_t max_length, std::uint64_t min_target,
                  std::uint64_t max_target, double epsilon, int threads, py::object progress) {
  CheckPair(*f, *g);
  // A campaign over the user's pair (fuzz/campaign.h): the same cases as `ltsim fuzz --pair`.
  CampaignOptions o;
  o.seed = seed;
  o.cases = cases;
  o.inputs.clear();
  o.methods.clear();
  auto user = std::make_shared<UserPair>();
  user->f = *f;
  user->g = *g;
  user->f_file = "f";
  user->g_file = "g";
  o.pair = std::move(user);
  for (const std::string& name : inputs) o.inputs.push_back(ParseInputKind(name));
  for (const std::string& name : methods) MakeSimulator(name);  // InputError if unknown
  o.methods = methods;
  const bool one_layer = f->layers.size() == 1 && g->layers.size() == 1;
  if (!one_layer)
    for (const std::string& name : methods)
      if (SimulatorHas(name, &SimulatorTraits::one_layer_only))
        throw OptionError("methods", name + " needs one-layer models", name);
  if (cases < 1 || cases > 1'000'000)
    throw OptionError("cases", "must be in [1, 10^6]", std::to_string(cases));
  if (o.inputs.empty()) throw OptionError("inputs", "give at least one input family");
  if (o.methods.empty()) throw OptionError("methods", "give at least one method");
  if (min_length < 1 || min_length > max_length || max_length > 10'000'000)
    throw OptionError("lengths", "need 1 ≤ min ≤ max ≤ 10^7",
                      fmt::format("[{}, {}]", min_length, max_length));
  if (min_target < 1 || min_target > max_target || max_target > 10'000'000)
    throw OptionError("z_lengths", "need 1 ≤ min ≤ max ≤ 10^7",
                      fmt::format("[{}, {}]", min_target, max_target));
  if (!(epsilon > 0 && std::isfinite(epsilon)))
    throw OptionError("eps", "must be finite and positive", fmt::format("{}", epsilon));
  if (threads < 0 || threads > kMaxCampaignThreads)
    throw OptionError("threads", "must be in [0, 1024] (0: every core)", std::to_string(threads));
  o.min_length = min_length;
  o.max_length = max_length;
  o.min_target = min_target;
  o.max_target = max_target;
  o.epsilon = epsilon;
  o.threads = threads;
  ProgressHook hook(std::move(progress));
  std::vector<CaseSpec> specs(cases);
  std::vector<CaseResult> results(cases);
  RunWithoutGil(hook, [&] {
    oneapi::tbb::task_arena arena(threads > 0 ? threads
                                              : oneapi::tbb::this_task_arena::max_concurrency());
    // Batches of 16 cases, progress (and Ctrl-C) between batches.
    for (std::uint64_t begin = 0; begin < cases; begin += 16) {
      const std::uint64_t end = std::min(cases, begin + 16);
      arena.execute([&] {
        oneapi::tbb::parallel_for(begin, end, [&](std::uint64_t i) {
          specs[i] = DrawCase(o, i);
          results[i] = RunCase(specs[i]);
        });
      });
      hook.Report(end, cases);
    }
    return 0;
  });
  py::list out;
  for (std::uint64_t i = 0; i < cases; ++i) out.append(CaseDict(specs[i], results[i]));
  return out;
}

}  // namespace

void BindAnalyses(py::module_& m) {
  m.def("threshold", &Threshold, py::arg("f"), py::arg("g"), py::arg("eps"), py::arg("max_length"),
        py::arg("seed"), py::arg("samples_per_length"), py::arg("prune"), py::arg("threads"),
        py::arg("max_evaluations"), py::arg("progress"));
  m.def("certify", &Certify, py::arg("f"), py::arg("g"), py::arg("eps"), py::arg("seed"),
        py::arg("threads"), py::arg("initial_length"), py::arg("max_exact_length"),
        py::arg("tolerance"), py::arg("max_boxes"), py::arg("progress"));
  m.def("profile", &Profile, py::arg("f"), py::arg("g"), py::arg("train_length"),
        py::arg("max_length"), py::arg("points"), py::arg("tolerance"), py::arg("max_certify_runs"),
        py::arg("max_boxes"), py::arg("certify_evaluations"), py::arg("seed"), py::arg("threads"),
        py::arg("progress"));
  m.def("simulate", &Simulate, py::arg("models"), py::arg("x"), py::arg("method"),
        py::arg("z_length"), py::arg("seed"), py::arg("block_length"), py::arg("progress"));
  m.def("sandwich", &Sandwich, py::arg("f"), py::arg("g"), py::arg("x"), py::arg("method"),
        py::arg("z_length"), py::arg("seed"), py::arg("block_length"), py::arg("progress"));
  m.def("fuzz_pair", &FuzzPair, py::arg("f"), py::arg("g"), py::arg("cases"), py::arg("seed"),
        py::arg("inputs"), py::arg("methods"), py::arg("min_length"), py::arg("max_length"),
        py::arg("min_target"), py::arg("max_target"), py::arg("eps"), py::arg("threads"),
        py::arg("progress"));
  m.def("simulator_names", &SimulatorNames);
  m.def("input_kinds", [] {
    std::vector<std::string> names;
    for (const auto& entry : kInputKindNames.entries) names.push_back(entry.name);
    return names;
  });
  m.def("properties", [] {
    std::vector<std::string> names;
    for (int p = 0; p < kPropertyCount; ++p)
      names.push_back(PropertyName(static_cast<Property>(p)));
    return names;
  });
}

}  // namespace ltsim::python
