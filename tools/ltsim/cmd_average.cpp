// `ltsim average F G --alpha a --max-length N`: the expected gap under Theorem 4.2's Dirichlet
// prior at every length, summed exactly over statistics (docs/theory.md §13).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "common_options.h"
#include "help.h"
#include "ltsim/model/model_file.h"
#include "ltsim/threshold/average.h"
#include "number_list.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

struct AverageArgs {
  std::string f, g;
  std::optional<double> alpha;
  std::string alphas;
  std::optional<double> epsilon;
  AverageOptions options;
  bool json = false;
  bool quiet = false;
};

Json ArrayOf(const std::vector<double>& values) {
  Json out = Json::array();
  for (double v : values) out.push_back(Number(v));
  return out;
}

// The lengths the table shows: every length up to 20, then a ×2 grid, and N.
std::vector<std::uint64_t> ShownLengths(std::uint64_t n) {
  std::vector<std::uint64_t> shown;
  for (std::uint64_t t = 1; t <= n; t = t < 20 ? t + 1 : t * 2) shown.push_back(t);
  if (shown.back() != n) shown.push_back(n);
  return shown;
}

void PrintJsonResult(const AverageArgs& args, const AverageResult& r) {
  const AverageOptions& o = args.options;
  Json doc;
  doc["context"] = Context("average", o.seed, r.threads);
  doc["seed"] = o.seed;
  doc["alpha"] = *std::min_element(o.alphas.begin(), o.alphas.end());
  doc["alphas"] = o.alphas;
  doc["epsilon"] = o.epsilon ? Json(*o.epsilon) : Json(nullptr);
  doc["max_length"] = o.max_length;
  doc["view"] = {{"alphabet", r.view.alphabet},
                 {"period", r.view.period},
                 {"locality", r.view.locality},
                 {"types", r.view.alphabet * r.view.period}};
  // Exact lengths: the exact sum. Bracketed ones: null here, their bounds below.
  Json gaps = Json::array();
  for (std::size_t i = 0; i < r.lower.size(); ++i)
    gaps.push_back(r.exact_per_length[i] ? Number(r.lower[i]) : Json(nullptr));
  doc["average_gap_per_length"] = gaps;
  doc["average_gap_lower_per_length"] = ArrayOf(r.lower);
  doc["average_gap_upper_per_length"] = ArrayOf(r.upper);
  doc["exact"] = r.exact_up_to == o.max_length;
  doc["exact_up_to"] = r.exact_up_to;
  doc["first_average_disagreement"] =
      r.first_average_disagreement ? Json(*r.first_average_disagreement) : Json(nullptr);
  doc["first_average_disagreement_decided"] = r.decided;
  doc["statistics_evaluated"] = r.statistics_evaluated;
  doc["statistics_bracketed"] = r.statistics_pruned;
  doc["max_mass_error"] = r.max_mass_error;
  doc["threads"] = r.threads;
  doc["seconds"] = r.seconds;
  PrintJson(doc);
}

void PrintText(const AverageArgs& args, const AverageResult& r) {
  const AverageOptions& o = args.options;
  std::string alphas;
  for (double a : o.alphas) alphas += (alphas.empty() ? "" : ", ") + Show(a);
  std::cout << fmt::format("ltsim average   seed {}   α = ({})\n", o.seed, alphas);
  std::cout << fmt::format("  f: {}   g: {}\n", args.f, args.g);
  std::cout << fmt::format("  joint view: S = {}, Δ* = {}, τ* = {}\n", r.view.alphabet,
                           r.view.period, r.view.locality);
  std::cout << fmt::format(
      "  E|f(x) - g(x)| under π ~ Dir(α), x_t i.i.d. from π: exact sum over {} statistics for "
      "T ≤ {}",
      Thousands(r.statistics_evaluated), r.exact_up_to);
  if (r.exact_up_to < o.max_length)
    std::cout << fmt::format("; T in [{}, {}] bracketed by each context's certified gap range",
                             r.exact_up_to + 1, o.max_length);
  std::cout << fmt::format("\n  (probabilities sum to 1 within {:.2g} at every exact length)\n\n",
                           r.max_mass_error);
  std::cout << fmt::format("  {:>9}  {:>14}  {:>14}\n", "T", "E gap (lower)", "E gap (upper)");
  for (std::uint64_t t : ShownLengths(o.max_length))
    std::cout << fmt::format("  {:>9}  {:>14}  {:>14}{}\n", t, Show(r.lower[t - 1]),
                             Show(r.upper[t - 1]), r.exact_per_length[t - 1] ? "  exact" : "");
  if (o.epsilon) {
    std::cout << "\n";
    if (r.first_average_disagreement)
      std::cout << fmt::format("  first average disagreement: T = {} (expected gap > ε = {})\n",
                               *r.first_average_disagreement, Show(*o.epsilon));
    else if (!r.decided)
      std::cout << fmt::format(
          "  first average disagreement: undecided (a bracket holds ε = {} first)\n",
          Show(*o.epsilon));
    else
      std::cout << fmt::format("  no average disagreement up to T = {} (ε = {})\n", o.max_length,
                               Show(*o.epsilon));
  }
  std::cout << fmt::format("  {:.2f} s on {}\n", r.seconds, Plural(r.threads, "thread"));
}

