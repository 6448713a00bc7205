// `ltsim fuzz` (a campaign over random pairs) and `ltsim replay` (re-check one witness).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "dist_options.h"
#include "ltsim/core/error.h"
#include "ltsim/eval/precise.h"
#include "ltsim/fuzz/campaign.h"
#include "ltsim/fuzz/witness.h"
#include "output.h"

namespace ltsim::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnSignal(int) { g_stop.store(true); }

struct FuzzArgs {
  CampaignOptions options;
  std::string resume;
  std::vector<std::string> modes, pairs, inputs;
  DistArgs dist;
};

// A resumed campaign's options from DIR/campaign.json, read by rank 0 and broadcast, so the
// other ranks need not see DIR (an empty text tells them rank 0 failed; it reports why).
CampaignOptions ResumedOptions(const std::string& dir) {
  std::string text;
  CampaignOptions saved;
  if (dist::Rank() == 0) {
    try {
      saved = ReadCampaignOptions(dir);
      text = CampaignOptionsToJson(saved).dump();
    } catch (const InputError&) {
      dist::Broadcast(text);
      throw;
    }
  }
  dist::Broadcast(text);
  if (dist::Rank() != 0) {
    if (text.empty()) throw InputError(dir + ": rank 0 could not read the campaign");
    saved = CampaignOptionsFromJson(nlohmann::json::parse(text), dir + "/campaign.json");
    saved.out = dir;
  }
  return saved;
}

// Progress on stderr: a redrawn bar on a terminal, a plain line every 5 s otherwise.
ProgressFn MakeProgress() {
  const ProgressPrinter print = MakeProgressPrinter("fuzz", "cases");
  return [print](std::uint64_t done, std::uint64_t total, std::uint64_t refutations,
                 double seconds) {
    const double rate = seconds > 0 ? done / seconds : 0.0;
    print(done, total, fmt::format("{:.1f} cases/s, {} refutations", rate, refutations), seconds);
  };
}

void PrintSummary(const CampaignReport& report, const std::string& dir) {
  const CampaignSummary& s = report.summary;
  std::cout << fmt::format(
      "\n{} cases{}; {} of them could not run their method (see error in "
      "cases.jsonl)\n\n",
      s.cases, report.interrupted ? " (interrupted: continue with --resume " + dir + ")" : "",
      s.cases_with_input_errors);
  std::cout << fmt::format("  {:<16} {:>8} {:>12} {:>12} {:>14} {:>10}  {}\n", "property", "cases",
                           "refutations", "unconfirmed", "worst ratio", "at case", "kind");
  for (const PropertySummary& p : s.properties) {
    const std::string worst = !p.worst_ratio                 ? std::string("-")
                              : std::isinf(*p.worst_ratio) ? std::string("∞")
                                                           : Show(*p.worst_ratio);
    std::cout << fmt::format(
        "  {:<16} {:>8} {:>12} {:>12} {:>14} {:>10}  {}\n", PropertyName(p.property), p.cases,
        p.refutations, p.unconfirmed, worst,
        p.worst_case ? std::to_string(*p.worst_case) : std::string("-"),
        IsTheoremProperty(p.property) ? "theorem" : "sanity check (triangle inequality)");
  }
  std::cout << fmt::format(
      "\nratio = observed/bound (≤ 1 holds) in double precision; every refutation is re-computed "
      "in {1} digits first, and one that then holds is counted as unconfirmed (a rounding "
      "artefact), not as a refutation. Files: {0}/cases.jsonl, {0}/summary.json, "
      "{0}/witnesses/\n",
      dir, kPreciseDigits);
}

int RunFuzz(FuzzArgs& args) {
  CampaignOptions o = args.options;
  const bool resume = !args.resume.empty();
  CommandDealer dealer(args.dist);
  if (dealer.sharded() && (resume || o.time_budget > 0))
    throw InputError("--shard: a shard runs its whole share (no --resume, no --time-budget)");
  if (resume) {
    const CampaignOptions saved = ResumedOptions(args.resume);
    o = saved;
    o.threads = args.options.threads;
    o.time_budget = args.options.time_budget;
  } else {
    if (o.out.empty()) throw InputError("--out: required (or --resume DIR)");
    // One name table per enum (io/names.h): an unknown name lists the known ones.
    const auto parse = [](const char* flag, const std::vector<std::string>& names, auto& out,
                          const auto& table) {
      if (names.empty()) return;
      out.clear();
      try {
        for (const std::string& name : names) out.push_back(table.Parse(name));
      } catch (const InputError& error) {
        throw InputError(std::string(flag) + ": " + error.what());
      }
    };
    parse("--modes", args.modes, o.modes, kAttentionNames);
    parse("--pairs", args.pairs, o.pairs, kPairKindNames);
    parse("--inputs", args.inputs, o.inputs, kInputKindNames);
  }
  // The options check themselves (campaign.h) before anything prints; the command line only
  // names its flags. On --resume the file's options were checked when read, so only
  // --threads and --time-budget can fail here.
  try {
    ValidateCampaignOptions(o);
  } catch (const OptionError& e) {
    throw InputError((e.option() == "epsilon" ? std::string("--eps") : FlagForOption(e.option())) +
                     ": " + e.rule());
  }
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  // mpirun forwards SIGUSR1 to every rank at once (SIGTERM only after a delay).
  std::signal(SIGUSR1, OnSignal);
  // The header only once the directory has been read back: bad input prints one line only.
  const auto header = [&](std::uint64_t) {
    std::cout << fmt::format("ltsim fuzz: seed {}, {} cases, {} threads{}, out {}{}\n", o.seed,
                             o.cases, o.threads > 0 ? std::to_string(o.threads) : "all",
                             dist::Size() > 1 ? fmt::format(" on each of {} ranks", dist::Size())
                             : dealer.sharded() ? " (shard " + args.dist.shard + ")"
                                                : "",
                             o.out, resume ? " (resumed)" : "")
              << std::flush;
  };
  const CampaignReport report =
      RunCampaign(o, resume, g_stop, MakeProgress(), dealer.get(), header);
  if (!dealer.Reduces()) {  // an MPI worker or a shard
    dealer.FinishShard();
    return report.interrupted ? 130 : 0;
  }
  PrintSummary(report, o.out);
  const std::uint64_t refutations = report.summary.AllRefutations();
  // 1: a property was refuted; 130: stopped by a signal (resume with --resume); else 0.
  return refutations > 0 ? 1 : g_stop.load() ? 130 : 0;
}

