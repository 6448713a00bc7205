// `ltsim profile F G`: the largest gap at each length, over the training lengths and over
// every length, with their ratio, every number a certified bracket (docs/theory.md §14).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "help.h"
#include "ltsim/io/output_dir.h"
#include "ltsim/model/model_file.h"
#include "ltsim/search/raw_threshold_search.h"
#include "ltsim/threshold/profile.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

struct ProfileArgs {
  std::string f, g, out;
  ProfileOptions options;
  bool json = false;
  bool quiet = false;
};

Json ProfileJson(const ProfileArgs& args, const ProfileResult& r) {
  const ProfileOptions& o = args.options;
  Json doc;
  doc["context"] = Context("profile", o.seed, UsedThreads(o.threads));
  doc["seed"] = o.seed;
  doc["f"] = args.f;
  doc["g"] = args.g;
  doc["train_length"] = o.train_length == 0 ? Json(nullptr) : Json(o.train_length);
  doc["max_length"] = o.max_length;
  doc["view"] = {
      {"alphabet", r.view.alphabet}, {"period", r.view.period}, {"locality", r.view.locality}};
  Json lengths = Json::array(), lower = Json::array(), upper = Json::array();
  for (const ProfilePoint& p : r.points) {
    lengths.push_back(p.length);
    lower.push_back(Number(p.lower));
    upper.push_back(Number(p.upper));
  }
  doc["lengths"] = lengths;
  doc["gap_lower"] = lower;  // attained by a string of that length (evaluated)
  doc["gap_upper"] = upper;  // certified bound on every string of that length
  doc["train_gap_lower"] = Number(r.train_lower);
  doc["train_gap_upper"] = Number(r.train_upper);
  doc["sup_gap_lower"] = Number(r.sup_lower);
  doc["sup_gap_upper"] = Number(r.sup_upper);
  doc["sup_witness_text"] =
      r.sup_witness.empty() ? Json(nullptr) : Json(RunLengthText(r.sup_witness));
  doc["sup_witness_length"] =
      r.sup_witness_length == 0 ? Json(nullptr) : Json(r.sup_witness_length);
  doc["sup_status"] = r.sup_status;
  doc["ratio_lower"] = Number(r.ratio_lower);
  doc["ratio_upper"] = Number(r.ratio_upper);
  doc["certify_runs"] = r.certify_runs;
  doc["seconds"] = r.seconds;
  return doc;
}

std::string Csv(const ProfileResult& r) {
  std::string csv = "length,gap_lower,gap_upper\n";
  for (const ProfilePoint& p : r.points)
    csv += fmt::format("{},{:.17g},{:.17g}\n", p.length, p.lower, p.upper);
  return csv;
}

void PrintTable(const ProfileArgs& args, const ProfileResult& r) {
  const ProfileOptions& o = args.options;
  std::cout << fmt::format("ltsim profile   seed {}   f: {}   g: {}\n", o.seed, args.f, args.g);
  std::cout << fmt::format("  joint view: S = {}, Δ* = {}, τ* = {}\n\n", r.view.alphabet,
                           r.view.period, r.view.locality);
  std::cout << fmt::format("  {:>10}  {:>14}  {:>14}\n", "T", "max |f-g| >=", "max |f-g| <=");
  // Every length up to n is in the JSON; the table shows n's neighbourhood and the grid.
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    const ProfilePoint& p = r.points[i];
    const bool train = p.length <= o.train_length;
    if (train && p.length > 8 && p.length + 4 <= o.train_length && p.length % 16 != 0) continue;
    std::cout << fmt::format("  {:>10}  {:>14}  {:>14}{}\n", p.length, Show(p.lower), Show(p.upper),
                             p.length == o.train_length ? "   ← n" : "");
  }
  std::cout << "\n  (>=: attained by a string of that length; <=: certified for every string)\n";
  if (o.train_length > 0)
    std::cout << fmt::format("  ε_train(n = {}) = max over T ≤ n:     [{}, {}]\n", o.train_length,
                             Show(r.train_lower), Show(r.train_upper));
  std::cout << fmt::format(
      "  sup over every length:             [{}, {}]   ({}, {} certify runs)\n", Show(r.sup_lower),
      Show(r.sup_upper), r.sup_status, r.certify_runs);
  if (!r.sup_witness.empty())
    std::cout << fmt::format("  attained by: {}\n", RunLengthText(r.sup_witness));
  else if (r.sup_witness_length > 0)
    std::cout << fmt::format("  attained by a string of length {}\n", r.sup_witness_length);
  if (o.train_length > 0)
    std::cout << fmt::format("  ratio sup / ε_train:               [{}, {}]\n", Show(r.ratio_lower),
                             Show(r.ratio_upper));
}

}  // namespace

