// `ltsim search`: hill climbing over model pairs for an objective, shrinking, witness replay.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "commands.h"
#include "ltsim/bounds/search.h"
#include "ltsim/core/error.h"
#include "output.h"

namespace ltsim::cli {
namespace {

// A replay reproduces when |value − stored| ≤ 1e-12·max(1, |stored|) (the objective is a
// deterministic function of the stored weights, which round-trip exactly).
constexpr double kReplayTolerance = 1e-12;

struct SearchArgs {
  std::string input = "stress", out, replay;
  std::uint64_t x_length = 2000;
  SearchOptions options;
  bool json = false;
};

SearchOptions BuildOptions(const SearchArgs& args) {
  SearchOptions options = args.options;
  options.input.kind = ParseInputKind(args.input);
  options.input.length = args.x_length;
  return options;
}

Json SizeJson(const SearchCandidate& c) {
  return {{"heads", c.f.layers[0].heads.size()},
          {"width", c.f.width},
          {"x_length", c.input.length},
          {"objective", Number(c.objective)}};
}

Json SearchJson(const SearchResult& r) {
  const SearchOptions& o = r.options;
  Json doc;
  doc["context"] = Context("search", o.seed);
  doc["options"] = {{"objective", o.objective},
                    {"eps", o.eps},
                    {"n", o.n},
                    {"restarts", o.restarts},
                    {"iterations", o.iterations},
                    {"step", o.step},
                    {"step_grid", o.step_grid},
                    {"perturb_f", o.perturb_f},
                    {"input", InputKindName(o.input.kind)},
                    {"x_length", o.input.length},
                    {"method", "frequency"}};
  doc["restarts"] = Json::array();
  for (const SearchRestart& s : r.restarts)
    doc["restarts"].push_back({{"index", s.index},
                               {"seed", s.seed},
                               {"start", Number(s.trajectory.front())},
                               {"best", Number(s.best.objective)},
                               {"accepted", s.accepted}});
  doc["best"] = {{"restart", r.best_restart},
                 {"objective", Number(r.restarts[r.best_restart].best.objective)}};
  doc["shrunk"] = SizeJson(r.shrunk.candidate);
  doc["shrunk"]["heads_removed"] = r.shrunk.heads_removed;
  doc["shrunk"]["scalings"] = r.shrunk.scalings;
  doc["shrunk"]["halvings"] = r.shrunk.halvings;
  return doc;
}

void PrintTable(const SearchResult& r) {
  const SearchOptions& o = r.options;
  std::cout << fmt::format("search {} (ε = {}, n = {}), R = {}, I = {}, |x| = {}, seed {}\n",
                           o.objective, o.eps, o.n, o.restarts, o.iterations, o.input.length,
                           o.seed);
  std::cout << fmt::format("{:>8} {:>20} {:>12} {:>12} {:>9}\n", "restart", "seed", "start", "best",
                           "accepted");
  for (const SearchRestart& s : r.restarts)
    std::cout << fmt::format("{:>8} {:>20} {:>12} {:>12} {:>9}\n", s.index, s.seed,
                             Show(s.trajectory.front()), Show(s.best.objective), s.accepted);
  const SearchCandidate& best = r.restarts[r.best_restart].best;
  const SearchCandidate& shrunk = r.shrunk.candidate;
  std::cout << fmt::format("best     {} (restart {})\n", Show(best.objective), r.best_restart);
  std::cout << fmt::format(
      "shrunk   {} with {} heads, width {}, |x| = {} ({} heads removed, weights ×0.9^{}, |x| "
      "halved {}×)\n",
      Show(shrunk.objective), shrunk.f.layers[0].heads.size(), shrunk.f.width, shrunk.input.length,
      r.shrunk.heads_removed, r.shrunk.scalings, r.shrunk.halvings);
}

void WriteWitness(const std::string& path, const SearchOptions& o, const SearchCandidate& c) {
  if (!std::isfinite(c.objective))
    throw InputError("--out '" + path +
                     "': no pair had a finite objective (every z failed), nothing to save");
  std::ofstream out(path);
  if (!out) throw InputError("--out '" + path + "': cannot write");
  out << SearchWitnessToJson(o, c).dump(2) << "\n";
  if (!out) throw InputError("--out '" + path + "': cannot write");
}

// Re-evaluates a witness: 0 when it reproduces, 1 otherwise.
int Replay(const std::string& path, bool json) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path + ": not JSON (" + e.what() + ")");
  }
  const SearchWitness w = SearchWitnessFromJson(doc, path);
  const SearchCandidate& c = w.candidate;
  const double value = EvaluateObjective(w.objective, c.f, c.g, c.input, w.eps, w.n);
  const double stored = c.objective;
  const bool same = std::abs(value - stored) <= kReplayTolerance * std::max(1.0, std::abs(stored));
  if (json) {
    Json out;
    out["context"] = Context("search", 0);
    out["replay"] = {{"objective", w.objective},
                     {"value", Number(value)},
                     {"stored", Number(stored)},
                     {"reproduced", same}};
    PrintJson(out);
  } else {
    std::cout << fmt::format("replay {}: {} = {} (stored {}): {}\n", path, w.objective, Show(value),
                             Show(stored), same ? "reproduced" : "DIFFERS");
  }
  return same ? 0 : 1;
}

}  // namespace

void AddSearchCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SearchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "search",
      "Hill-climb over one-layer hardmax pairs to maximise an objective (needed-length: needed "
      "n / frequency-length; sim-ratio: max sim / ε; sim-over-eta: sim / (L·η)), then shrink.");
  SearchOptions& o = args->options;
  cmd->add_option("--objective", o.objective, "needed-length, sim-ratio (default), sim-over-eta");
  cmd->add_option("--eps", o.eps, "ε (default 0.01)");
  cmd->add_option("--n", o.n, "|z| for sim-ratio and sim-over-eta (default 200)");
  cmd->add_option("--restarts", o.restarts, "R parallel hill climbs (default 4)");
  cmd->add_option("--iterations", o.iterations, "I proposals per restart (default 20)");
  cmd->add_option("--seed", o.seed, "master seed (default 0)");
  cmd->add_option("--threads", o.threads, "oneTBB threads, 0 = all (never changes the result)");
  cmd->add_option("--step", o.step, "σ of the Gaussian step per weight (default 0.25)");
  cmd->add_option("--step-grid", o.step_grid,
                  "round steps to multiples of this, 0 = none (default 0.125: keeps ties)");
  cmd->add_flag("--perturb-f", o.perturb_f, "also step f's weights (default: only g)");
  cmd->add_option("--heads", o.base.heads, "heads of the starting pair (default 2)");
  cmd->add_option("--x-length", args->x_length, "|x| (default 2000)");
  cmd->add_option("--input", args->input, "input family of x (default stress)");
  cmd->add_option("--out", args->out, "write the shrunk witness (JSON) here");
  cmd->add_option("--replay", args->replay,
                  "re-evaluate a witness written by --out; exit 1 "
                  "unless it reproduces within 1e-12 relative");
  cmd->add_flag("--json", args->json, "print JSON instead of the table");
  cmd->callback([args, &exit_code] {
    if (!args->replay.empty()) {
      exit_code = Replay(args->replay, args->json);
      return;
    }
    const SearchResult r = RunSearch(BuildOptions(*args));
    args->json ? PrintJson(SearchJson(r)) : PrintTable(r);
    if (!args->out.empty()) {
      WriteWitness(args->out, r.options, r.shrunk.candidate);
      if (!args->json) std::cout << "wrote " << args->out << "\n";
    }
  });
}

}  // namespace ltsim::cli