int RunAverage(AverageArgs args) {
  SetCommandFlags({{"alphas", "--alphas"}, {"max_length", "--max-length"}});
  if (args.alpha && (!std::isfinite(*args.alpha) || *args.alpha <= 0.0))
    throw OptionError("alpha", fmt::format("must be finite and > 0, not {}", *args.alpha));
  if (!args.alpha && args.alphas.empty())
    throw OptionError("alpha", "is required (or --alphas a1,…,aS)");
  const Transformer f = ReadModel(args.f);
  const Transformer g = ReadModel(args.g);
  AverageOptions options = args.options;
  options.epsilon = args.epsilon;
  if (!args.alphas.empty())
    options.alphas = ParseNumberList(args.alphas, "--alphas");
  else
    options.alphas.assign(static_cast<std::size_t>(f.alphabet), *args.alpha);
  std::shared_ptr<Progress> progress;
  if (!args.quiet) {
    progress = std::make_shared<Progress>("average", "lengths");
    options.progress = [progress](std::uint64_t done, std::uint64_t total) {
      progress->Update(done, total);
    };
  }
  const AverageResult result = AverageGap(f, g, options);
  if (progress) progress->Finish();
  args.options = options;
  args.json ? PrintJsonResult(args, result) : PrintText(args, result);
  return 0;
}

}  // namespace

void AddAverageCommand(CLI::App& app) {
  auto args = std::make_shared<AverageArgs>();
  CLI::App* cmd = app.add_subcommand(
      "average",
      "One-layer pairs: the expected gap E|f(x) - g(x)| at every length under Theorem 4.2's "
      "Dirichlet prior, an exact sum over statistics.");
  SetExamples(
      cmd,
      {"ltsim average corpus/models/pair/f.json corpus/models/pair/g.json --alpha 1 "
       "--max-length 12",
       "ltsim average corpus/families/bump_s2.71_period2/f.json "
       "corpus/families/bump_s2.71_period2/g.json --alpha 0.5 --max-length 40 --eps 0.001 --json",
       "ltsim average corpus/models/pair/f.json corpus/models/pair/g.json --alphas 0.5,1,2 "
       "--max-length 8"},
      fmt::format(
          "π ~ Dir(α) is drawn once per string and its tokens i.i.d. from π, so a string with "
          "token "
          "counts n has probability Π_s α_s^(n_s) / A^(T) (rising factorials, A = Σ α_s), the same "
          "for every arrangement. The expected gap at length T is summed exactly over the "
          "sufficient statistics (far counts per (token, residue), the last τ*+1 tokens), each "
          "weighted by its number of strings times that probability (docs/theory.md §13). Once "
          "the statistics evaluated would pass --max-statistics, the remaining lengths are "
          "bracketed: each context (T mod Δ*, suffix) by its exact probability times a certified "
          "range of the gap over every attention distribution (average_gap_lower_per_length / "
          "_upper_; average_gap_per_length is null there). Two-layer pairs are refused: the "
          "average case is not exact for two layers. N ≤ {}, Δ*·S^(τ*+1) ≤ {} contexts.",
          kAverageMaxLength, kAverageMaxContexts));
  cmd->add_option("F", args->f, "model f (one layer)")->required();
  cmd->add_option("G", args->g, "model g (same alphabet and number of outputs)")->required();
  cmd->add_option("--alpha", args->alpha, "α > 0 for every token (Dir(α, …, α))");
  cmd->add_option("--alphas", args->alphas, "α_1,…,α_S, one per token (overrides --alpha)");
  cmd->add_option("--max-length", args->options.max_length, "N: lengths 1 … N")->required();
  cmd->add_option("--eps", args->epsilon,
                  "ε ≥ 0: report the least T whose expected gap exceeds ε (+1e-9·scale)");
  AddSeed(cmd, args->options.seed, "nothing (printed; the sum uses no randomness)");
  AddThreads(cmd, args->options.threads);
  cmd->add_option("--max-statistics", args->options.max_statistics,
                  "statistics summed one by one before the longer lengths are bracketed")
      ->default_val(args->options.max_statistics);
  cmd->add_flag("--quiet", args->quiet, "no progress on stderr");
  cmd->add_flag("--json", args->json, "print every number as JSON");
  cmd->callback([args] { RunAverage(*args); });
}

}  // namespace ltsim::cli
