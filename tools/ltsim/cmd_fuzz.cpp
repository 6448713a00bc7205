// `ltsim fuzz`: a campaign over random pairs, or one of its cases alone (`--case N`).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "commands.h"
#include "common_options.h"
#include "dist_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/core/suggest.h"
#include "ltsim/eval/precise.h"
#include "ltsim/fuzz/campaign.h"
#include "ltsim/fuzz/witness.h"
#include "ltsim/model/model_file.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnSignal(int) { g_stop.store(true); }

struct FuzzArgs {
  CampaignOptions options;
  std::string resume;
  std::vector<std::string> modes, pairs, inputs;
  std::vector<std::string> user_pair;  // --pair F G
  const CLI::Option* layers_flag = nullptr;
  DistArgs dist;
  std::uint64_t case_index = 0;
  const CLI::Option* case_flag = nullptr;  // given: run case_index alone
  bool json = false;
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

// Witnesses printed after a refutation (the rest are listed in DIR/witnesses/).
constexpr std::size_t kWitnessesShown = 20;

// After a refutation: each witness, the command that replays it and the one that re-runs its
// case alone (read from DIR/cases.jsonl, the campaign's record).
void PrintWitnesses(const std::string& dir) {
  std::ifstream in(dir + "/cases.jsonl");
  std::size_t shown = 0, total = 0;
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.contains("witnesses")) continue;
    for (const auto& name : j["witnesses"]) {
      if (++total > kWitnessesShown) continue;
      if (shown++ == 0) std::cout << "\nwitnesses (replay one: exit 0 = still refuted):\n";
      const std::string path = dir + "/witnesses/" + name.get<std::string>();
      std::cout << fmt::format("  {}\n    ltsim replay {}\n    ltsim fuzz --resume {} --case {}\n",
                               path, path, dir, j["case"].get<std::uint64_t>());
    }
  }
  if (total > shown)
    std::cout << fmt::format("  … and {} more in {}/witnesses/\n", total - shown, dir);
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
    const std::string worst = !p.worst_ratio               ? std::string("-")
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

// A --methods item: the simulator registry knows it (InputError naming --methods otherwise).
void CheckMethod(const std::string& name) {
  try {
    MakeSimulator(name);
  } catch (const InputError&) {
    throw InputError("--methods: unknown method '" + name + "'" +
                     DidYouMean(name, SimulatorNames()) + " (known: " +
                     [] {
                       std::string known;
                       for (const std::string& n : SimulatorNames())
                         known += (known.empty() ? "" : ", ") + n;
                       return known;
                     }() +
                     ")");
  }
}

Json OutcomeJson(const Outcome& o) {
  Json j = {{"holds", o.holds},
            {"observed", Number(o.observed)},
            {"bound", Number(o.bound)},
            {"ratio", Number(o.ratio)}};
  if (o.recheck.status != RecheckStatus::kNone) j["recheck"] = RecheckLabel(o.recheck);
  return j;
}

// `--case N`: the campaign's case N alone (DrawCase is a pure function of the options and N),
// nothing written. 1 when a property is refuted, as for the whole campaign.
int RunOneCase(const CampaignOptions& o, std::uint64_t index, bool json) {
  if (index >= o.cases)
    throw InputError(
        fmt::format("--case: {} is not a case of this campaign (0 … {})", index, o.cases - 1));
  const CaseSpec spec = DrawCase(o, index);
  const CaseResult result = RunCase(spec);
  bool refuted = false;
  Json props = Json::object();
  for (int p = 0; p < kPropertyCount; ++p) {
    const Outcome& out = result.outcomes[p];
    if (!out.checked) continue;
    refuted = refuted || !out.holds;
    props[PropertyName(static_cast<Property>(p))] = OutcomeJson(out);
  }
  if (json) {
    Json doc;
    doc["context"] = Context("fuzz", o.seed);
    doc["case"] = index;
    doc["method"] = spec.method;
    doc["n"] = spec.target_length;
    doc["x_length"] = result.sandwich.x_length;
    doc["z_length"] = result.sandwich.z_length;
    doc["error"] = result.error;
    doc["properties"] = props;
    doc["refuted"] = refuted;
    PrintJson(doc);
    return refuted ? 1 : 0;
  }
  std::cout << fmt::format(
      "ltsim fuzz: seed {}, case {} alone{}: method {}, |x| = {}, |z| = {} "
      "(target {}){}\n",
      o.seed, index,
      o.pair ? fmt::format(" of the pair {} {}", o.pair->f_file, o.pair->g_file) : std::string(),
      spec.method, result.sandwich.x_length, result.sandwich.z_length, spec.target_length,
      result.error.empty() ? "" : "; the method refused: " + result.error);
  for (const auto& [name, p] : props.items())
    std::cout << fmt::format(
        "  {:<16} {}  observed {} vs bound {} (ratio {}){}\n", name,
        p["holds"].get<bool>() ? "holds  " : "REFUTED",
        p["observed"].is_number() ? Show(p["observed"].get<double>()) : "∞",
        p["bound"].is_number() ? Show(p["bound"].get<double>()) : "∞",
        p["ratio"].is_number() ? Show(p["ratio"].get<double>()) : "∞",
        p.contains("recheck") ? ", recheck " + p["recheck"].get<std::string>() : "");
  return refuted ? 1 : 0;
}

