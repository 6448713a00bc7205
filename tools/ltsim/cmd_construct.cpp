// `ltsim construct TASK`: write the paper's tasks as constructed limit transformers (theory.md §6).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "ltsim/core/error.h"
#include "ltsim/model/model_file.h"
#include "ltsim/model/tasks.h"

namespace ltsim::cli {
namespace {

struct ConstructArgs {
  double omega = 1.0;
  double accuracy = 1e-3;
  int p = 2;
  int k = 0;
  int precision_bits = 0;
  std::string out;
};

void Write(const Transformer& model, const std::string& out) {
  WriteModel(model, out);
  std::cout << fmt::format("wrote {} ({})\n", out, model.name);
}

}  // namespace

void AddConstructCommand(CLI::App& app) {
  auto args = std::make_shared<ConstructArgs>();
  CLI::App* cmd = app.add_subcommand("construct", "Write a constructed model of a paper task.");
  cmd->require_subcommand(1);
  CLI::App* simple = cmd->add_subcommand(
      "simple-task", "SimpleTask(ω): sin(ω·(c0 − c1)/(c0 + c1)), one hardmax layer and an MLP.");
  simple->add_option("--omega", args->omega, "frequency ω")->required()->check(CLI::PositiveNumber);
  simple->add_option("--accuracy", args->accuracy, "largest error of the sine interpolation")
      ->default_val(1e-3)
      ->check(CLI::PositiveNumber);
  simple->add_option("--out", args->out, "model file to write")->required();
  simple->callback([args] {
    Transformer model = MakeSimpleTask(args->omega, args->accuracy);
    model.meta_json = fmt::format(R"({{"task":"simple-task","omega":{},"accuracy":{}}})",
                                  args->omega, args->accuracy);
    Write(model, args->out);
  });
  CLI::App* modp = cmd->add_subcommand(
      "modp-task", "ModPTask(p, k): the share of 1s among positions ≡ k (mod p).");
  modp->add_option("--p", args->p, "period p")->required()->check(CLI::Range(1, 1000));
  modp->add_option("--k", args->k, "residue k in [0, p)")
      ->required()
      ->check(CLI::NonNegativeNumber);
  modp->add_option("--precision-bits", args->precision_bits,
                   "0: hardmax; b > 0: finite attention with b bits")
      ->default_val(0)
      ->check(CLI::Range(0, 64));
  modp->add_option("--out", args->out, "model file to write")->required();
  modp->callback([args] {
    if (args->k >= args->p)
      throw InputError(fmt::format("--k: {} is not a residue modulo --p {}", args->k, args->p));
    Transformer model = MakeModPTask(args->p, args->k, args->precision_bits);
    model.meta_json = fmt::format(R"({{"task":"modp-task","p":{},"k":{},"precision_bits":{}}})",
                                  args->p, args->k, args->precision_bits);
    Write(model, args->out);
  });
}

}  // namespace ltsim::cli
