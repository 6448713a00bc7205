// `ltsim info MODEL`: sizes and the constants of docs/model.md §4 computed from the weights.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "help.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/model_file.h"
#include "output.h"

namespace ltsim::cli {
namespace {

struct InfoArgs {
  std::string model;
  bool json = false;
};

// The constants, computed once; the two printers only format them.
struct Info {
  double logit_margin, log2_hardmax_length, hardmax_length, lipschitz, positional_margin;
  double log_complexity;
  std::vector<HeadRegime> regimes;
  double near_tie_spread, log2_split_length;  // ϑ and log₂ T_split (docs/theory.md §2.6)
};

Info Compute(const Transformer& model) {
  const bool one_layer = model.layers.size() == 1;
  return {one_layer ? LogitMargin(model) : std::nan(""),
          one_layer ? Log2HardmaxLength(model) : std::nan(""),
          one_layer ? HardmaxLength(model) : std::nan(""),
          LipschitzConstant(model),
          PositionalMargin(model),
          LogComplexity(model),
          HeadRegimes(model),
          one_layer ? NearTieSpread(model) : std::nan(""),
          one_layer ? Log2SplitLength(model) : std::nan("")};
}

void PrintJsonInfo(const Transformer& model, const Info& info) {
  Json doc;
  doc["context"] = Context("info", 0);
  doc["name"] = model.name;
  doc["alphabet"] = model.alphabet;
  doc["width"] = model.width;
  doc["period"] = model.period;
  doc["locality"] = model.locality;
  doc["layers"] = model.layers.size();
  doc["heads"] = Json::array();
  for (const Layer& layer : model.layers) doc["heads"].push_back(layer.heads.size());
  doc["outputs"] = model.outputs();
  doc["attention"] = AttentionName(model.layers.front().attention);
  doc["logit_margin"] = Number(info.logit_margin);
  doc["hardmax_length"] = Number(info.hardmax_length);
  doc["log2_hardmax_length"] = Number(info.log2_hardmax_length);
  doc["near_tie_spread"] = Number(info.near_tie_spread);
  doc["split_length"] = Number(std::exp2(info.log2_split_length));
  doc["log2_split_length"] = Number(info.log2_split_length);
  doc["lipschitz"] = Number(info.lipschitz);
  doc["positional_margin"] = Number(info.positional_margin);
  doc["complexity"] = Number(std::exp(info.log_complexity));
  doc["log_complexity"] = Number(info.log_complexity);
  doc["regimes"] = Json::array();
  for (HeadRegime regime : info.regimes) doc["regimes"].push_back(HeadRegimeName(regime));
  // Constants over a work limit are null for that reason, not because they are ∞.
  doc["not_computed"] = Json::object();
  if (model.layers.size() == 1 && LogitMarginWork(model) > kMaxLogitMarginWork) {
    const std::string why =
        fmt::format("{:.3g} logits over the work limit of {:.3g} (docs/formats.md §6.1)",
                    LogitMarginWork(model), kMaxLogitMarginWork);
    doc["not_computed"]["logit_margin"] = why;
    doc["not_computed"]["near_tie_spread"] = why;
    if (model.layers.front().attention == Attention::kFinite) {
      doc["not_computed"]["hardmax_length"] = why;
      doc["not_computed"]["log2_hardmax_length"] = why;
      doc["not_computed"]["split_length"] = why;
      doc["not_computed"]["log2_split_length"] = why;
    }
  }
  doc["null_means"] = "∞ for margins (no positive gap); not applicable otherwise";
  PrintJson(doc);
}

void PrintTextInfo(const Transformer& model, const Info& info) {
  std::cout << fmt::format("model            {}\n", model.name);
  std::cout << fmt::format(
      "sizes            S = {}, d = {}, Δ = {}, τ = {}, layers = {}, outputs = {}\n",
      model.alphabet, model.width, model.period, model.locality, model.layers.size(),
      model.outputs());
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const Layer& layer = model.layers[l];
    std::cout << fmt::format("layer {}          {}, {}{}, bias scaling {}, {}\n", l + 1,
                             Plural(layer.heads.size(), "head"), AttentionName(layer.attention),
                             layer.attention == Attention::kFinite
                                 ? fmt::format(" (p = {})", layer.precision_bits)
                                 : std::string(),
                             BiasScalingName(layer.bias_scaling), layer.mlp ? "MLP" : "no MLP");
  }
  std::cout << fmt::format("logit margin γ   {}\n", Show(info.logit_margin));
  // T_hard exists only for one-layer `finite` models; say why it is missing instead of "n/a".
  if (std::isnan(info.log2_hardmax_length)) {
    std::cout << fmt::format(
        "hardmax length   none ({})\n",
        model.layers.size() != 1 ? "defined for one-layer models only" : "not a `finite` model");
  } else {
    std::cout << fmt::format("hardmax length   {} (log2 = {})\n", Show(info.hardmax_length),
                             Show(info.log2_hardmax_length));
  }
  // Near-ties (0 < gap ≤ θ) make `finite` differ from hardmax past T_hard (docs/theory.md §2.6).
  if (info.near_tie_spread > 0 && !std::isnan(info.log2_split_length)) {
    std::cout << fmt::format(
        "near ties ϑ      {} ≤ θ = {}: finite differs from hardmax by ‖Δα‖₁ ≤ 2·tanh(ϑ·ln T/4) "
        "for T_hard ≤ T < T_split = {} (log2 = {}); no bound from T_split on\n",
        Show(info.near_tie_spread), Show(model.tie_tolerance),
        Show(std::exp2(info.log2_split_length)), Show(info.log2_split_length));
  }
  std::cout << fmt::format("Lipschitz L(f)   {}\n", Show(info.lipschitz));
  std::cout << fmt::format("positional γ_pos {}\n", Show(info.positional_margin));
  std::cout << fmt::format("complexity C(f)  {} (ln = {})\n", Show(std::exp(info.log_complexity)),
                           Show(info.log_complexity));
  std::string regimes;
  for (HeadRegime regime : info.regimes)
    regimes += std::string(regimes.empty() ? "" : ", ") + HeadRegimeName(regime);
  std::cout << fmt::format("head regimes     {}\n", regimes.empty() ? "(no heads)" : regimes);
}

}  // namespace

void AddInfoCommand(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd =
      app.add_subcommand("info", "Print a model's sizes and constants (γ, T_hard, L, γ_pos).");
  cmd->add_option("MODEL", args->model, "model file (ltsim-model JSON)")->required();
  cmd->add_flag("--json", args->json, "print as JSON (null = ∞ or not applicable)");
  SetExamples(cmd, {"ltsim info corpus/models/pair/g.json",
                    "ltsim info corpus/models/kgram_S3_k2.json --json"});
  cmd->callback([args] {
    const Transformer model = ReadModel(args->model);
    const Info info = Compute(model);
    args->json ? PrintJsonInfo(model, info) : PrintTextInfo(model, info);
  });
}

}  // namespace ltsim::cli
