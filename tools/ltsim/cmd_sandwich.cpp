// `ltsim sandwich F G STRING`: |f(x)−f(z)|, |g(x)−g(z)|, |f(z)−g(z)| and the triangle bound.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "help.h"
#include "ltsim/model/model_file.h"
#include "method_options.h"
#include "output.h"
#include "progress.h"

namespace ltsim::cli {
namespace {

struct SandwichArgs {
  std::string f, g, string;
  SandwichOptions options;
  ZLengthOptions z_length;
  std::string out;
  bool json = false;
};

Json Constants(const SandwichResult& r) {
  Json c;
  c["lipschitz_f"] = Number(r.f.lipschitz);
  c["lipschitz_g"] = Number(r.g.lipschitz);
  c["logit_margin_f"] = Number(r.f.logit_margin);
  c["logit_margin_g"] = Number(r.g.logit_margin);
  c["log2_hardmax_length_f"] = Number(r.f.log2_hardmax_length);
  c["log2_hardmax_length_g"] = Number(r.g.log2_hardmax_length);
  c["eta"] = Number(r.simulation.eta);
  c["eta_achieved_f"] = Number(r.f.eta_achieved);
  c["eta_achieved_g"] = Number(r.g.eta_achieved);
  c["theta"] = Number(r.simulation.theta);
  c["certified_sim_f"] = Number(r.f.certified_sim);
  c["certified_sim_g"] = Number(r.g.certified_sim);
  return c;
}

// gap_z + the two certified bounds on sim: (L_f + L_g)·η for one layer, B(f) + B(g) of
// docs/theory.md §4.7 for two (NaN when either side has none).
double CertifiedBound(const SandwichResult& r) {
  return r.gap_z + r.f.certified_sim + r.g.certified_sim;
}

// Two-layer pairs: the conclusion from the certified bound B of docs/theory.md §4.7.
std::string TwoLayerConclusion(const SandwichResult& r) {
  const std::string z = Thousands(r.z_length) + "-token z";
  const std::string x = Thousands(r.x_length) + "-token x";
  const double bound = CertifiedBound(r);
  if (std::isnan(bound)) {
    const std::string why =
        !r.f.two_layer.reason.empty() ? r.f.two_layer.reason : r.g.two_layer.reason;
    return fmt::format(
        "conclusion: no certified two-layer bound for this pair ({}); the models differ by {} on "
        "z and by {} on x",
        why, Show(r.gap_z), Show(r.gap_x));
  }
  return fmt::format(
      "conclusion: |f(x) - g(x)| ≤ |f(z) - g(z)| + B_f + B_g = {} + {} + {} = {} on the {}, with "
      "B the certified two-layer bound (docs/theory.md §4.7) computed from the first-layer states "
      "of x and of the {}; {}; measured on x: {}{}",
      Show(r.gap_z), Show(r.f.certified_sim), Show(r.g.certified_sim), Show(bound), x, z,
      r.rate_holds ? "sim ≤ B held for both models"
                   : "but sim ≤ B FAILED, so this is not certified",
      Show(r.gap_x), r.gap_x <= bound ? "" : " (ABOVE the bound)");
}

// The one-line conclusion in words (README "What the demo prints").
std::string Conclusion(const SandwichResult& r) {
  if (r.f.two_layer.reason.size() + r.g.two_layer.reason.size() > 0 ||
      !std::isnan(r.f.two_layer.bound) || !std::isnan(r.g.two_layer.bound))
    return TwoLayerConclusion(r);
  const std::string z = Thousands(r.z_length) + "-token z";
  const std::string x = Thousands(r.x_length) + "-token x";
  if (std::isnan(r.simulation.eta)) {
    return fmt::format(
        "conclusion: {} claims no η, so the {} certifies nothing about the {}: the models differ "
        "by {} on z and by {} on x (the sandwich {} needs f(x) and g(x) themselves)",
        r.method, z, x, Show(r.gap_z), Show(r.gap_x), Show(r.f.sim + r.gap_z + r.g.sim));
  }
  const double bound = CertifiedBound(r);
  if (std::isnan(bound)) {
    return fmt::format(
        "conclusion: the construction claims η = {}, but L is not available for these models, "
        "so the {} gives no certified bound on the {} (measured |f(x) - g(x)| = {})",
        Show(r.simulation.eta), z, x, Show(r.gap_x));
  }
  return fmt::format(
      "conclusion: from the {} alone, |f(x) - g(x)| ≤ |f(z) - g(z)| + (L_f + L_g)·η = {} + {} = "
      "{} on the {} ({}); measured on x: {}{}",
      z, Show(r.gap_z), Show(bound - r.gap_z), Show(bound), x,
      r.rate_holds ? "the rate sim ≤ L·η held for both models, as the construction certifies"
                   : "but the rate sim ≤ L·η FAILED, so this bound is not certified here",
      Show(r.gap_x), r.gap_x <= bound ? "" : " (ABOVE the bound)");
}

Json SandwichJson(const SandwichArgs& args, const SandwichResult& r) {
  Json doc;
  doc["context"] = Context("sandwich", args.options.seed);
  doc["f_x"] = Array(r.f.on_x);
  doc["g_x"] = Array(r.g.on_x);
  doc["f_z"] = Array(r.f.on_z);
  doc["g_z"] = Array(r.g.on_z);
  doc["sim_f"] = Number(r.f.sim);
  doc["sim_g"] = Number(r.g.sim);
  doc["gap_z"] = Number(r.gap_z);
  doc["gap_x"] = Number(r.gap_x);
  doc["x_length"] = r.x_length;
  doc["z_length"] = r.z_length;
  doc["method"] = r.method;
  doc["constants"] = Constants(r);
  doc["holds"] = r.holds;
  doc["rate_holds"] = r.rate_holds;
  doc["detail"] = r.simulation.detail;
  doc["certified_bound"] = Number(CertifiedBound(r));
  const auto parts = [](const ModelSide& side) {
    Json j;
    const TwoLayerBound& b = side.two_layer;
    j["bound"] = Number(b.bound);
    j["reason"] = b.reason;
    j["output_factor"] = Number(b.output_factor);
    j["last_position"] = Number(b.last_position);
    j["last_window_matches"] = b.last_window_matches;
    j["transport"] = Number(b.transport);
    j["unmatched"] = Number(b.unmatched);
    j["query"] = Number(b.query);
    j["unmatched_mass"] = Number(b.unmatched_mass);
    return j;
  };
  if (!std::isnan(r.f.two_layer.bound) || !r.f.two_layer.reason.empty()) {
    doc["two_layer_bound_f"] = parts(r.f);
    doc["two_layer_bound_g"] = parts(r.g);
  }
  doc["conclusion"] = Conclusion(r);
  return doc;
}

// sandwich.csv: one row per term of the sandwich, with the certified bound where one is claimed.
std::string Csv(const SandwichResult& r) {
  std::string csv = "quantity,value\n";
  const auto row = [&csv](const std::string& name, double v) {
    csv += fmt::format("{},{}\n", name, std::isfinite(v) ? fmt::format("{:.17g}", v) : "");
  };
  row("sim_f", r.f.sim);
  row("gap_z", r.gap_z);
  row("sim_g", r.g.sim);
  row("gap_x", r.gap_x);
  row("certified_sim_f", r.f.certified_sim);
  row("certified_sim_g", r.g.certified_sim);
  row("certified_bound", CertifiedBound(r));
  return csv;
}

void Row(const std::string& label, const std::string& f, const std::string& g) {
  std::cout << fmt::format("  {:<26} {:>16} {:>16}\n", label, f, g);
}

// One row per output coordinate, so vector outputs keep the columns.
void Rows(const std::string& label, const Vector& f, const Vector& g) {
  if (f.size() == 1 && g.size() == 1) return Row(label, Show(f[0]), Show(g[0]));
  for (Eigen::Index k = 0; k < std::max(f.size(), g.size()); ++k)
    Row(fmt::format("{} [{}]", label, k), k < f.size() ? Show(f[k]) : "",
        k < g.size() ? Show(g[k]) : "");
}

void PrintTable(const SandwichArgs& args, const SandwichResult& r) {
  std::cout << fmt::format("ltsim sandwich   seed {}   method {}\n", args.options.seed, r.method);
  std::cout << fmt::format("  x: {}  (T = {})\n", ShownString(args.string, args.options.seed),
                           r.x_length);
  std::cout << fmt::format("  z: |z| = {} (target {}); {}\n\n", r.z_length, args.options.length,
                           r.simulation.detail);
  Row("", "f", "g");
  Rows("output on x", r.f.on_x, r.g.on_x);
  Rows("output on z", r.f.on_z, r.g.on_z);
  Row("sim = |.(x) - .(z)|", Show(r.f.sim), Show(r.g.sim));
  Row("Lipschitz L", Show(r.f.lipschitz), Show(r.g.lipschitz));
  Row("logit margin γ", Show(r.f.logit_margin), Show(r.g.logit_margin));
  Row("attention distance η(x,z)", Show(r.f.eta_achieved), Show(r.g.eta_achieved));
  Row("L·η (construction's η)", Show(r.f.lipschitz * r.simulation.eta),
      Show(r.g.lipschitz * r.simulation.eta));
  Row("certified bound on sim", Show(r.f.certified_sim), Show(r.g.certified_sim));
  std::cout << "\n";
  std::cout << fmt::format("  gap on z  |f(z) - g(z)| = {}\n", Show(r.gap_z));
  std::cout << fmt::format("  gap on x  |f(x) - g(x)| = {}  ≤  sim_f + gap_z + sim_g = {}   {}\n",
                           Show(r.gap_x), Show(r.f.sim + r.gap_z + r.g.sim),
                           r.holds ? "holds" : "FAILS");
  const bool two = !std::isnan(r.f.two_layer.bound) || !r.f.two_layer.reason.empty();
  if (two) {
    std::cout << fmt::format("  rate      sim ≤ B (two-layer bound) for both models: {}\n",
                             std::isnan(r.f.certified_sim + r.g.certified_sim) ? "no bound"
                             : r.rate_holds                                    ? "holds"
                                                                               : "FAILS");
  } else {
    std::cout << fmt::format("  rate      sim ≤ L·η for both models: {}\n",
                             std::isnan(r.simulation.eta) ? "no η claimed by this method"
                             : r.rate_holds               ? "holds"
                                                          : "FAILS");
  }
  std::cout << "\n" << Conclusion(r) << "\n";
}

void RunSandwichCommand(const SandwichArgs& args) {
  RequireZLength(args.z_length);
  const Transformer f = ReadModel(args.f);
  const Transformer g = ReadModel(args.g);
  CheckPair(f, g, args.f, args.g);
  auto progress = std::make_shared<Progress>("sandwich", "tokens");
  const auto x = WithProgress(OpenSource(args.string, args.options.seed), progress);
  // --out-dir locked and checked before any work, written as one set (io/output_dir.h).
  std::unique_ptr<io::OutputSet> set;
  if (!args.out.empty()) set = std::make_unique<io::OutputSet>(args.out, "sandwich");
  const SandwichResult result = RunSandwich(f, g, *x, args.options);
  progress->Finish();
  Report(
      SandwichJson(args, result), Csv(result), args.json, [&] { PrintTable(args, result); },
      set.get(), "sandwich", LTSIM_PLOT_SANDWICH_SCRIPT);
}

}  // namespace

void AddSandwichCommand(CLI::App& app) {
  auto args = std::make_shared<SandwichArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sandwich", "Build z from x and check |f(x)-g(x)| ≤ sim_f + |f(z)-g(z)| + sim_g.");
  cmd->add_option("F", args->f, "target model f")->required();
  cmd->add_option("G", args->g, "learned model g")->required();
  cmd->add_option("STRING", args->string, kStringHelp)->required();
  args->z_length = AddMethodOptions(cmd, args->options);
  cmd->add_option("--out-dir", args->out,
                  "write sandwich.json, sandwich.csv and sandwich.png (the three terms against "
                  "|f(x) - g(x)| and the certified bound)");
  cmd->add_flag("--json", args->json, "print every number as JSON");
  SetExamples(cmd, {"ltsim sandwich corpus/models/pair/f.json corpus/models/pair/g.json "
                    "corpus/strings/default.txt --z-length 2000",
                    "ltsim sandwich corpus/models/pair/f.json corpus/models/pair/g.json "
                    "corpus/strings/default.txt --method truncate --z-length 2000"});
  cmd->callback([args] { RunSandwichCommand(*args); });
}

}  // namespace ltsim::cli
