// `ltsim constants F [G]`: the registry's bounds and user bound expressions at a model's constants.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "help.h"
#include "ltsim/bounds/registry.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/core/error.h"
#include "ltsim/model/model_file.h"
#include "output.h"

namespace ltsim::cli {
namespace {

struct ConstantsArgs {
  std::string f, g;
  double eps = 0.1, n = 1000, length = 0, alpha0 = 1, lipschitz_g = 1;
  std::vector<std::string> sets, bounds;
  bool json = false;
};

// One evaluated bound: registry entries and user expressions alike.
struct Row {
  std::string name, formula, source;
  double value;
};

// "NAME=VALUE" → constants[NAME] = VALUE; strict (docs/design.md §3).
void ApplySet(const std::string& text, ConstantMap& constants) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set '" + text + "': expected NAME=VALUE");
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text.substr(eq + 1), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() - eq - 1 || !std::isfinite(value))
    throw InputError("--set '" + text + "': VALUE must be a finite number");
  constants[text.substr(0, eq)] = value;
}

// The flags' ranges (the numbers are finite already: strict_numbers.h).
void CheckArgs(const ConstantsArgs& args) {
  if (!(args.eps > 0 && args.eps < 1))
    throw InputError(fmt::format("--eps: must be in (0, 1), not {}", args.eps));
  if (!(args.n >= 1))
    throw InputError(fmt::format("--z-length: must be at least 1, not {}", args.n));
  if (args.length < 0)
    throw InputError(fmt::format("--x-length: must be positive (0: n), not {}", args.length));
  if (!(args.alpha0 > 0))
    throw InputError(fmt::format("--alpha0: must be positive, not {}", args.alpha0));
  if (args.lipschitz_g < 0)
    throw InputError(fmt::format("--G-bound: must be ≥ 0, not {}", args.lipschitz_g));
}

ConstantMap Constants(const ConstantsArgs& args) {
  CheckArgs(args);
  const Transformer f = ReadModel(args.f);
  ConstantMap c;
  if (args.g.empty()) {
    c = ModelConstants(f);
  } else {
    const Transformer g = ReadModel(args.g);
    // Different alphabets named by file (the output counts may differ here).
    if (f.alphabet != g.alphabet) CheckPair(f, g, args.f, args.g);
    c = PairConstants(f, g);
  }
  c["eps"] = args.eps;
  c["n"] = args.n;
  c["T"] = args.length > 0 ? args.length : args.n;
  c["alpha0"] = args.alpha0;
  c["G"] = args.lipschitz_g;
  for (const std::string& set : args.sets) ApplySet(set, c);
  return c;
}

std::vector<Row> Evaluate(const ConstantsArgs& args, const ConstantMap& c) {
  std::vector<Row> rows;
  for (const Bound& bound : BoundRegistry())
    rows.push_back({bound.name, bound.formula, bound.source, bound.value(c)});
  for (const std::string& expression : args.bounds) {
    double value = 0.0;
    try {
      value = EvaluateBoundExpression(expression, c);
    } catch (const OptionError& e) {
      // The command line names the flag and, for an unknown constant, how to add one.
      std::string message = FlagMessage(e);
      if (message.find("unknown variable") != std::string::npos && message.ends_with(")"))
        message.insert(message.size() - 1, "; add it with --set NAME=VALUE");
      throw InputError(message);
    }
    // A user bound that is not a finite number (1/0, a NaN constant) says nothing: refused.
    if (!std::isfinite(value))
      throw InputError(
          fmt::format("--bound '{}': evaluates to {}, not a finite number", expression, value));
    rows.push_back({"user", expression, "[user]", value});
  }
  return rows;
}

void PrintJsonConstants(const ConstantMap& c, const std::vector<Row>& rows) {
  Json doc;
  doc["context"] = Context("constants", 0);
  doc["constants"] = Json::object();
  for (const auto& [name, value] : c) doc["constants"][name] = Number(value);
  doc["bounds"] = Json::array();
  for (const Row& row : rows)
    doc["bounds"].push_back({{"name", row.name},
                             {"formula", row.formula},
                             {"source", row.source},
                             {"value", Number(row.value)}});
  doc["null_means"] = "∞ or not applicable (e.g. L for a two-layer model)";
  PrintJson(doc);
}

void PrintTextConstants(const ConstantMap& c, const std::vector<Row>& rows) {
  std::string line;
  for (const auto& [name, value] : c)
    line += fmt::format("{}{} = {}", line.empty() ? "" : ", ", name, Show(value));
  std::cout << "constants  " << line << "\n\n";
  std::cout << fmt::format("{:<18} {:<8} {:>14}  {}\n", "bound", "source", "value", "formula");
  for (const Row& row : rows)
    std::cout << fmt::format("{:<18} {:<8} {:>14}  {}\n", row.name, row.source, Show(row.value),
                             row.formula);
  std::cout << "\nO(·) constants and polynomial factors are 1 (see docs/formats.md §3.5).\n";
}

}  // namespace

void AddConstantsCommand(CLI::App& app) {
  auto args = std::make_shared<ConstantsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "constants",
      "Evaluate the paper's bounds (Thm 4.1, 4.2, 5.2, Lemma 5.3) and user bound "
      "expressions at a model's (or a pair's) constants.");
  cmd->add_option("F", args->f, "model file (the target f)")->required();
  cmd->add_option("G", args->g, "second model file (g); constants of the pair");
  cmd->add_option("--eps", args->eps, "ε (default 0.1)");
  cmd->add_option("--z-length", args->n, "the short length n = |z| (default 1000)");
  AddDeprecated(cmd, "--n", args->n, "--z-length");
  cmd->add_option("--x-length", args->length, "the long length T = |x| (default n)");
  AddDeprecated(cmd, "--T", args->length, "--x-length");
  cmd->add_option("--alpha0", args->alpha0, "α₀ of Thm 4.2's Dirichlet prior (default 1)");
  cmd->add_option("--G-bound", args->lipschitz_g, "G of Lemma 5.3 (default 1)");
  cmd->add_option("--set", args->sets, "an extra or overriding constant NAME=VALUE");
  cmd->add_option("--bound", args->bounds, "a bound expression over the constants (muParser)");
  cmd->add_flag("--json", args->json, "print as JSON (null = ∞ or not applicable)");
  SetExamples(cmd,
              {"ltsim constants corpus/models/pair/f.json corpus/models/pair/g.json --eps 0.01 "
               "--z-length 2000 --x-length 1000355",
               "ltsim constants corpus/models/pair/f.json --bound 'C/SNR*n/T' --set SNR=4"});
  cmd->callback([args] {
    const ConstantMap c = Constants(*args);
    const std::vector<Row> rows = Evaluate(*args, c);
    args->json ? PrintJsonConstants(c, rows) : PrintTextConstants(c, rows);
  });
}

}  // namespace ltsim::cli
