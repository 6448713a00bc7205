// `ltsim refute --bound EXPR …`: search a class for a pair whose certified first disagreement
// exceeds a conjectured training length (docs/refute.md).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "commands.h"
#include "common_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/io/output_dir.h"
#include "ltsim/io/output_file.h"
#include "ltsim/model/model_file.h"
#include "ltsim/search/refute.h"
#include "output.h"
#include "progress.h"
#include "replay.h"

namespace ltsim::cli {
namespace {

struct RefuteArgs {
  RefuteOptions options;
  std::string modes = "hardmax";
  std::string out;
  std::string replay;
  bool json = false;
  std::vector<CLI::Option*> required;  ///< the class and the bound: needed unless --replay
};

std::vector<Attention> ParseModes(const std::string& text) {
  std::vector<Attention> modes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const Attention mode = ParseFlag("--modes", kAttentionNames, item);
    if (std::find(modes.begin(), modes.end(), mode) == modes.end()) modes.push_back(mode);
  }
  if (modes.empty()) throw InputError("--modes: at least one mode");
  return modes;
}

void WriteText(const std::filesystem::path& path, const std::string& text) {
  io::WriteFileAtomically(path.string(), text);
}

// A number as the JSON document shows it (null when not finite or absent): the table and
// refute.json print the same digits.
std::string JsonText(double x) { return std::isfinite(x) ? Json(x).dump() : "null"; }
std::string JsonText(const std::optional<std::uint64_t>& x) {
  return x ? std::to_string(*x) : "null";
}

// Formats the result struct (RefuteToJson is the same numbers for --json and refute.json).
void PrintTable(const RefuteResult& r) {
  const RawSearchOptions& o = r.options.search;
  const RawRestart& best = r.search.restarts[r.best.restart];
  const RawEvaluation& e = best.best;
  std::cout << fmt::format(
      "refute --bound '{}' (seed {}, {} of {} evaluations, eps {}, N = {}, L0 = {})\n",
      r.options.bound, o.seed, r.search.evaluations, o.budget, o.eps, o.max_length,
      o.cls.max_lipschitz);
  const std::string t = e.first_disagreement
                            ? std::to_string(*e.first_disagreement)
                            : fmt::format("> {} (no disagreement up to N)", o.max_length);
  std::cout << fmt::format("  best pair (start: {}): T* = {}, certified by exact threshold\n",
                           best.start, t);
  std::cout << fmt::format("  witness at T*: {}\n", RunLengthText(e.witness));
  const std::optional<std::uint64_t> sup_length =
      e.sup_statistic ? std::optional<std::uint64_t>(e.sup_statistic->length) : std::nullopt;
  std::cout << fmt::format(
      "  largest gap below T* = {}; largest gap found = {} at length {} ({}separated: κ = {})\n",
      JsonText(e.largest_gap_below), JsonText(e.sup_gap), JsonText(sup_length),
      e.separated ? "" : "not ", o.separation);
  std::cout << fmt::format("  L = {}, T*·ε/L = {}\n", JsonText(r.best.lipschitz),
                           JsonText(r.best.eps_over_L));
  std::cout << fmt::format("  bound at the pair's constants = {}, T*/bound = {}\n",
                           JsonText(r.best.bound_value), JsonText(r.best.ratio));
  if (!r.family_name.empty())
    std::cout << fmt::format(
        "  best built-in family for this class: {} with T* = {}, T*·ε/L = {}\n", r.family_name,
        JsonText(r.family_first_disagreement), JsonText(r.family_eps_over_L));
  else
    std::cout << "  best built-in family for this class: none fits\n";
  std::cout << fmt::format("  recheck (50 digits): {}\n", Json(r.search.recheck.status).dump());
  std::cout << (r.refuted ? "REFUTED: a separated pair's certified T* exceeds the bound\n"
                          : "not refuted (the best ratio T*/bound above)\n");
}

int Run(RefuteArgs& args) {
  if (!args.replay.empty()) return RunRefuteReplay(args.replay, args.json);
  SetCommandFlags({{"precision_bits", "--precision"}, {"max_length", "--max-length"}});
  for (const CLI::Option* option : args.required)
    if (option->count() == 0) throw InputError(fmt::format("{}: required", option->get_name()));
  RawSearchOptions& s = args.options.search;
  s.cls.modes = ParseModes(args.modes);
  ValidateRefuteBound(args.options.bound);
  ValidatePairClass(s.cls);
  // The output directory is locked, checked and staged before the search (a bad --out-dir
  // costs nothing); its four files appear together or not at all (io/output_dir.h).
  std::unique_ptr<io::OutputSet> set;
  if (!args.out.empty()) set = std::make_unique<io::OutputSet>(args.out, "refute");
  // Progress on stderr (results never depend on it): climbs, with evaluations and the best.
  auto progress = std::make_shared<Progress>(
      "refute", "climbs", Progress::Options{.quiet_seconds = 0, .always_final = true});
  s.progress = [progress](int done, int climbs, std::uint64_t evaluations, double best, double) {
    progress->Update(static_cast<std::uint64_t>(done), static_cast<std::uint64_t>(climbs),
                     fmt::format("{} evaluations, best score {:.0f}", evaluations, best));
  };
  const RefuteResult result = RunRefute(args.options);
  progress->Finish();
  const nlohmann::json j = RefuteToJson(result);
  if (set) {
    const std::filesystem::path dir(set->staging());
    const RawRestart& best = result.search.restarts[result.best.restart];
    WriteModel(best.f, (dir / "f.json").string());
    WriteModel(best.g, (dir / "g.json").string());
    WriteText(dir / "witness.txt", RunLengthText(best.best.witness) + "\n");
    WriteText(dir / "refute.json", j.dump(2) + "\n");
    set->Commit();
  }
  if (args.json)
    std::cout << j.dump(2) << "\n";
  else
    PrintTable(result);
  return result.refuted ? 1 : 0;
}

}  // namespace

