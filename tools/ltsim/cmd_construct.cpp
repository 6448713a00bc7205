// `ltsim construct TASK`: write the paper's tasks as constructed limit transformers (docs/theory.md
// §5–6).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.h"
#include "ltsim/core/error.h"
#include "ltsim/construct/kgram.h"
#include "ltsim/model/model_file.h"
#include "ltsim/construct/tasks.h"

namespace ltsim::cli {
namespace {

struct ConstructArgs {
  double omega = 1.0;
  double accuracy = 1e-3;
  int p = 2;
  int k = 0;
  int precision_bits = 0;
  KGramOptions kgram;
  std::string no_match = "most-matches";
  std::string out;
};

void Write(const Transformer& model, const std::string& out) {
  WriteModel(model, out);
  std::cout << fmt::format("wrote {} ({})\n", out, model.name);
}

// `kgram`: the two-layer in-context k-gram model; MakeKGram records the options in `meta`.
void AddKGram(CLI::App& construct, const std::shared_ptr<ConstructArgs>& args) {
  CLI::App* kgram = construct.add_subcommand(
      "kgram",
      "In-context k-gram (docs/theory.md §5): two layers, k copy heads and a matching head.");
  kgram->add_option("--alphabet", args->kgram.alphabet, "alphabet size S")
      ->required()
      ->check(CLI::Range(1, kMaxAlphabet));
  kgram->add_option("--k", args->kgram.k, "context length k")->required()->check(CLI::Range(1, 64));
  kgram->add_option("--scale", args->kgram.scale, "second-layer logit β per matching slot")
      ->default_val(8.0);
  kgram->add_option("--no-match", args->no_match, "policy when the context never occurred")
      ->default_val("most-matches")
      ->check(CLI::IsMember({"most-matches", "uniform"}));
  kgram
      ->add_option("--copy-bias", args->kgram.copy_bias, "φ of the copy heads (> 1; γ_pos = φ − 1)")
      ->default_val(2.0);
  kgram->add_flag("--sharpen", args->kgram.sharpen,
                  "first-layer MLP rounding each copy to an exact one-hot");
  kgram->add_option("--out", args->out, "model file to write")->required();
  kgram->callback([args] {
    args->kgram.no_match = ParseNoMatchPolicy(args->no_match);
    Write(MakeKGram(args->kgram), args->out);
  });
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
  AddKGram(*cmd, args);
}

}  // namespace ltsim::cli
