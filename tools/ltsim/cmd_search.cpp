// `ltsim search`: hill climbing over model pairs for an objective, shrinking, witness replay.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "dist_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/dist/dist.h"
#include "ltsim/search/proposals.h"
#include "ltsim/search/search.h"
#include "ltsim/search/witness_io.h"
#include "output.h"
#include "progress.h"
#include "replay.h"

namespace ltsim::cli {
namespace {

// A replay reproduces when |value − stored| ≤ 1e-12·max(1, |stored|) (the objective is a
// deterministic function of the stored weights, which round-trip exactly).

struct SearchArgs {
  std::string input = "stress", out, out_dir, replay;
  std::string objective = "sim-ratio", proposals = "mixed";  // parsed once, in BuildOptions
  const CLI::Option* z_length = nullptr;
  const CLI::Option* max_length = nullptr;
  std::uint64_t x_length = 2000;
  SearchOptions options;
  bool json = false;
  bool fixed_x = false;
  DistArgs dist;
};

SearchOptions BuildOptions(const SearchArgs& args) {
  SearchOptions options = args.options;
  options.objective = ParseFlag("--objective", kSearchObjectiveNames, args.objective);
  options.proposals = ParseFlag("--proposals", kProposalSetNames, args.proposals);
  const bool disagreement = options.objective == SearchObjective::kDisagreementLength;
  if (disagreement && args.z_length->count() > 0)
    throw InputError("--z-length: disagreement-length has no z; its limit is --max-length");
  if (!disagreement && args.max_length->count() > 0)
    throw InputError(
        "--max-length: only for --objective disagreement-length (the other "
        "objectives take --z-length)");
  options.input.kind = ParseInputKind(args.input);
  options.input.length = args.x_length;
  options.search_x = !args.fixed_x;
  return options;
}

std::uint64_t XLength(const SearchCandidate& c) {
  if (c.x_runs.empty()) return c.input.length;
  std::uint64_t length = 0;
  for (const Run& r : c.x_runs) length += r.count;
  return length;
}

Json SizeJson(const SearchCandidate& c) {
  return {{"heads", c.f.layers[0].heads.size()},
          {"width", c.f.width},
          {"x_length", XLength(c)},
          {"x_explicit", !c.x_runs.empty()},
          {"objective", Number(c.objective)}};
}

Json KindsJson(const std::vector<int>& counts) {
  Json kinds = Json::object();
  for (int k = 0; k < kProposalKinds; ++k)
    if (counts[k] > 0) kinds[ProposalKindName(static_cast<ProposalKind>(k))] = counts[k];
  return kinds;
}

Json ShrunkJson(const ShrinkResult& s) {
  Json doc = SizeJson(s.candidate);
  doc["heads_removed"] = s.heads_removed;
  doc["widths_removed"] = s.widths_removed;
  doc["scalings"] = s.scalings;
  doc["halvings"] = s.halvings;
  doc["runs_removed"] = s.runs_removed;
  doc["runs_shortened"] = s.runs_shortened;
  doc["prefix_cuts"] = s.prefix_cuts;
  return doc;
}

Json SearchJson(const SearchResult& r) {
  const SearchOptions& o = r.options;
  Json doc;
  doc["context"] = Context("search", o.seed, UsedThreads(o.threads));
  doc["options"] = SearchOptionsToJson(o);
  doc["restarts"] = Json::array();
  for (const SearchRestart& s : r.restarts)
    doc["restarts"].push_back({{"index", s.index},
                               {"seed", s.seed},
                               {"start", Number(s.trajectory.front())},
                               {"best", Number(s.best.objective)},
                               {"accepted", s.accepted},
                               {"proposed_by_kind", KindsJson(s.proposed_by_kind)},
                               {"accepted_by_kind", KindsJson(s.accepted_by_kind)}});
  doc["best"] = {{"restart", r.best_restart},
                 {"objective", Number(r.restarts[r.best_restart].best.objective)}};
  doc["shrunk"] = ShrunkJson(r.shrunk);
  return doc;
}

void PrintTable(const SearchResult& r) {
  const SearchOptions& o = r.options;
  std::cout << fmt::format(
      "search {} (ε = {}, n = {}), R = {}, I = {}, |x| = {}, proposals {}{}, seed {}\n",
      kSearchObjectiveNames.Name(o.objective), o.eps, o.n, o.restarts, o.iterations, o.input.length,
      kProposalSetNames.Name(o.proposals), o.search_x ? " + x" : "", o.seed);
  std::cout << fmt::format("{:>8} {:>20} {:>12} {:>12} {:>9}\n", "restart", "seed", "start", "best",
                           "accepted");
  for (const SearchRestart& s : r.restarts)
    std::cout << fmt::format("{:>8} {:>20} {:>12} {:>12} {:>9}\n", s.index, s.seed,
                             Show(s.trajectory.front()), Show(s.best.objective), s.accepted);
  const SearchCandidate& best = r.restarts[r.best_restart].best;
  std::cout << fmt::format("best     {} (restart {})\n", Show(best.objective), r.best_restart);
  std::cout << "accepted";
  std::vector<int> accepted(kProposalKinds, 0), proposed(kProposalKinds, 0);
  for (const SearchRestart& s : r.restarts)
    for (int k = 0; k < kProposalKinds; ++k)
      accepted[k] += s.accepted_by_kind[k], proposed[k] += s.proposed_by_kind[k];
  for (int k = 0; k < kProposalKinds; ++k)
    if (proposed[k] > 0)
      std::cout << fmt::format(" {} {}/{}", ProposalKindName(static_cast<ProposalKind>(k)),
                               accepted[k], proposed[k]);
  std::cout << "\n";
  const ShrinkResult& s = r.shrunk;
  const SearchCandidate& shrunk = s.candidate;
  std::cout << fmt::format(
      "shrunk   {} with {}, width {}, |x| = {}{} ({} and {} removed, weights ×0.9^{}, |x| "
      "halved {}×, {} removed, {} halved, {})\n",
      Show(shrunk.objective), Plural(shrunk.f.layers[0].heads.size(), "head"), shrunk.f.width,
      XLength(shrunk), shrunk.x_runs.empty() ? "" : " (explicit)", Plural(s.heads_removed, "head"),
      Plural(s.widths_removed, "coordinate"), s.scalings, s.halvings, Plural(s.runs_removed, "run"),
      Plural(s.runs_shortened, "run"), Plural(s.prefix_cuts, "prefix cut"));
}

// Saves the shrunk witness after its high-precision recheck (search_witness_io.h): a file, or a
// content-hash name in a directory. 1 when the recheck differs (the double objective is a
// rounding artefact; the file records that), else 0.
// Where --out / --out-dir put the witness: `--out FILE.json` a file; `--out-dir DIR` (created
// when missing) a content-hash name in DIR. `--out X` without `.json`, or naming a directory,
// is the old directory spelling: X is created as a directory, never written as a file.
std::string WitnessTarget(const SearchArgs& args) {
  namespace fs = std::filesystem;
  std::string dir = args.out_dir;
  if (dir.empty()) {
    const bool is_file = args.out.ends_with(".json") && !fs::is_directory(args.out);
    if (is_file) return args.out;
    NoteDeprecated("--out DIR", "--out-dir DIR", "in search, --out names a .json file");
    FlushDeprecationNotes();
    dir = args.out;
  }
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir))
    throw InputError("--out-dir '" + dir + "': cannot create the directory");
  return dir;
}

