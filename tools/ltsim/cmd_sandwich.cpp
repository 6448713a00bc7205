// `ltsim sandwich F G STRING`: |f(x)−f(z)|, |g(x)−g(z)|, |f(z)−g(z)| and the triangle bound.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "ltsim/model/model_file.h"
#include "method_options.h"
#include "output.h"

namespace ltsim::cli {
namespace {

struct SandwichArgs {
  std::string f, g, string;
  SandwichOptions options;
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
  return c;
}

void PrintJsonResult(const SandwichArgs& args, const SandwichResult& r) {
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
  PrintJson(doc);
}

void PrintTable(const SandwichArgs& args, const SandwichResult& r) {
  auto row = [](const std::string& label, const std::string& f, const std::string& g) {
    std::cout << fmt::format("  {:<26} {:>16} {:>16}\n", label, f, g);
  };
  std::cout << fmt::format("ltsim sandwich   seed {}   method {}\n", args.options.seed, r.method);
  std::cout << fmt::format("  x: {}  (T = {})\n", args.string, r.x_length);
  std::cout << fmt::format("  z: |z| = {} (target {}); {}\n\n", r.z_length, args.options.length,
                           r.simulation.detail);
  row("", "f", "g");
  row("output on x", Show(r.f.on_x), Show(r.g.on_x));
  row("output on z", Show(r.f.on_z), Show(r.g.on_z));
  row("sim = |.(x) - .(z)|", Show(r.f.sim), Show(r.g.sim));
  row("Lipschitz L", Show(r.f.lipschitz), Show(r.g.lipschitz));
  row("logit margin γ", Show(r.f.logit_margin), Show(r.g.logit_margin));
  row("attention distance η(x,z)", Show(r.f.eta_achieved), Show(r.g.eta_achieved));
  row("L·η (construction's η)", Show(r.f.lipschitz * r.simulation.eta),
      Show(r.g.lipschitz * r.simulation.eta));
  std::cout << "\n";
  std::cout << fmt::format("  gap on z  |f(z) - g(z)| = {}\n", Show(r.gap_z));
  std::cout << fmt::format("  gap on x  |f(x) - g(x)| = {}  ≤  sim_f + gap_z + sim_g = {}   {}\n",
                           Show(r.gap_x), Show(r.f.sim + r.gap_z + r.g.sim),
                           r.holds ? "holds" : "FAILS");
  std::cout << fmt::format("  rate      sim ≤ L·η for both models: {}\n",
                           std::isnan(r.simulation.eta) ? "no η claimed by this method"
                           : r.rate_holds               ? "holds"
                                                        : "FAILS");
}

}  // namespace

void AddSandwichCommand(CLI::App& app) {
  auto args = std::make_shared<SandwichArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sandwich", "Build z from x and check |f(x)-g(x)| ≤ sim_f + |f(z)-g(z)| + sim_g.");
  cmd->add_option("F", args->f, "target model f")->required();
  cmd->add_option("G", args->g, "learned model g")->required();
  cmd->add_option("STRING", args->string, "x: text, .u8, .u16 or iid:length=N,alphabet=S,seed=K")
      ->required();
  AddMethodOptions(cmd, args->options);
  cmd->add_flag("--json", args->json, "print every number as JSON");
  cmd->callback([args] {
    const Transformer f = ReadModel(args->f);
    const Transformer g = ReadModel(args->g);
    CheckPair(f, g, args->f, args->g);
    const auto x = OpenSource(args->string);
    const SandwichResult result = RunSandwich(f, g, *x, args->options);
    args->json ? PrintJsonResult(*args, result) : PrintTable(*args, result);
  });
}

}  // namespace ltsim::cli
