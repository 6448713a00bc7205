// `ltsim tightness`: lower side, upper side and paper exponent per parameter with a verdict;
// `--replay FILE` re-runs one point witness (docs/tightness.md).
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>

#include "commands.h"
#include "common_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/fuzz/recorded.h"
#include "ltsim/study/attack_witness.h"
#include "ltsim/study/point_witness.h"
#include "ltsim/study/tightness.h"
#include "ltsim/study/tightness_report.h"
#include "output.h"
#include "progress.h"
#include "replay.h"

namespace ltsim::cli {
namespace {

struct TightnessArgs {
  TightnessOptions options;
  std::string theorem = "4.1", parameters, replay, schemes, alphas0;
  CLI::Option *family_parameter = nullptr, *family_eps = nullptr;
  bool json = false, no_validate = false;
};

std::vector<std::string> SplitList(const std::string& text, const std::string& flag) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + ",") {
    if (c == ',') {
      if (item.empty()) throw InputError(flag + ": empty item in '" + text + "'");
      out.push_back(item);
      item.clear();
    } else if (c != ' ') {
      item += c;
    }
  }
  return out;
}

}  // namespace

int RunPointReplay(const std::string& path, bool json) {
  const PointWitness w = ReadPointWitness(path);
  const PointReplay r = ReplayPoint(w);
  if (json) {
    Json doc;
    doc["context"] = Context("replay", 0);
    doc["file"] = path;
    doc["kind"] = w.kind;
    doc["label"] = w.label;
    doc["recorded"] = {{"value", w.value}, {"censored", w.censored}};
    doc["replayed"] = {{"value", r.value}, {"censored", r.censored}};
    doc["format"] = "ltsim-point";
    doc["reproduced"] = r.reproduced;
    doc["differences"] = r.differences;
    doc["detail"] = r.detail;
    PrintJson(doc);
  } else {
    std::cout << fmt::format("{}: {} ({})\n  recorded {}{}, replayed {}{}: {}\n", path, w.kind,
                             w.label, w.value, w.censored ? " (censored)" : "", r.value,
                             r.censored ? " (censored)" : "",
                             r.reproduced ? "reproduced" : "DIFFERS");
    if (!r.detail.empty()) std::cout << "  " << r.detail << "\n";
    if (!r.differences.empty())
      std::cout << "  recorded results that differ: " << DifferenceSummary(r.differences) << "\n";
  }
  return r.reproduced ? kReproduced : kNotReproduced;
}

int RunAttackReplay(const std::string& path, bool json) {
  const AttackWitness w = ReadAttackWitness(path);
  const AttackReplay r = ReplayAttack(w);
  if (json) {
    Json doc;
    doc["context"] = Context("replay", 0);
    doc["file"] = path;
    doc["format"] = "ltsim-attack-point";
    doc["kind"] = "statistic-error";
    doc["label"] = w.label;
    doc["recorded"] = {{"error", w.error}, {"certified", w.certified}, {"censored", w.censored}};
    doc["replayed"] = {{"error", r.error}, {"certified", r.certified}, {"censored", r.censored}};
    doc["reproduced"] = r.reproduced;
    PrintJson(doc);
  } else {
    std::cout << fmt::format(
        "{}: statistic-error ({} at n = {}, input {})\n  recorded error {} (bound {}), replayed "
        "{} (bound {}): {}\n",
        path, w.options.method, w.options.length, InputKindName(w.input.kind), Show(w.error),
        Show(w.certified), Show(r.error), Show(r.certified),
        r.reproduced ? "reproduced" : "DIFFERS");
  }
  return r.reproduced ? kReproduced : kNotReproduced;
}

void AddTightnessCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TightnessArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tightness",
      "Per parameter of Theorem 4.1: the lower side (certified first disagreement T* of built-in "
      "families, exact thresholds), the upper side (the frequency construction's certified "
      "length), the paper's exponent, and a verdict tight / gap / contradicts / inconclusive "
      "(docs/tightness.md). --theorem 5.3: Lemma 5.3's rate, one row per subsequence scheme: "
      "the adversarial statistic error (lower side) and a transport bound on the same inputs "
      "(upper side) against n, with the lemma's -1/3 for markov. --theorem 5.2: rows eps, "
      "attention-norm (the first layer's ||M||), positional-margin (gamma_pos) and k (k-gram "
      "order) of two-layer pairs: certified T* (two-layer pairs: exhaustive only up to T = 15, "
      "so the rows say where the lower side is not yet certified), the upper side two-layer-length "
      "(balanced-blocks' proven length, docs/theory.md §4.8), the balanced-blocks simulator's "
      "needed length on found x (eps and k rows), and the registry's thm5.2 exponent "
      "(docs/tightness.md §5). --theorem 4.2: the average case's lower side, the exact average "
      "first disagreement (least T with E||f - g|| > eps under pi ~ Dir(alpha0)) of the "
      "average-bump family, per eps (one row per --alpha0) and per alpha0, against thm4.2's "
      "exponent 2 + 2/alpha0, with the later expected gap against the paper's O(eps^(1/2)) "
      "(docs/tightness.md §8).");
  SetExamples(cmd,
              {"ltsim tightness --parameters eps --points 3 --seeds 1 --no-validate",
               "ltsim tightness --parameters eps,scale --points 3 --seeds 1 --heads 1 "
               "--no-validate --threads 2",
               "ltsim tightness --parameters eps,margin --points 3 --seeds 2 --out-dir runs/t "
               "--json",
               "ltsim tightness --parameters eps,scale --points 3 --seeds 2 --no-validate --joint",
               "ltsim tightness --theorem 5.3 --methods markov,blocks --points 3 --seeds 2 "
               "--x-length 20000",
               "ltsim tightness --theorem 5.2 --parameters positional-margin --points 3 --seeds 2",
               "ltsim tightness --theorem 4.2 --parameters eps --alpha0 1 --points 3 --seeds 2",
               "ltsim construct family bump --slope 2 --out-dir fam/s2; ltsim construct family "
               "bump --slope 4 --out-dir fam/s4; ltsim construct family bump --slope 8 "
               "--out-dir fam/s8; ltsim tightness --family-dir fam --parameter slope"},
              "Every point's members are written as point witnesses with --out-dir; `ltsim "
              "replay FILE` re-runs one (exit 0 = reproduced, 1 = not).");
  cmd->add_option("--theorem", args->theorem,
                  "4.1 (default), 4.2 (eps rows per alpha0 and the alpha0 row, average case), 5.2 "
                  "(eps, attention-norm, positional-margin and k rows) or 5.3 (Lemma 5.3's rate "
                  "in n per subsequence scheme) (docs/tightness.md)");
  cmd->add_option("--parameters", args->parameters,
                  "comma list of eps, scale, period, alphabet, locality, margin (4.1; default "
                  "all), eps, alpha0 (4.2; default both), eps, attention-norm, positional-margin, "
                  "k (5.2; default all) or n (5.3)");
  cmd->add_option("--methods", args->schemes,
                  "5.3: comma list of markov, blocks, uniform, truncate (default all, one row "
                  "each)");
  auto* x_length =
      cmd->add_option("--x-length", args->options.statistic_x_length,
                      "5.3: |x| of the input families (default 320000; up to 10^9, the run "
                      "families streamed)");
  auto* max_n = cmd->add_option("--max-z-length", args->options.statistic_max_n,
                                "5.3: the largest n of the n rows (from 16, evenly in log; "
                                "default 16000)");
  AddSeed(cmd, args->options.seed);
  AddThreads(cmd, args->options.threads);
  cmd->add_option("--seeds", args->options.seeds,
                  "family members per point (5.3: z seeds per point; 5.2: members of the "
                  "attention-norm and positional-margin rows and x inputs of the eps and k rows; "
                  "default 3)");
  auto* points = cmd->add_option("--points", args->options.points,
                                 "grid points per parameter (default 5; period 4 unless given; "
                                 "5.3: n from 16 to 16000 evenly in log; 5.2: eps = 0.2/2^i, "
                                 "||M_1|| = 0, 1, ..., 1/gamma_pos = 3, 4, ...; k = 1..4 unless "
                                 "given, at most 6)");
  cmd->add_option("--budget", args->options.statistics_budget,
                  "evaluated statistics per exact threshold (pruned search up to T = 10^6; "
                  "default 1e6); a member still agreeing when it is spent is a censored point");
  cmd->add_option("--heads", args->options.heads,
                  "heads of the class of the eps and scale rows: 1 = the bump family, 2 or 3 = "
                  "the nested family (T* ~ (L/eps)^heads; default 2)");
  cmd->add_option("--precision", args->options.precision_bits,
                  "p bits of the margin row (default 4)");
  cmd->add_option("--max-x-length", args->options.max_x_length,
                  "cap on |x| of the simulator check, which grows |x| 4x a step from "
                  "max(10^4, 4 T_hard) until the needed n stops growing or reaches the upper "
                  "side (default 200000; 5.2's eps and k rows use min(20000, this))");
  cmd->add_flag("--no-validate", args->no_validate, "skip the simulator check on found x");
  cmd->add_option("--alpha0", args->alphas0,
                  "4.2: comma list of the Dirichlet alpha0 of the eps rows, one row each "
                  "(default 0.5,1,2; each in [0.05, 20])");
  auto* average_max =
      cmd->add_option("--average-max-length", args->options.average_max_length,
                      "4.2: the longest length of the exact average computation (grown 4x from "
                      "64; default 4096, at most 100000); a member whose expected gap stays <= "
                      "eps up to it is censored");
  cmd->add_flag("--joint", args->options.joint,
                "4.1: also fit ln T* = a + sum_j b_j ln x_j jointly over the lower-side samples "
                "of every requested row, each sample with its own pair's 1/eps, L, Delta, S, tau "
                "(those the rows vary); margin is log-linear in 1/gamma and left out; printed "
                "after the table, `joint` in the JSON");
  cmd->add_option("--family-dir", args->options.family_dir,
                  "4.1: one row over a user's family instead of the built-in rows: DIR holds a "
                  "subdirectory a member with f.json and g.json (as `ltsim construct family ... "
                  "--out-dir DIR/NAME` writes them), each member's T* computed by the exact "
                  "threshold (a T* in meta is checked, never used) and fitted log-log in the "
                  "parameter its meta records (docs/tightness.md §7)");
  args->family_parameter = cmd->add_option(
      "--parameter", args->options.family_parameter,
      "with --family-dir: the meta key of the members' parameter (meta.NAME, else "
      "meta.params.NAME; default: the one meta.params key whose value differs between members; "
      "eps is fitted in 1/eps, anything else in its value)");
  args->family_eps =
      cmd->add_option("--eps", args->options.family_eps,
                      "with --family-dir: every member's eps (default: each member's meta.eps)");
  AddOutDir(cmd, args->options.out,
            "write tightness.json, tightness.csv, one figure per parameter "
            "(tightness_<parameter>.png/.svg) and a point witness per member in this directory");
  AddDeprecated(cmd, "--replay", args->replay, "ltsim replay FILE");
  cmd->add_flag("--json", args->json, "print the JSON document instead of the table");
  cmd->callback([args, points, x_length, max_n, average_max, &exit_code] {
    if (!args->replay.empty()) {
      exit_code = RunPointReplay(args->replay, args->json);
      return;
    }
    SetCommandFlags({{"statistics_budget", "--budget"},
                     {"precision_bits", "--precision"},
                     {"schemes", "--methods"},
                     {"alphas0", "--alpha0"},
                     {"average_max_length", "--average-max-length"}});
    TightnessOptions o = args->options;
    const auto shown = [](const std::string& name) {
      return name.size() > 60 ? name.substr(0, 60) + "..." : name;  // one short line
    };
    const auto theorem = kTheoremNames.Find(args->theorem);
    if (!theorem)
      throw InputError("--theorem: unknown theorem '" + shown(args->theorem) +
                       "' (known: 4.1, 4.2, 5.2, 5.3)");
    o.theorem = *theorem;
    std::string known;
    for (StudyParameter p : TightnessParameters(o.theorem))
      known += (known.empty() ? "" : ", ") + std::string(ParameterName(p));
    if (!args->parameters.empty())
      for (const std::string& name : SplitList(args->parameters, "--parameters")) {
        const auto parameter = kStudyParameterNames.Find(name);
        if (!parameter)
          throw InputError("--parameters: unknown parameter '" + shown(name) + "' (known for " +
                           "Theorem " + args->theorem + ": " + known + ")");
        o.parameters.push_back(*parameter);
      }
    if (!args->schemes.empty()) o.schemes = SplitList(args->schemes, "--methods");
    if (!args->alphas0.empty()) {
      if (o.theorem != Theorem::k42) throw InputError("--alpha0: only for --theorem 4.2");
      for (const std::string& a : SplitList(args->alphas0, "--alpha0")) {
        std::size_t used = 0;
        double value = 0;
        try {
          value = std::stod(a, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != a.size() || !(value >= 0.05 && value <= 20))
          throw InputError("--alpha0: '" + shown(a) + "' is not a number in [0.05, 20]");
        // Rows are named eps_alpha<a> by the shortest form of a: equal names would write the
        // same files.
        for (double b : o.alphas0)
          if (fmt::format("{}", b) == fmt::format("{}", value))
            throw InputError("--alpha0: '" + shown(a) + "' repeats alpha0 = " +
                             fmt::format("{}", b) + " (each value names one row)");
        o.alphas0.push_back(value);
      }
    }
    if (o.theorem != Theorem::k42 && average_max->count() > 0)
      throw InputError("--average-max-length: only for --theorem 4.2");
    if (o.joint && o.theorem != Theorem::k41)
      throw InputError("--joint: only for --theorem 4.1 (its log-log rows)");
    if (o.theorem != Theorem::k53 &&
        (!args->schemes.empty() || x_length->count() > 0 || max_n->count() > 0))
      throw InputError(std::string(!args->schemes.empty()  ? "--methods"
                                   : x_length->count() > 0 ? "--x-length"
                                                           : "--max-z-length") +
                       ": only for --theorem 5.3 (Lemma 5.3's rows)");
    if (o.family_dir.empty() &&
        (args->family_parameter->count() > 0 || args->family_eps->count() > 0))
      throw InputError(std::string(args->family_parameter->count() > 0 ? "--parameter" : "--eps") +
                       ": only with --family-dir (the built-in rows are chosen with "
                       "--parameters)");
    if (!o.family_dir.empty()) {
      if (o.theorem != Theorem::k41 || o.joint || !o.parameters.empty() || points->count() > 0)
        throw InputError(
            "--family-dir: one row of Theorem 4.1 over the family's members, so --theorem, "
            "--joint, --parameters and --points do not apply");
      if (args->family_eps->count() > 0 && !(o.family_eps > 0 && std::isfinite(o.family_eps)))
        throw InputError("--eps: must be a positive number");
      args->no_validate = true;  // the simulator check is the built-in rows' (docs/tightness.md §7)
    }
    o.points_given = points->count() > 0;
    o.validate = !args->no_validate;
    // 5.3 counts attacks (scheme × n × input family × z seed), 4.1 members and checks, 5.2
    // thresholds and simulator runs.
    Progress progress("tightness", o.theorem == Theorem::k53   ? "attacks"
                                   : o.theorem == Theorem::k52 ? "thresholds and simulator runs"
                                   : o.theorem == Theorem::k42 ? "average computations"
                                                               : "members and checks");
    o.progress = progress.Callback();
    // --out-dir locked and checked before any work, written as one set (io/output_dir.h).
    std::unique_ptr<io::OutputSet> set;
    if (!o.out.empty()) set = std::make_unique<io::OutputSet>(o.out, "tightness");
    if (set) o.out = set->staging();
    TightnessResult r = RunTightness(o);
    progress.Finish();
    if (set) r.options.out = set->dir();  // what the table names
    Report(
        TightnessJson(r, ReproducibleContext("tightness", r.options.seed)), TightnessCsv(r),
        args->json, [&] { PrintTightnessTable(r, std::cout); }, set.get(), "tightness",
        LTSIM_PLOT_TIGHTNESS_SCRIPT);
  });
}

}  // namespace ltsim::cli
