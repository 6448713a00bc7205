// `ltsim construct TASK`: write the paper's tasks as constructed limit transformers (docs/theory.md
// §5–6).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "commands.h"
#include "help.h"
#include "ltsim/construct/families.h"
#include "ltsim/construct/kgram.h"
#include "ltsim/construct/tasks.h"
#include "ltsim/core/error.h"
#include "ltsim/io/output_dir.h"
#include "ltsim/io/output_file.h"
#include "ltsim/model/model_file.h"
#include "output.h"

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
  bool json = false;
};

void Write(const Transformer& model, const std::string& out, bool json) {
  WriteModel(model, out);
  if (json) {
    Json doc;
    doc["context"] = Context("construct", 0);
    doc["out"] = out;
    doc["name"] = model.name;
    doc["layers"] = model.layers.size();
    PrintJson(doc);
    return;
  }
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
  kgram->add_flag("--json", args->json, "print what was written as JSON");
  SetExamples(kgram, {"ltsim construct kgram --alphabet 3 --k 2 --out kgram.json"});
  kgram->callback([args] {
    args->kgram.no_match = ParseNoMatchPolicy(args->no_match);
    Write(MakeKGram(args->kgram), args->out, args->json);
  });
}

// `family NAME`: a lower-bound family member as two model files (docs/families.md). Every
// parameter of every family is an option; one that NAME does not have is refused.
struct FamilyArgs {
  std::string name;
  std::map<std::string, std::optional<double>> values;
  std::string out_dir, out_f, out_g;
  bool list = false;
  bool json = false;
};

void ListFamilies() {
  for (const Family& family : Families()) {
    std::cout << fmt::format("{}: {}\n  T* grows with: {}\n", family.name, family.summary,
                             family.parameters);
    for (const FamilyParameter& p : family.params)
      std::cout << fmt::format("  --{} (default {}, in {}{}): {}\n", p.name, p.default_value,
                               RangeText(p), p.integer ? ", integer" : "", p.help);
  }
}

void RunFamily(const FamilyArgs& args) {
  if (args.list) return ListFamilies();
  if (args.name.empty()) throw InputError("construct family: NAME is required (or --list)");
  const bool dir = !args.out_dir.empty(), pair = !args.out_f.empty() || !args.out_g.empty();
  if (dir == pair || (pair && (args.out_f.empty() || args.out_g.empty())))
    throw InputError("construct family: give --out-dir DIR, or both --out-f F and --out-g G");
  // One file named twice (also as two spellings of one path) would lose f.
  if (pair && io::SameFile(args.out_f, args.out_g))
    throw InputError("--out-g " + args.out_g + ": is the same file as --out-f " + args.out_f +
                     "; give two files");
  // The directory's f.json and g.json are one set: locked, checked and staged before the
  // member is built, swapped in whole (io/output_dir.h).
  std::unique_ptr<io::OutputSet> set;
  if (dir) set = std::make_unique<io::OutputSet>(args.out_dir, "construct family");
  FamilyValues values;
  for (const auto& [key, value] : args.values)
    if (value) values[key] = *value;
  const FamilyMember member = BuildFamilyMember(args.name, values);
  std::string f_path = args.out_f, g_path = args.out_g;
  if (set) {
    WriteModel(member.f, (std::filesystem::path(set->staging()) / "f.json").string());
    WriteModel(member.g, (std::filesystem::path(set->staging()) / "g.json").string());
    set->Commit();
    f_path = (std::filesystem::path(set->dir()) / "f.json").string();
    g_path = (std::filesystem::path(set->dir()) / "g.json").string();
  } else {
    WriteModel(member.f, f_path);
    WriteModel(member.g, g_path);
  }
  // T* = 0 means the family claims no closed form (two-layer-margin): nothing to certify. The
  // average-bump pair's T* is the first average disagreement, which `ltsim average` decides under
  // its Dirichlet prior; every other T* is a worst-case one, which `ltsim threshold` decides.
  const bool derived = member.first_disagreement > 0;
  std::string certify;
  if (derived && args.name == "average-bump")
    certify = fmt::format("ltsim average {} {} --alpha {} --max-length {} --eps {}", f_path, g_path,
                          member.values.at("alpha"), member.first_disagreement, member.eps);
  else if (derived)
    certify = fmt::format("ltsim threshold {} {} --eps {} --max-length {}", f_path, g_path,
                          member.eps, member.first_disagreement);
  if (args.json) {
    Json doc;
    doc["context"] = Context("construct family", 0);
    doc["family"] = args.name;
    doc["f"] = f_path;
    doc["g"] = g_path;
    doc["eps"] = member.eps;
    doc["first_disagreement"] = derived ? Json(member.first_disagreement) : Json(nullptr);
    doc["closed_form"] = member.closed_form;
    doc["gap_at_first_disagreement"] = Number(member.gap_at_first_disagreement);
    doc["sup_gap"] = Number(member.sup_gap);
    doc["certify"] = derived ? Json(certify) : Json(nullptr);
    PrintJson(doc);
    return;
  }
  // A value the family does not derive (NaN, or T* = 0) is printed as "not derived".
  const auto shown = [](double v) {
    return std::isnan(v) ? std::string("not derived") : fmt::format("{:.6g}", v);
  };
  std::cout << fmt::format("wrote {} and {} ({}, eps = {})\n", f_path, g_path, args.name,
                           member.eps);
  std::cout << fmt::format(
      "closed-form first disagreement T* = {}; gap at T* = {}, sup gap = {}\n",
      derived ? fmt::format("{} ({})", member.first_disagreement, member.closed_form)
              : std::string("not derived"),
      shown(member.gap_at_first_disagreement), shown(member.sup_gap));
  if (derived)
    std::cout << "certify it: " << certify << "\n";
  else
    std::cout << "no certify line: T* is not derived for this family (docs/tightness.md §5)\n";
}