int RunRefuteReplay(const std::string& path, bool json) {
  std::string report;
  const bool ok = ReplayRefute(path, &report);
  if (json) {
    Json doc;
    doc["context"] = Context("replay", 0);
    doc["file"] = path;
    doc["format"] = "refute";
    doc["report"] = report;
    doc["reproduced"] = ok;
    PrintJson(doc);
  } else {
    std::cout << report << (ok ? "\nreproduced\n" : "\nNOT reproduced\n");
  }
  return ok ? kReproduced : kNotReproduced;
}

void AddRefuteCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RefuteArgs>();
  RawSearchOptions& s = args->options.search;
  CLI::App* cmd = app.add_subcommand(
      "refute",
      "Search a class of one-layer pairs for one whose certified first disagreement T* (exact "
      "threshold) exceeds a conjectured training length EXPR at the pair's own constants "
      "(docs/refute.md). Exit 1 when refuted, 0 when not, 2 on bad input.");
  SetExamples(
      cmd,
      {"ltsim refute --bound 'L/eps' --eps 0.05 --max-lipschitz 8 --alphabet 2 --period 1 "
       "--locality 0 --width 6 --heads 2 --mlp-width 1 --max-length 300 --budget 40 "
       "--iterations 5",
       "ltsim refute --bound thm4.1-length --eps 0.05 --max-lipschitz 3 --alphabet 2 "
       "--period 1 --locality 0 --width 6 --heads 2 --mlp-width 1 --max-length 200 "
       "--budget 40 --iterations 5 --threads 2 --json",
       "ltsim refute --bound '0.01*L/eps' --eps 0.05 --max-lipschitz 8 --alphabet 2 "
       "--period 2 --locality 0 --width 6 --heads 2 --mlp-width 1 --max-length 300 --budget 40 "
       "--iterations 5 --out-dir refute-out; ltsim replay refute-out/refute.json"},
      "The first and third example refute their bound (exit 1), the second does not "
      "(exit 0). The defaults (--budget 10000 evaluations, --max-length 20000) take about "
      "half a minute on 2 free cores (32 s measured for the first example's class, 56 s of "
      "CPU) and longer on a loaded machine; the examples use 40. `ltsim replay "
      "DIR/refute.json` re-derives T*, the separation and the verdict from the files.");
  auto need = [&](CLI::Option* option) { args->required.push_back(option); };
  need(cmd->add_option("--bound", args->options.bound,
                       "conjectured N: a muParser expression over L, Delta, S, tau, gamma, p, C, "
                       "gamma_pos, D, eps (as `ltsim constants --bound`), or a registry bound "
                       "name such as thm4.1-length"));
  need(cmd->add_option("--eps", s.eps, "ε")->check(CLI::PositiveNumber));
  need(cmd->add_option("--max-lipschitz", s.cls.max_lipschitz, "L₀: L(f), L(g) ≤ L₀"));
  need(cmd->add_option("--alphabet", s.cls.alphabet, "S"));
  need(cmd->add_option("--period", s.cls.period, "Δ"));
  need(cmd->add_option("--locality", s.cls.locality, "τ"));
  need(cmd->add_option("--width", s.cls.width, "d"));
  need(cmd->add_option("--heads", s.cls.heads, "H (one layer)"));
  need(cmd->add_option("--mlp-width", s.cls.mlp_width, "m: MLP units (0: no MLP)"));
  cmd->add_option("--modes", args->modes, "allowed attention modes, comma-separated")
      ->default_val("hardmax");
  cmd->add_option("--precision", s.cls.precision_bits, "p of finite attention")->default_val(8);
  cmd->add_option("--min-margin", s.cls.min_margin, "γ₀: γ(f), γ(g) ≥ γ₀ for finite attention")
      ->default_val(0.0);
  cmd->add_option("--max-length", s.max_length, "N: T* is exact up to N")->default_val(20000);
  cmd->add_option("--budget", s.budget, "T* evaluations (default ≈ half a minute on 2 cores)")
      ->default_val(10000);
  cmd->add_option("--iterations", s.iterations, "proposals per hill climb")->default_val(49);
  cmd->add_option("--separation", s.separation,
                  "κ: a pair counts only when some string has a gap ≥ κ·ε")
      ->default_val(2.0);
  AddSeed(cmd, s.seed);
  AddThreads(cmd, s.threads);
  AddOutDir(cmd, args->out, "write f.json, g.json, witness.txt and refute.json in this directory");
  AddDeprecated(cmd, "--replay", args->replay, "ltsim replay FILE");
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->add_flag("--random", s.random_only,
                "the baseline: every evaluation a fresh random start, no climbing");
  cmd->add_flag("!--no-family-seeds", s.family_seeds,
                "start every climb from a random pair (not from the built-in families)");
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace ltsim::cli