int WriteWitness(const std::string& path, const SearchOptions& o, const SearchCandidate& c,
                 bool json) {
  if (!std::isfinite(c.objective))
    throw InputError("--out '" + path +
                     "': no pair had a finite objective (every z failed), nothing to save");
  const SavedSearchWitness saved = SaveSearchWitness(path, o, c);
  const std::string& written = saved.path;
  const std::string& status = saved.recheck.status;
  if (!json)
    std::cout << fmt::format("wrote {} (recheck in 50 digits: {}, precise {})\n", written, status,
                             saved.recheck.precise_text);
  if (status == "differs") {
    std::cerr << "ltsim search: the objective is not confirmed in high precision (" << written
              << " records the difference)\n";
    return 1;
  }
  return 0;
}

}  // namespace

void AddSearchCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SearchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "search",
      "Hill-climb over one-layer hardmax pairs (and x) to maximise an objective (needed-length: "
      "needed n / frequency-length; sim-ratio: max sim / ε; sim-over-eta: sim / (L·η); needed: "
      "needed n; disagreement-length: first length ≤ n with gap > ε over all strings / Thm 4.1's "
      "N), with Gaussian and structural proposals (logit ties, suffix ties, row copies, "
      "rescaling, edits of x), then shrink (heads, width, norms, x).");
  SearchOptions& o = args->options;
  cmd->add_option("--objective", args->objective,
                  "needed-length, sim-ratio (default), sim-over-eta, needed, disagreement-length");
  cmd->add_option("--eps", o.eps, "ε (default 0.01)");
  args->z_length =
      cmd->add_option("--z-length", o.n, "|z| for sim-ratio and sim-over-eta (default 200)");
  args->max_length = cmd->add_option(
      "--max-length", o.n, "the longest length disagreement-length searches (default 200)");
  AddDeprecated(cmd, "--n", o.n, "--z-length (or --max-length for disagreement-length)");
  cmd->add_option("--restarts", o.restarts, "R parallel hill climbs (default 4)");
  cmd->add_option("--iterations", o.iterations, "I proposals per restart (default 20)");
  AddSeed(cmd, o.seed);
  AddThreads(cmd, o.threads);
  cmd->add_option("--step", o.step, "σ of the Gaussian step per weight (default 0.25)");
  cmd->add_option("--step-grid", o.step_grid,
                  "round steps to multiples of this, 0 = none (default 0.125: keeps ties)");
  cmd->add_flag("--perturb-f", o.perturb_f, "also step f's weights (default: only g)");
  cmd->add_option("--proposals", args->proposals,
                  "mixed (default: Gaussian + structural + x), gaussian (Gaussian steps only), "
                  "logits (only moves that keep L: qk/bias steps, ties, x)");
  cmd->add_flag("--fixed-x", args->fixed_x, "never edit x (default: x is searched too)");
  cmd->add_option("--heads", o.base.heads, "heads of the starting pair (default 2)");
  cmd->add_option("--x-length", args->x_length, "|x| (default 2000)");
  cmd->add_option("--input", args->input, "input family of x (default stress)");
  cmd->add_option("--out", args->out,
                  "write the shrunk witness (JSON, rechecked in 50 digits) to this .json file");
  cmd->add_option("--out-dir", args->out_dir,
                  "write it to DIR/<content hash>.search.json instead (DIR is created; e.g. "
                  "corpus/witnesses)");
  AddDeprecated(cmd, "--replay", args->replay, "ltsim replay FILE");
  cmd->add_flag("--json", args->json, "print JSON instead of the table");
  AddDistOptions(cmd, args->dist);
  SetExamples(cmd, {"ltsim search --objective sim-ratio --z-length 40 --restarts 2 --iterations 4 "
                    "--x-length 400",
                    "ltsim search --objective disagreement-length --max-length 8 --restarts 2 "
                    "--iterations 4 --out-dir witnesses"});
  cmd->callback([args, &exit_code] {
    if (!args->replay.empty()) {
      exit_code = RunSearchReplay(args->replay, args->json);
      return;
    }
    CommandDealer dealer(args->dist);
    SearchOptions options = BuildOptions(*args);
    // The library's keys for this command's flags (commands.h): n is |z| or the longest length.
    const bool disagreement = options.objective == SearchObjective::kDisagreementLength;
    SetCommandFlags(
        {{"n", disagreement ? "--max-length" : "--z-length"}, {"input.length", "--x-length"}});
    options.dealer = &dealer.get();  // the restarts, over MPI ranks or shards
    // This process's share of the restarts (rank 0 alone prints under MPI).
    Progress progress("search", "restarts");
    if (dist::Rank() == 0) options.progress = progress.Callback();
    const SearchResult r = RunSearch(options);
    progress.Finish();
    if (!dealer.Reduces()) return dealer.FinishShard();
    args->json ? PrintJson(SearchJson(r)) : PrintTable(r);
    if (!args->out.empty() || !args->out_dir.empty())
      exit_code = WriteWitness(WitnessTarget(*args), r.options, r.shrunk.candidate, args->json);
  });
}

}  // namespace ltsim::cli