void AddFamily(CLI::App& construct) {
  auto args = std::make_shared<FamilyArgs>();
  CLI::App* cmd = construct.add_subcommand(
      "family",
      "A lower-bound family member (docs/families.md): two models (one or two layers) whose "
      "first disagreement T* has a closed form, written as F and G with `meta` recording the "
      "family, its parameters, eps and T*. `--list` prints every family and its parameters.");
  SetExamples(
      cmd,
      {"ltsim construct family --list",
       "ltsim construct family bump --slope 8 --eps 0.05 --period 2 --out-dir fam/bump",
       "ltsim construct family nested --slope 0.43 --eps 0.05 --out-f f.json --out-g g.json "
       "--json",
       "ltsim construct family precision --bits 4 --gamma 0.5 --out-dir fam/precision"},
      "The printed `ltsim threshold` line certifies T* (`ltsim average` for average-bump, whose T* "
      "is the first average disagreement; none where T* is not derived).");
  cmd->add_option("NAME", args->name, "family name (`--list` prints them)");
  cmd->add_flag("--list", args->list, "print the families and their parameters");
  std::set<std::string> seen;
  for (const Family& family : Families())
    for (const FamilyParameter& p : family.params) {
      if (!seen.insert(p.name).second) continue;
      args->values[p.name] = std::nullopt;
      cmd->add_option("--" + p.name, args->values[p.name],
                      p.help + " (family " + family.name + ")");
    }
  cmd->add_option("--out-dir", args->out_dir, "directory to write f.json and g.json into");
  cmd->add_option("--out-f", args->out_f, "model file of f (with --out-g)");
  cmd->add_option("--out-g", args->out_g, "model file of g (with --out-f)");
  cmd->add_flag("--json", args->json, "print what was written as JSON");
  cmd->callback([args] { RunFamily(*args); });
}

}  // namespace

void AddConstructCommand(CLI::App& app) {
  auto args = std::make_shared<ConstructArgs>();
  CLI::App* cmd = app.add_subcommand(
      "construct", "Write a constructed model: a paper task or a lower-bound family.");
  cmd->require_subcommand(1);
  SetExamples(cmd, {"ltsim construct modp-task --p 2 --k 1 --out odd.json",
                    "ltsim construct kgram --alphabet 2 --k 1 --out kgram.json"});
  CLI::App* simple = cmd->add_subcommand(
      "simple-task", "SimpleTask(ω): sin(ω·(c0 − c1)/(c0 + c1)), one hardmax layer and an MLP.");
  simple->add_option("--omega", args->omega, "frequency ω")->required()->check(CLI::PositiveNumber);
  simple->add_option("--accuracy", args->accuracy, "largest error of the sine interpolation")
      ->default_val(1e-3)
      ->check(CLI::PositiveNumber);
  simple->add_option("--out", args->out, "model file to write")->required();
  simple->add_flag("--json", args->json, "print what was written as JSON");
  SetExamples(simple, {"ltsim construct simple-task --omega 4 --out simple.json"});
  simple->callback([args] {
    Transformer model = MakeSimpleTask(args->omega, args->accuracy);
    model.meta_json = fmt::format(R"({{"task":"simple-task","omega":{},"accuracy":{}}})",
                                  args->omega, args->accuracy);
    Write(model, args->out, args->json);
  });
  CLI::App* modp = cmd->add_subcommand(
      "modp-task", "ModPTask(p, k): the share of 1s among positions ≡ k (mod p).");
  modp->add_option("--p", args->p, "period p")->required()->check(CLI::Range(1, 1000));
  modp->add_option("--k", args->k, "residue k in [0, p)")
      ->required()
      ->check(CLI::NonNegativeNumber);
  modp->add_option("--precision", args->precision_bits,
                   "0: hardmax; p > 0: finite attention with p bits")
      ->default_val(0)
      ->check(CLI::Range(0, 64));
  AddDeprecated(modp, "--precision-bits", args->precision_bits, "--precision")
      ->check(CLI::Range(0, 64));
  modp->add_option("--out", args->out, "model file to write")->required();
  modp->add_flag("--json", args->json, "print what was written as JSON");
  SetExamples(modp, {"ltsim construct modp-task --p 3 --k 1 --out modp.json",
                     "ltsim construct modp-task --p 5 --k 0 --precision 8 --out modp8.json"});
  modp->callback([args] {
    if (args->k >= args->p)
      throw InputError(fmt::format("--k: {} is not a residue modulo --p {}", args->k, args->p));
    Transformer model = MakeModPTask(args->p, args->k, args->precision_bits);
    model.meta_json = fmt::format(R"({{"task":"modp-task","p":{},"k":{},"precision_bits":{}}})",
                                  args->p, args->k, args->precision_bits);
    Write(model, args->out, args->json);
  });
  AddKGram(*cmd, args);
  AddFamily(*cmd);
}

}  // namespace ltsim::cli
