// `ltsim search`: hill climbing over model pairs for an objective, shrinking, witness replay.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "common_options.h"
#include "dist_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/dist/dist.h"
#include "ltsim/io/output_file.h"
#include "ltsim/model/model_file.h"
#include "ltsim/search/proposals.h"
#include "ltsim/search/search.h"
#include "ltsim/search/two_layer_refute.h"
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
  // --layers 2 (docs/refute.md §8): the two-layer class and its certified-T* search.
  int layers = 1;
  TwoLayerSearchOptions two;
  std::string modes = "hardmax,softmax", second_modes, bias_scaling = "none";
  std::vector<std::pair<std::string, CLI::Option*>> one_only;  ///< flags of one layer only
  std::vector<CLI::Option*> two_only;                          ///< flags of --layers 2 only
  CLI::Option* objective_option = nullptr;
  CLI::Option* heads_option = nullptr;
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
  if (!json)
    std::cout << fmt::format("wrote {} (recheck in 50 digits: {}, precise {})\n", written,
                             kRecheckValueNames.Name(saved.recheck.status),
                             saved.recheck.precise_text);
  if (saved.recheck.status == RecheckStatus::kDiffers) {
    std::cerr << "ltsim search: the objective is not confirmed in high precision (" << written
              << " records the difference)\n";
    return 1;
  }
  return 0;
}