int RunReplay(const std::string& path) {
  const Witness w = ReadWitness(path);
  CaseResult result;
  const bool again = Reproduces(w, result);
  const Outcome& o = result.outcome(w.property);
  std::cout << fmt::format(
      "{}: property {} on case {}: recorded ratio {}, now observed {} vs bound {} (ratio {}): "
      "{}\n",
      path, PropertyName(w.property), w.spec.index, Show(w.recorded_ratio), Show(o.observed),
      Show(o.bound), Show(o.ratio), again ? "still refuted" : "no longer refuted");
  const Recheck& r = o.recheck;
  if (r.status == RecheckStatus::kNone) {
    std::cout << "  recheck: none (the double check holds)\n";
  } else if (r.status == RecheckStatus::kSkipped) {
    std::cout << fmt::format("  recheck: skipped ({})\n", r.reason);
  } else {
    std::cout << fmt::format("  recheck in {} digits: {}, observed {} vs bound {}{}\n",
                             kPreciseDigits, RecheckStatusName(r.status), r.observed, r.bound,
                             r.reason.empty() ? "" : " (" + r.reason + ")");
  }
  if (!w.recorded_recheck.empty())
    std::cout << fmt::format("  recorded recheck: {}\n", w.recorded_recheck);
  return again ? 1 : 0;
}

}  // namespace

void AddFuzzCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<FuzzArgs>();
  CampaignOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "fuzz", "Property-test random model pairs on random inputs, in parallel and reproducibly.");
  cmd->add_option("--seed", o.seed, "master seed (printed; every case derives from it)")
      ->default_val(1);
  cmd->add_option("--cases", o.cases, "number of cases")->default_val(100);
  cmd->add_option("--time-budget", o.time_budget, "seconds; stop between batches after it")
      ->default_val(0);
  cmd->add_option("--threads", o.threads, "threads (0 = every core); results do not depend on it")
      ->default_val(0)
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--out", o.out, "output directory");
  cmd->add_option("--resume", args->resume, "continue the campaign in this directory");
  cmd->add_option("--layers", o.layers, "model depths to draw (1, 2)")->delimiter(',');
  cmd->add_option("--modes", args->modes, "attention modes: softmax,hardmax,finite")
      ->delimiter(',');
  cmd->add_option("--pairs", args->pairs, "pair kinds: independent,perturbed,mode-swap,pruned-head")
      ->delimiter(',');
  cmd->add_option("--inputs", args->inputs,
                  "inputs: uniform,dirichlet,sparse,markov,periodic,stress")
      ->delimiter(',');
  cmd->add_option("--methods", o.methods, "simulators to draw")->delimiter(',');
  cmd->add_option("--min-length", o.min_length, "shortest x")->default_val(o.min_length);
  cmd->add_option("--max-length", o.max_length, "longest x")->default_val(o.max_length);
  cmd->add_option("--min-target", o.min_target, "smallest n")->default_val(o.min_target);
  cmd->add_option("--max-target", o.max_target, "largest n")->default_val(o.max_target);
  cmd->add_option("--eps", o.epsilon, "ε of the transfer property")->default_val(o.epsilon);
  cmd->add_option("--lemma-constant", o.lemma_constant, "C of the Lemma 5.3 check")
      ->default_val(o.lemma_constant);
  cmd->add_option("--delta", o.delta, "δ of perturbed pairs")->default_val(o.delta);
  AddDistOptions(cmd, args->dist);
  cmd->callback([args, &exit_code] { exit_code = RunFuzz(*args); });

  auto path = std::make_shared<std::string>();
  CLI::App* replay = app.add_subcommand(
      "replay", "Re-check a witness file: exit 1 if it still refutes its property, 0 if not.");
  replay->add_option("FILE", *path, "a .witness.json file")->required();
  replay->callback([path, &exit_code] { exit_code = RunReplay(*path); });
}

}  // namespace ltsim::cli