void AddProfileCommand(CLI::App& app) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile",
      "One-layer pairs: the largest gap at each length, over the training lengths (ε_train) and "
      "over every length, and their ratio; every number a certified bracket.");
  SetExamples(
      cmd,
      {"ltsim profile corpus/families/bump_s2.71_period2/f.json "
       "corpus/families/bump_s2.71_period2/g.json --train-length 16 --max-length 1000",
       "ltsim profile corpus/families/bump_s2.71_period2/f.json "
       "corpus/families/bump_s2.71_period2/g.json --max-length 200 --points 8 --json"},
      fmt::format(
          "Each length T of the grid (every T ≤ n, then --points lengths up to N evenly in log) "
          "gets [attained, certified] bounds on max over strings of length T of |f - g|, from "
          "the exact threshold run at T alone (docs/theory.md §14.1). The supremum over every "
          "length is bracketed by bisection with `certify` (docs/theory.md §14.2), until its "
          "width is ≤ max(--tolerance·lower, 1e-9). ratio = sup / ε_train as a bracket. "
          "--out-dir DIR writes profile.json, profile.csv and profile.png (gap against length, "
          "log x axis, n marked). Limits: n ≤ {}, N ≤ {}, certify's limits (one layer, "
          "bias_scaling none).",
          kProfileMaxTrainLength, kThresholdMaxLength));
  cmd->add_option("F", args->f, "model f (one layer)")->required();
  cmd->add_option("G", args->g, "model g (same alphabet and number of outputs)")->required();
  cmd->add_option("--train-length", args->options.train_length,
                  "n: every length 1 … n is profiled and ε_train(n) reported (0 = none)")
      ->default_val(args->options.train_length);
  cmd->add_option("--max-length", args->options.max_length, "N: the grid's last length")
      ->default_val(args->options.max_length);
  cmd->add_option("--points", args->options.points, "grid lengths in (n, N], evenly in log")
      ->default_val(args->options.points);
  cmd->add_option("--tolerance", args->options.tolerance,
                  "relative width at which the supremum's bracket stops narrowing")
      ->default_val(args->options.tolerance);
  cmd->add_option("--max-certify-runs", args->options.max_certify_runs,
                  "certify runs of the supremum's bisection")
      ->default_val(args->options.max_certify_runs);
  cmd->add_option("--max-boxes", args->options.max_boxes, "each certify run's limit-search boxes")
      ->default_val(args->options.max_boxes);
  cmd->add_option("--certify-evaluations", args->options.certify_evaluations,
                  "evaluations of each exact threshold run inside certify")
      ->default_val(args->options.certify_evaluations);
  AddSeed(cmd, args->options.seed, "printed; nothing is random");
  AddThreads(cmd, args->options.threads);
  cmd->add_option("--out-dir", args->out, "write profile.json, profile.csv and profile.png");
  cmd->add_flag("--quiet", args->quiet, "no progress on stderr");
  cmd->add_flag("--json", args->json, "print the JSON document instead of the table");
  cmd->callback([args] {
    SetCommandFlags({{"train_length", "--train-length"},
                     {"max_length", "--max-length"},
                     {"max_certify_runs", "--max-certify-runs"},
                     {"max_boxes", "--max-boxes"},
                     {"certify_evaluations", "--certify-evaluations"}});
    const Transformer f = ReadModel(args->f);
    const Transformer g = ReadModel(args->g);
    std::unique_ptr<io::OutputSet> set;
    if (!args->out.empty()) set = std::make_unique<io::OutputSet>(args->out, "profile");
    ProfileOptions options = args->options;
    std::shared_ptr<Progress> progress;
    if (!args->quiet) {
      progress = std::make_shared<Progress>("profile", "lengths");
      options.progress = [progress](std::uint64_t done, std::uint64_t total,
                                    const std::string& line) {
        progress->Update(done, total, line);
      };
    }
    const ProfileResult r = ComputeProfile(f, g, options);
    if (progress) progress->Finish();
    Report(
        ProfileJson(*args, r), Csv(r), args->json, [&] { PrintTable(*args, r); }, set.get(),
        "profile", LTSIM_PLOT_PROFILE_SCRIPT);
  });
}

}  // namespace ltsim::cli