int RunFuzz(FuzzArgs& args) {
  CampaignOptions o = args.options;
  const bool one_case = args.case_flag->count() > 0;
  const bool resume = !args.resume.empty() && !one_case;
  CommandDealer dealer(args.dist);
  if (dealer.sharded() && (resume || o.time_budget > 0 || one_case))
    throw InputError("--shard: a shard runs its whole share (no --resume, --time-budget, --case)");
  if (!args.resume.empty() && one_case) {
    o = ResumedOptions(args.resume);
  } else if (resume) {
    const CampaignOptions saved = ResumedOptions(args.resume);
    o = saved;
    o.threads = args.options.threads;
    o.time_budget = args.options.time_budget;
  } else {
    if (o.out.empty() && !one_case)
      throw InputError("--out-dir: required (or --resume DIR, or --case N)");
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
    if (!args.user_pair.empty()) {
      // A user's pair replaces the drawn pairs: the flags that shape those do not apply.
      if (args.layers_flag->count() > 0 || !args.modes.empty() || !args.pairs.empty())
        throw InputError(
            "--pair: the models are given, so --layers, --modes and --pairs do not apply");
      auto user = std::make_shared<UserPair>();
      user->f_file = args.user_pair[0];
      user->g_file = args.user_pair[1];
      user->f = ReadModel(user->f_file);
      user->g = ReadModel(user->g_file);
      o.pair = std::move(user);
    }
    parse("--modes", args.modes, o.modes, kAttentionNames);
    parse("--pairs", args.pairs, o.pairs, kPairKindNames);
    parse("--inputs", args.inputs, o.inputs, kInputKindNames);
    // A mistyped simulator gets a suggestion before the options' own check names it.
    for (const auto& m : o.methods) CheckMethod(m);
  }
  // The options check themselves (campaign.h) before anything prints; the command line only
  // names its flags (FlagForOption: epsilon is --eps, min_length --min-x-length). On --resume
  // the file's options were checked when read, so only --threads and --time-budget can fail.
  try {
    ValidateCampaignOptions(o);
  } catch (const OptionError& e) {
    throw InputError(FlagMessage(e));
  }
  if (one_case) return RunOneCase(o, args.case_index, args.json);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  // mpirun forwards SIGUSR1 to every rank at once (SIGTERM only after a delay).
  std::signal(SIGUSR1, OnSignal);
  // The header once the directory has been read back (bad input prints one line only), with
  // the progress display: a resumed campaign's rate counts only the cases this run does.
  std::unique_ptr<Progress> progress;
  const auto started = [&](std::uint64_t done_before) {
    if (!args.json)
      std::cout << fmt::format(
                       "ltsim fuzz: seed {}, {} cases{}, {}{}, out {}{}\n", o.seed, o.cases,
                       o.pair ? fmt::format(" of the pair {} {}", o.pair->f_file, o.pair->g_file)
                              : std::string(),
                       o.threads > 0 ? Plural(o.threads, "thread") : "all threads",
                       dist::Size() > 1   ? fmt::format(" on each of {} ranks", dist::Size())
                       : dealer.sharded() ? " (shard " + args.dist.shard + ")"
                                          : "",
                       o.out, resume ? " (resumed)" : "")
                << std::flush;
    if (dist::Rank() == 0)
      progress = std::make_unique<Progress>(
          "fuzz", "cases",
          Progress::Options{.quiet_seconds = 0, .always_final = true, .base = done_before});
  };
  const CampaignReport report = RunCampaign(
      o, resume, g_stop,
      [&progress](std::uint64_t done, std::uint64_t total, std::uint64_t refutations, double) {
        if (progress) progress->Update(done, total, Plural(refutations, "refutation"));
      },
      dealer.get(), started);
  if (progress) progress->Finish();
  if (!dealer.Reduces()) {  // an MPI worker or a shard
    dealer.FinishShard();
    return report.interrupted ? 130 : 0;
  }
  const std::uint64_t refutations = report.summary.AllRefutations();
  if (args.json) {
    PrintJson(Json(CampaignSummaryToJson(o, report.summary)));
  } else {
    PrintSummary(report, o.out);
    if (refutations > 0) PrintWitnesses(o.out);
  }
  // 1: a property was refuted; 130: stopped by a signal (resume with --resume); else 0.
  return refutations > 0 ? 1 : g_stop.load() ? 130 : 0;
}

}  // namespace

void AddFuzzCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<FuzzArgs>();
  CampaignOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "fuzz", "Property-test random model pairs on random inputs, in parallel and reproducibly.");
  AddSeed(cmd, o.seed, "the campaign (every case derives from it)");
  cmd->add_option("--cases", o.cases, "number of cases")->default_val(100);
  cmd->add_option("--time-budget", o.time_budget, "seconds; stop between batches after it")
      ->default_val(0);
  AddThreads(cmd, o.threads)->check(CLI::NonNegativeNumber);
  AddOutDir(cmd, o.out, "the campaign's directory (cases.jsonl, summary.json, witnesses/)");
  cmd->add_option("--resume", args->resume,
                  "continue the campaign in this directory (with --case: take its options)");
  args->case_flag =
      cmd->add_option("--case", args->case_index,
                      "re-run case N of the campaign alone (its options from the flags or from "
                      "--resume DIR); nothing is written");
  cmd->add_flag("--json", args->json, "print the summary (or the --case result) as JSON");
  cmd->add_option("--pair", args->user_pair,
                  "test this pair F G (model files) instead of drawing pairs: each case draws an "
                  "input family, a method and lengths; witnesses hold both models inline")
      ->expected(2);
  args->layers_flag =
      cmd->add_option("--layers", o.layers, "model depths to draw (1, 2)")->delimiter(',');
  cmd->add_option("--modes", args->modes, "attention modes: softmax,hardmax,finite")
      ->delimiter(',');
  cmd->add_option("--pairs", args->pairs, "pair kinds: independent,perturbed,mode-swap,pruned-head")
      ->delimiter(',');
  cmd->add_option("--inputs", args->inputs,
                  "inputs: uniform,dirichlet,sparse,markov,periodic,stress")
      ->delimiter(',');
  cmd->add_option("--methods", o.methods,
                  "simulators to draw (the list form of --method; test-drop-suffix is a planted "
                  "broken one)")
      ->delimiter(',');
  cmd->add_option("--min-x-length", o.min_length, "shortest x")->default_val(o.min_length);
  cmd->add_option("--max-x-length", o.max_length, "longest x")->default_val(o.max_length);
  cmd->add_option("--min-z-length", o.min_target, "smallest target length n of z")
      ->default_val(o.min_target);
  cmd->add_option("--max-z-length", o.max_target, "largest target length n of z")
      ->default_val(o.max_target);
  AddDeprecated(cmd, "--min-length", o.min_length, "--min-x-length");
  AddDeprecated(cmd, "--max-length", o.max_length, "--max-x-length",
                "in fuzz it meant the longest x, not a search limit");
  AddDeprecated(cmd, "--min-target", o.min_target, "--min-z-length");
  AddDeprecated(cmd, "--max-target", o.max_target, "--max-z-length");
  cmd->add_option("--eps", o.epsilon, "ε of the transfer property")->default_val(o.epsilon);
  cmd->add_option("--lemma-constant", o.lemma_constant, "C of the Lemma 5.3 check")
      ->default_val(o.lemma_constant);
  cmd->add_option("--delta", o.delta, "δ of perturbed pairs")->default_val(o.delta);
  AddDistOptions(cmd, args->dist);
  SetExamples(cmd,
              {"ltsim fuzz --seed 1 --cases 200 --out-dir runs/tour",
               "ltsim fuzz --seed 3 --cases 40 --methods test-drop-suffix --layers 1 "
               "--out-dir runs/broken",
               "ltsim fuzz --pair corpus/models/pair/f.json corpus/models/pair/g.json --cases 20 "
               "--out-dir runs/pair"},
              "Exit codes: 0 = nothing refuted, 1 = a property was refuted (each witness is "
              "listed with the command that replays it), 130 = stopped by a signal (continue "
              "with --resume DIR), 2 = bad input.");
  cmd->callback([args, &exit_code] { exit_code = RunFuzz(*args); });
}

}  // namespace ltsim::cli