// `search --layers 2`: the certified-T* search of docs/refute.md §8 (objective
// disagreement-length: the certified T* itself), R climbs of I proposals.
int RunTwoLayerSearchCommand(SearchArgs& args) {
  for (const auto& [name, option] : args.one_only)
    if (option->count() > 0)
      throw InputError(fmt::format("{}: does not apply with --layers 2", name));
  if (args.objective_option->count() > 0 && args.objective != "disagreement-length")
    throw InputError(
        "--objective: --layers 2 searches disagreement-length only (the certified T*)");
  if (!args.out.empty())
    throw InputError("--out: with --layers 2 the witness goes to --out-dir DIR");
  TwoLayerSearchOptions& o = args.two;
  const SearchOptions& base = args.options;
  if (args.heads_option->count() > 0) o.cls.heads = base.base.heads;
  o.cls.modes = ParseModeList(args.modes, "--modes");
  o.cls.second_modes =
      args.second_modes.empty() ? o.cls.modes : ParseModeList(args.second_modes, "--second-modes");
  o.cls.bias_scaling = ParseFlag("--bias-scaling", kBiasScalingNames, args.bias_scaling);
  o.eps = base.eps;
  o.seed = base.seed;
  o.threads = base.threads;
  if (args.max_length->count() > 0) o.max_length = base.n;
  if (base.restarts < 1) throw InputError("--restarts: at least 1");
  if (base.iterations < 0) throw InputError("--iterations: must be ≥ 0");
  o.iterations = base.iterations;
  // R·(I + 1) evaluations, plus shrinking (min(20, budget/10), docs/refute.md §8.3).
  const std::uint64_t climbs =
      static_cast<std::uint64_t>(base.restarts) * (static_cast<std::uint64_t>(base.iterations) + 1);
  if (climbs > kMaxTwoLayerBudget)
    throw InputError(fmt::format(
        "--restarts: {} × (--iterations + 1) = {} evaluations is above {} with --layers 2",
        base.restarts, climbs, kMaxTwoLayerBudget));
  o.budget = climbs + std::min<std::uint64_t>(o.shrink_budget, climbs / 9);
  ValidateTwoLayerSearch(o);
  std::cerr << fmt::format("search --layers 2: seed {}\n", o.seed);
  Progress progress("search", "climbs");
  o.progress = [&progress](int done, int climbs_in_all, std::uint64_t evaluations, double best) {
    progress.Update(static_cast<std::uint64_t>(done), static_cast<std::uint64_t>(climbs_in_all),
                    fmt::format("{} evaluations, best score {:.0f}", evaluations, best));
  };
  const TwoLayerSearchResult r = RunTwoLayerSearch(o);
  progress.Finish();
  const Json j = TwoLayerSearchToJson(r);
  std::string written;
  if (!args.out_dir.empty()) {
    namespace fs = std::filesystem;
    std::error_code error;
    fs::create_directories(args.out_dir, error);
    if (error || !fs::is_directory(args.out_dir))
      throw InputError("--out-dir '" + args.out_dir + "': cannot create the directory");
    const TwoLayerClimb& best = r.climbs[r.best];
    const fs::path dir(args.out_dir);
    WriteModel(best.f, (dir / "f.json").string());
    WriteModel(best.g, (dir / "g.json").string());
    io::WriteFileAtomically((dir / "search.json").string(), j.dump(2) + "\n");
    written = (dir / "search.json").string();
  }
  if (args.json) {
    PrintJson(j);
  } else {
    const TwoLayerEvaluation& e = r.climbs[r.best].best;
    std::cout << fmt::format(
        "search --layers 2 (seed {}, {} evaluations, eps {}, N = {}, L0 = {}, B = {})\n", o.seed,
        r.evaluations, o.eps, o.max_length, o.cls.max_scale, o.cls.max_logit);
    std::cout << fmt::format(
        "  best pair (climb {}): T* = {}, certified by the two-layer path search; {}separated "
        "(largest gap found {})\n",
        r.best,
        e.first_disagreement ? std::to_string(*e.first_disagreement)
                             : fmt::format("> {}", e.checked_up_to),
        e.separated ? "" : "not ", e.sup_gap);
    std::cout << fmt::format("  recheck (50 digits): {}\n",
                             kRecheckValueNames.Name(r.recheck_status));
    if (!written.empty())
      std::cout << fmt::format("wrote {} (replay: ltsim replay {})\n", written, written);
  }
  return r.recheck_status == RecheckStatus::kAgrees ? 0 : 1;
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
      "rescaling, edits of x), then shrink (heads, width, norms, x). --layers 2: the certified-T* "
      "search over a two-layer class of docs/refute.md §8 (objective disagreement-length).");
  SearchOptions& o = args->options;
  args->objective_option = cmd->add_option(
      "--objective", args->objective,
      "needed-length, sim-ratio (default), sim-over-eta, needed, disagreement-length");
  cmd->add_option("--eps", o.eps, "ε (default 0.01)");
  args->z_length =
      cmd->add_option("--z-length", o.n, "|z| for sim-ratio and sim-over-eta (default 200)");
  args->max_length = cmd->add_option(
      "--max-length", o.n, "the longest length disagreement-length searches (default 200)");
  AddDeprecated(cmd, "--n", o.n, "--z-length (or --max-length for disagreement-length)");
  cmd->add_option("--restarts", o.restarts,
                  "R parallel hill climbs (default 4; --layers 2: the budget is R·(I + 1) "
                  "evaluations, a third random starts, the rest climbs of about I proposals from "
                  "the best starts)");
  cmd->add_option("--iterations", o.iterations,
                  "I proposals per restart (default 20; --layers 2: 0 = random starts only)");
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
  args->heads_option = cmd->add_option(
      "--heads", o.base.heads,
      "heads of the starting pair (default 2; --layers 2: the first layer's, default 1)");
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
  cmd->add_option("--layers", args->layers,
                  "1 (default) or 2: the certified-T* search over a two-layer class "
                  "(docs/refute.md §8; objective disagreement-length, budget restarts × "
                  "(iterations + 1), witness DIR/search.json with --out-dir)")
      ->default_val(1);
  TwoLayerClass& c = args->two.cls;
  args->two_only = {
      cmd->add_option("--alphabet", c.alphabet, "--layers 2: S (default 2)"),
      cmd->add_option("--period", c.period, "--layers 2: Δ (default 1)"),
      cmd->add_option("--locality", c.locality, "--layers 2: τ (default 1)"),
      cmd->add_option("--width", c.width, "--layers 2: d (default 6)"),
      cmd->add_option("--second-heads", c.second_heads, "--layers 2: the second layer's heads"),
      cmd->add_option("--mlp-width", c.mlp_width, "--layers 2: MLP units a layer (default 1)"),
      cmd->add_option("--modes", args->modes,
                      "--layers 2: the first layer's allowed modes (default hardmax,softmax)"),
      cmd->add_option("--second-modes", args->second_modes,
                      "--layers 2: the second layer's allowed modes (default: --modes)"),
      cmd->add_option("--bias-scaling", args->bias_scaling,
                      "--layers 2: the first layer's bias scaling, none or log"),
      cmd->add_option("--max-lipschitz", c.max_scale,
                      "--layers 2: L0, the bound on the output scale (default 8)"),
      cmd->add_option("--max-logit", c.max_logit,
                      "--layers 2: B, the bound on softmax and finite layers' logits (default 8)"),
      cmd->add_option("--threshold-evaluations", args->two.threshold_evaluations,
                      "--layers 2: evaluation cap of each path-search threshold run (default "
                      "50000)")};
  SetExamples(cmd, {"ltsim search --objective sim-ratio --z-length 40 --restarts 2 --iterations 4 "
                    "--x-length 400",
                    "ltsim search --objective disagreement-length --max-length 8 --restarts 2 "
                    "--iterations 4 --out-dir witnesses",
                    "ltsim search --layers 2 --eps 0.05 --width 5 --max-length 30 --restarts 1 "
                    "--iterations 5 --seed 4 --out-dir two-layer; ltsim replay "
                    "two-layer/search.json"});
  args->two.cls.max_scale = 8.0;
  args->two.cls.max_logit = 8.0;
  for (const char* name : {"--z-length", "--x-length", "--input", "--fixed-x", "--proposals",
                           "--step", "--step-grid", "--perturb-f", "--n", "--shard", "--shard-out"})
    args->one_only.emplace_back(name, cmd->get_option(name));
  cmd->callback([args, &exit_code] {
    if (!args->replay.empty()) {
      exit_code = RunSearchReplay(args->replay, args->json);
      return;
    }
    if (args->layers != 1 && args->layers != 2)
      throw InputError(fmt::format("--layers: {} is not 1 or 2", args->layers));
    if (args->layers == 2) {
      exit_code = RunTwoLayerSearchCommand(*args);
      return;
    }
    for (const CLI::Option* option : args->two_only)
      if (option->count() > 0)
        throw InputError(fmt::format("{}: only with --layers 2", option->get_name()));
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
