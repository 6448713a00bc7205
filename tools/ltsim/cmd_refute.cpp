// `ltsim refute --bound EXPR …`: search a class for a pair whose certified first disagreement
// exceeds a conjectured training length (docs/refute.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "commands.h"
#include "common_options.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/io/output_dir.h"
#include "ltsim/io/output_file.h"
#include "ltsim/model/model_file.h"
#include "ltsim/search/refute.h"
#include "ltsim/search/two_layer_refute.h"
#include "ltsim/study/refute_exponent.h"
#include "ltsim/study/user_family.h"
#include "output.h"
#include "progress.h"
#include "replay.h"

namespace ltsim::cli {
namespace {

struct RefuteArgs {
  RefuteOptions options;
  std::string modes = "hardmax";
  std::string starts = "both";
  std::string exponent;    ///< the parameter of --exponent ("" = one refute search)
  std::string grid;        ///< its values, comma-separated
  std::string family_dir;  ///< a user's family: its members judged, no search
  double time_budget = 60.0;
  std::string out;
  std::string replay;
  bool json = false;
  std::vector<CLI::Option*> required;     ///< the class and the bound: needed unless --replay
  std::vector<CLI::Option*> search_only;  ///< the search's flags (not with --family-dir)
  CLI::Option* eps = nullptr;
  // --layers 2 (docs/refute.md §8): the class's second layer and the two-layer search.
  int layers = 1;
  TwoLayerSearchOptions two;
  std::string bias_scaling = "none";
  std::string second_modes;
  std::vector<CLI::Option*> two_only;  ///< flags of --layers 2 only
  std::vector<CLI::Option*> one_only;  ///< flags of the one-layer search only
  CLI::Option* max_length = nullptr;
  CLI::Option* budget = nullptr;
  CLI::Option* iterations = nullptr;
  CLI::Option* modes_option = nullptr;
};

void WriteText(const std::filesystem::path& path, const std::string& text) {
  io::WriteFileAtomically(path.string(), text);
}

// `--out-dir`: the reported pair (a one-layer restart or a two-layer climb: f, g and the best
// witness), its witness as text and refute.json, committed together.
template <typename Best>
void WriteRefuteDir(io::OutputSet& set, const Best& best, const nlohmann::json& j) {
  const std::filesystem::path dir(set.staging());
  WriteModel(best.f, (dir / "f.json").string());
  WriteModel(best.g, (dir / "g.json").string());
  WriteText(dir / "witness.txt", RunLengthText(best.best.witness) + "\n");
  WriteText(dir / "refute.json", j.dump(2) + "\n");
  set.Commit();
}

// A number as the JSON document shows it (null when not finite or absent): the table and
// refute.json print the same digits.
std::string JsonText(double x) { return std::isfinite(x) ? Json(x).dump() : "null"; }
std::string JsonText(const std::optional<std::uint64_t>& x) {
  return x ? std::to_string(*x) : "null";
}

// Formats the result struct (RefuteToJson is the same numbers for --json and refute.json).
void PrintTable(const RefuteResult& r) {
  const RawSearchOptions& o = r.options.search;
  const RawRestart& best = r.search.restarts[r.best.restart];
  const RawEvaluation& e = best.best;
  std::cout << fmt::format(
      "refute --bound '{}' (seed {}, {} of {} evaluations, eps {}, N = {}, L0 = {})\n",
      r.options.bound, o.seed, r.search.evaluations, o.budget, o.eps, o.max_length,
      o.cls.max_lipschitz);
  const std::string t = e.first_disagreement
                            ? std::to_string(*e.first_disagreement)
                            : fmt::format("> {} (no disagreement up to N)", o.max_length);
  std::cout << fmt::format("  best pair (start: {}): T* = {}, certified by exact threshold\n",
                           best.start, t);
  std::cout << fmt::format("  witness at T*: {}\n", RunLengthText(e.witness));
  const std::optional<std::uint64_t> sup_length =
      e.sup_statistic ? std::optional<std::uint64_t>(e.sup_statistic->length) : std::nullopt;
  std::cout << fmt::format(
      "  largest gap below T* = {}; largest gap found = {} at length {} ({}separated: κ = {})\n",
      JsonText(e.largest_gap_below), JsonText(e.sup_gap), JsonText(sup_length),
      e.separated ? "" : "not ", o.separation);
  std::cout << fmt::format("  L = {}, T*·ε/L = {}\n", JsonText(r.best.lipschitz),
                           JsonText(r.best.eps_over_L));
  std::cout << fmt::format("  bound at the pair's constants = {}, T*/bound = {}\n",
                           JsonText(r.best.bound_value), JsonText(r.best.ratio));
  if (!r.family_name.empty())
    std::cout << fmt::format(
        "  best built-in family for this class: {} with T* = {}, T*·ε/L = {}\n", r.family_name,
        JsonText(r.family_first_disagreement), JsonText(r.family_eps_over_L));
  else
    std::cout << "  best built-in family for this class: none fits\n";
  std::cout << fmt::format("  recheck (50 digits): {}\n",
                           Json(kRecheckValueNames.Name(r.search.recheck.status)).dump());
  const nlohmann::json scales = LengthScales(o);  // kept alive while items() iterates it
  for (const auto& [mode, scale] : scales.items())
    std::cout << fmt::format(
        "  length scale of {} pairs: {} = {}\n", mode, scale["constant"].get<std::string>(),
        scale["value"].is_null() ? std::string("unbounded") : scale["value"].dump());
  if (r.certified_past_cap > 0)
    std::cout << fmt::format(
        "  certified past the search's N = {}: {} censored pair(s), the best {}\n", o.max_length,
        r.certified_past_cap,
        e.first_disagreement
            ? fmt::format("with certified T* = {}", *e.first_disagreement)
            : fmt::format("agreeing up to {} (certified; T* a lower bound)", e.checked_up_to));
  if (r.refuted)
    std::cout << "REFUTED: a separated pair's certified T* exceeds the bound\n";
  else if (!r.limited_by.empty())
    std::cout << fmt::format("INCONCLUSIVE (limited by {}): {}\n", fmt::join(r.limited_by, ", "),
                             r.limited_by_reason);
  else
    std::cout << "not refuted within the budget (the best ratio T*/bound above)\n";
}

// Exit codes: 1 refuted (or an exponent that contradicts the bound), 3 a verdict limited by a
// cap or the time budget (inconclusive), 0 a genuine "not refuted within the budget".
constexpr int kLimited = 3;

RawStarts ParseStarts(const std::string& text) {
  if (text == "random") return RawStarts::kRandom;
  if (text == "families") return RawStarts::kFamilies;
  if (text == "both") return RawStarts::kBoth;
  throw InputError("--starts: unknown value '" + text.substr(0, 40) +
                   "' (known: random, families, both)");
}

std::vector<double> ParseGrid(const std::string& text) {
  std::vector<double> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !std::isfinite(v))
      throw InputError("--grid: '" + item.substr(0, 40) + "' is not a number");
    values.push_back(v);
  }
  return values;
}

void PrintExponentTable(const RefuteExponentResult& r) {
  const RefuteExponentOptions& o = r.options;
  const RawSearchOptions& s = o.refute.search;
  std::cout << fmt::format(
      "refute --exponent {} --bound '{}' (seed {}, starts {}, {} evaluations and {} s a point, "
      "N = {})\n",
      kExponentParameterNames.Name(o.parameter), o.refute.bound, s.seed,
      RawStartsName(s.family_seeds ? s.starts : RawStarts::kRandom), s.budget,
      s.time_budget > 0 ? fmt::format("{:g}", s.time_budget + o.refute.certify_seconds)
                        : std::string("unlimited"),
      s.max_length);
  std::cout << fmt::format("  {:>10} {:>12} {:>10} {:>12} {:>12}  {}\n", "value", "T*", "L",
                           "bound", "limited by", "witness");
  for (const ExponentPoint& p : r.points) {
    const std::string t = !p.separated           ? fmt::format("({} unsep.)", p.lower_bound)
                          : p.first_disagreement ? std::to_string(*p.first_disagreement)
                                                 : fmt::format("> {}", p.lower_bound - 1);
    std::cout << fmt::format(
        "  {:>10} {:>12} {:>10} {:>12} {:>12}  {}\n", JsonText(p.value), t,
        fmt::format("{:.4g}", p.lipschitz), fmt::format("{:.4g}", p.bound_value),
        p.limited_by.empty() ? "-" : fmt::format("{}", fmt::join(p.limited_by, ",")),
        p.witness_file.empty() ? "-" : p.witness_file);
  }
  const auto& ci = r.estimate.ci;
  std::cout << fmt::format(
      "  exponent of T* in {} (certified lower bounds, censored points not fitted): {}\n",
      r.options.parameter == ExponentParameter::kEps ? "1/eps"
      : r.options.parameter == ExponentParameter::kLocality
          ? "tau+1"
          : kExponentParameterNames.Name(o.parameter),
      ci ? fmt::format("{:.3f} [{:.3f}, {:.3f}] (95%)", r.estimate.exponent, ci->first, ci->second)
         : std::string("none"));
  std::cout << fmt::format("  bound's own exponent: {}\n", JsonText(r.bound_exponent));
  std::cout << fmt::format("  verdict: {} ({})\n", r.verdict, r.reason);
}

int RunExponent(RefuteArgs& args, std::unique_ptr<io::OutputSet>& set) {
  RefuteExponentOptions o;
  o.refute = args.options;
  o.parameter = kExponentParameterNames.Parse(args.exponent);
  o.grid = ParseGrid(args.grid);
  // Witness files go to --out-dir (default refute-exponent): every point replays.
  const std::string out = args.out.empty() ? "refute-exponent" : args.out;
  set = std::make_unique<io::OutputSet>(out, "refute");
  o.witness_dir = set->staging();
  o.witness_name_dir = out;
  o.progress = [](int i, int n, double v) {
    std::cerr << fmt::format("refute: point {} of {} (value {})\n", i + 1, n, v);
  };
  const RefuteExponentResult result = RunRefuteExponent(o);
  const nlohmann::json j = RefuteExponentToJson(result);
  WriteText(std::filesystem::path(set->staging()) / "exponent.json", j.dump(2) + "\n");
  set->Commit();
  if (args.json)
    std::cout << j.dump(2) << "\n";
  else
    PrintExponentTable(result);
  if (result.verdict == "contradicts") return 1;
  return result.verdict == "consistent" ? 0 : kLimited;
}

// One member's line of the family document (its refute.json holds the rest).
Json FamilyMemberJson(const RefuteFamilyMember& m, const std::string& witness) {
  const RefuteResult& r = m.result;
  const RawEvaluation& e = r.search.restarts[0].best;
  auto number = [](double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); };
  Json j;
  j["member"] = m.name;
  j["f"] = m.f_file;
  j["g"] = m.g_file;
  j["eps"] = r.options.search.eps;
  j["first_disagreement"] = e.first_disagreement ? Json(*e.first_disagreement) : Json(nullptr);
  j["first_disagreement_lower_bound"] =
      e.first_disagreement ? *e.first_disagreement : e.checked_up_to + 1;
  j["checked_up_to"] = e.checked_up_to;
  j["meta_first_disagreement"] =
      m.recorded_first_disagreement ? Json(*m.recorded_first_disagreement) : Json(nullptr);
  j["meta_agrees"] = m.recorded_first_disagreement
                         ? Json(e.first_disagreement == m.recorded_first_disagreement)
                         : Json(nullptr);
  j["separated"] = e.separated;
  j["sup_gap"] = number(e.sup_gap);
  j["lipschitz"] = number(r.best.lipschitz);
  j["bound_value"] = number(r.best.bound_value);
  j["ratio"] = number(r.best.ratio);
  j["refutes"] = r.refuted;
  j["limited_by"] = r.limited_by.empty() ? Json(nullptr) : Json(r.limited_by);
  j["limited_by_reason"] = r.limited_by_reason;
  j["witness"] = witness.empty() ? Json(nullptr) : Json(witness);
  return j;
}

int RunFamily(RefuteArgs& args) {
  RefuteFamilyOptions o;
  o.refute = args.options;
  o.dir = args.family_dir;
  std::unique_ptr<io::OutputSet> set;
  if (!args.out.empty()) set = std::make_unique<io::OutputSet>(args.out, "refute");
  const RefuteFamilyResult result = RunRefuteFamily(o);
  // The witnesses: DIR/<member>/refute.json with f.json, g.json and witness.txt beside it, a
  // directory like `refute --out-dir`'s, so `ltsim replay` re-derives each member's verdict.
  std::vector<std::string> witnesses(result.members.size());
  Json members = Json::array();
  for (std::size_t k = 0; k < result.members.size(); ++k) {
    const RefuteFamilyMember& m = result.members[k];
    if (set) {
      const std::filesystem::path dir = std::filesystem::path(set->staging()) / m.name;
      std::filesystem::create_directories(dir);
      const RawRestart& r = m.result.search.restarts[0];
      WriteModel(r.f, (dir / "f.json").string());
      WriteModel(r.g, (dir / "g.json").string());
      WriteText(dir / "witness.txt", RunLengthText(r.best.witness) + "\n");
      WriteText(dir / "refute.json", RefuteToJson(m.result).dump(2) + "\n");
      witnesses[k] = (std::filesystem::path(set->dir()) / m.name / "refute.json").string();
    }
    members.push_back(FamilyMemberJson(m, witnesses[k]));
  }
  Json doc;
  // No thread count: the document is byte-identical for any --threads.
  doc["context"] = {{"command", "refute"}, {"seed", o.refute.search.seed}};
  doc["family_dir"] = o.dir;
  doc["bound"] = o.refute.bound;
  doc["eps"] = o.refute.search.eps > 0 ? Json(o.refute.search.eps) : Json(nullptr);
  doc["max_length"] = o.refute.search.max_length;
  doc["separation"] = o.refute.search.separation;
  doc["refuted"] = result.refuted;
  doc["best"] = result.members[result.best].name;
  doc["limited_by"] =
      result.limited.empty() || result.refuted ? Json(nullptr) : Json(result.limited);
  doc["members"] = members;
  if (set) {
    WriteText(std::filesystem::path(set->staging()) / "family.json", doc.dump(2) + "\n");
    set->Commit();
  }
  if (args.json) {
    std::cout << doc.dump(2) << "\n";
  } else {
    const RefuteOptions& ro = o.refute;
    std::cout << fmt::format(
        "refute --bound '{}' --family-dir {} (seed {}, {} members, T* exact up to N = {}, "
        "separation κ = {})\n",
        ro.bound, o.dir, ro.search.seed, result.members.size(), ro.search.max_length,
        ro.search.separation);
    std::cout << fmt::format("  {:<16} {:>8} {:>10} {:>10} {:>12} {:>10} {:>9}  {}\n", "member",
                             "eps", "T*", "L", "bound", "T*/bound", "separated", "verdict");
    for (const RefuteFamilyMember& m : result.members) {
      const RefuteResult& r = m.result;
      const RawEvaluation& e = r.search.restarts[0].best;
      const std::string t = e.first_disagreement ? std::to_string(*e.first_disagreement)
                                                 : fmt::format("> {}", e.checked_up_to);
      std::cout << fmt::format("  {:<16} {:>8} {:>10} {:>10} {:>12} {:>10} {:>9}  {}\n", m.name,
                               JsonText(r.options.search.eps), t,
                               fmt::format("{:.4g}", r.best.lipschitz),
                               fmt::format("{:.6g}", r.best.bound_value),
                               fmt::format("{:.4g}", r.best.ratio), e.separated ? "yes" : "no",
                               r.refuted               ? "refutes"
                               : !r.limited_by.empty() ? "limited (max_length)"
                                                       : "-");
      if (m.recorded_first_disagreement && e.first_disagreement != m.recorded_first_disagreement)
        std::cout << (!e.first_disagreement && *m.recorded_first_disagreement > e.checked_up_to
                          ? fmt::format("    meta.first_disagreement = {} is beyond N (not "
                                        "checked)\n",
                                        *m.recorded_first_disagreement)
                          : fmt::format("    meta.first_disagreement = {} differs from the "
                                        "certified {}\n",
                                        *m.recorded_first_disagreement, t));
    }
    const RefuteFamilyMember& best = result.members[result.best];
    if (result.refuted)
      std::cout << fmt::format("REFUTED: member {}'s certified T* exceeds the bound{}\n", best.name,
                               witnesses[result.best].empty()
                                   ? std::string(" (--out-dir DIR saves a replayable witness)")
                                   : "; replay: ltsim replay " + witnesses[result.best]);
    else if (!result.limited.empty())
      std::cout << fmt::format(
          "INCONCLUSIVE (limited by max_length): {} agree(s) up to N, below the bound at their "
          "constants; a larger --max-length decides\n",
          fmt::join(result.limited, ", "));
    else
      std::cout << "not refuted: no separated member's certified T* exceeds the bound (a member "
                   "counts only when some string has a gap >= separation·eps)\n";
  }
  if (result.refuted) return 1;
  return result.limited.empty() ? 0 : kLimited;
}

void PrintTwoLayerTable(const TwoLayerRefuteResult& r) {
  const TwoLayerSearchOptions& o = r.search.options;
  const TwoLayerClimb& best = r.search.climbs[r.search.best];
  const TwoLayerEvaluation& e = best.best;
  std::cout << fmt::format(
      "refute --layers 2 --bound '{}' (seed {}, {} of {} evaluations{}, eps {}, N = {}, L0 = {}, "
      "B = {})\n",
      r.bound, o.seed, r.search.evaluations, o.budget, o.random_only ? ", random starts only" : "",
      o.eps, o.max_length, o.cls.max_scale, JsonText(o.cls.max_logit));
  const std::string t =
      e.first_disagreement ? std::to_string(*e.first_disagreement)
      : e.censored_by == "threshold_evaluations"
          ? fmt::format("> {} (the threshold's evaluation cap stopped it there)", e.checked_up_to)
      : e.censored_by == "path_search_length"
          ? fmt::format("> {} (the path search's exhaustive length limit)", e.checked_up_to)
      : e.past_n_max_length > 0
          ? fmt::format("> {} (no disagreement up to it: certified past N)", e.checked_up_to)
          : fmt::format("> {} (no disagreement up to N)", e.checked_up_to);
  std::cout << fmt::format(
      "  best pair (climb {}): T* = {}, certified by the two-layer path search\n", best.index, t);
  std::cout << fmt::format("  witness at T*: {}\n", RunLengthText(e.witness));
  std::uint64_t sup_length = 0;
  for (const Run& x : e.sup_string) sup_length += x.count;
  std::cout << fmt::format(
      "  largest gap found = {} on a string of length {} ({}separated: κ = {})\n",
      JsonText(e.sup_gap), sup_length, e.separated ? "" : "not ", o.separation);
  std::cout << fmt::format("  output scale = {}, logit scales (layer 1, 2) = {}, {}\n",
                           JsonText(OutputScale(best.f)), JsonText(LayerLogitScale(best.f, 0)),
                           JsonText(LayerLogitScale(best.f, 1)));
  std::cout << fmt::format("  bound at the pair's constants = {}, T*/bound = {}\n",
                           JsonText(r.bound_value), JsonText(r.ratio));
  if (r.certified_past_cap > 0)
    std::cout << fmt::format(
        "  certified past N = {}: {} censored pair(s), {:.1f} s (replay re-runs the best pair's "
        "path search to {})\n",
        o.max_length, r.certified_past_cap, r.past_cap_seconds,
        e.past_n_max_length > 0 ? e.past_n_max_length : o.max_length);
  std::cout << fmt::format("  recheck (50 digits): {}\n",
                           Json(kRecheckValueNames.Name(r.search.recheck_status)).dump());
  if (r.refuted)
    std::cout << "REFUTED: a separated pair's certified T* exceeds the bound\n";
  else if (!r.limited_by.empty())
    std::cout << fmt::format("INCONCLUSIVE (limited by {}): {}\n", fmt::join(r.limited_by, ", "),
                             r.limited_by_reason);
  else
    std::cout << "not refuted within the budget (the best ratio T*/bound above)\n";
}

int RunTwoLayer(RefuteArgs& args) {
  for (const CLI::Option* option : args.one_only)
    if (option->count() > 0)
      throw InputError(fmt::format("{}: does not apply with --layers 2", option->get_name()));
  for (const CLI::Option* option : args.required)
    if (option->count() == 0) throw InputError(fmt::format("{}: required", option->get_name()));
  const RawSearchOptions& s = args.options.search;
  TwoLayerSearchOptions& o = args.two;
  o.cls.alphabet = s.cls.alphabet;
  o.cls.period = s.cls.period;
  o.cls.locality = s.cls.locality;
  o.cls.width = s.cls.width;
  o.cls.heads = s.cls.heads;
  o.cls.mlp_width = s.cls.mlp_width;
  o.cls.precision_bits = s.cls.precision_bits;
  o.cls.max_scale = s.cls.max_lipschitz;
  o.cls.max_logit = s.cls.max_logit;
  o.cls.bias_scaling = ParseFlag("--bias-scaling", kBiasScalingNames, args.bias_scaling);
  const std::string modes = args.modes_option->count() > 0 ? args.modes : "hardmax,softmax";
  o.cls.modes = ParseModeList(modes);
  o.cls.second_modes =
      args.second_modes.empty() ? o.cls.modes : ParseModeList(args.second_modes, "--second-modes");
  o.eps = s.eps;
  o.separation = s.separation;
  o.seed = s.seed;
  o.threads = s.threads;
  o.random_only = s.random_only;
  if (args.max_length->count() > 0) o.max_length = s.max_length;
  if (args.budget->count() > 0) o.budget = s.budget;
  if (args.iterations->count() > 0) o.iterations = s.iterations;
  if (!(args.time_budget >= 0) || !std::isfinite(args.time_budget))
    throw InputError("--time-budget: must be finite and ≥ 0");
  o.time_budget = args.time_budget;
  ValidateTwoLayerRefuteBound(args.options.bound);
  ValidateTwoLayerSearch(o);
  std::unique_ptr<io::OutputSet> set;
  if (!args.out.empty()) set = std::make_unique<io::OutputSet>(args.out, "refute");
  auto progress = std::make_shared<Progress>(
      "refute", "climbs", Progress::Options{.quiet_seconds = 0, .always_final = true});
  o.progress = [progress](int done, int climbs, std::uint64_t evaluations, double best) {
    progress->Update(static_cast<std::uint64_t>(done), static_cast<std::uint64_t>(climbs),
                     fmt::format("{} evaluations, best score {:.0f}", evaluations, best));
  };
  std::cerr << fmt::format("refute --layers 2: seed {}\n", o.seed);
  const TwoLayerRefuteResult result = RunTwoLayerRefute(o, args.options.bound);
  progress->Finish();
  const nlohmann::json j = TwoLayerRefuteToJson(result);
  if (set) WriteRefuteDir(*set, result.search.climbs[result.search.best], j);
  if (args.json)
    std::cout << j.dump(2) << "\n";
  else
    PrintTwoLayerTable(result);
  if (result.refuted) return 1;
  return result.limited_by.empty() ? 0 : kLimited;
}

int Run(RefuteArgs& args) {
  if (!args.replay.empty()) return RunRefuteReplay(args.replay, args.json);
  if (args.layers != 1 && args.layers != 2)
    throw InputError(fmt::format("--layers: {} is not 1 or 2", args.layers));
  if (args.layers == 2) return RunTwoLayer(args);
  for (const CLI::Option* option : args.two_only)
    if (option->count() > 0)
      throw InputError(fmt::format("{}: only with --layers 2", option->get_name()));
  SetCommandFlags({{"precision_bits", "--precision"}, {"max_length", "--max-length"}});
  // With --exponent the grid sets its parameter's flag.
  const std::map<std::string, std::string> grid_flag = {
      {"eps", "--eps"},           {"scale", "--max-lipschitz"}, {"period", "--period"},
      {"alphabet", "--alphabet"}, {"locality", "--locality"},   {"heads", "--heads"}};
  const auto varied = grid_flag.find(args.exponent);
  if (!args.exponent.empty()) kExponentParameterNames.Parse(args.exponent);
  if (!args.family_dir.empty()) {
    // The members are given: the class, the search and the grid do not apply.
    for (const CLI::Option* option : args.required)
      if (option->count() > 0 && option->get_name() != "--bound" && option->get_name() != "--eps")
        throw InputError(
            fmt::format("{}: the family's members are given, so the class flags do not apply with "
                        "--family-dir",
                        option->get_name()));
    for (const CLI::Option* option : args.search_only)
      if (option->count() > 0)
        throw InputError(fmt::format(
            "{}: a family's members are judged as given (no search), so it does not apply "
            "with --family-dir",
            option->get_name()));
    if (args.required.front()->count() == 0) throw InputError("--bound: required");
    ValidateRefuteBound(args.options.bound);
    if (args.eps->count() == 0) args.options.search.eps = 0;  // each member's meta.eps
    return RunFamily(args);
  }
  for (const CLI::Option* option : args.required) {
    if (varied != grid_flag.end() && option->get_name() == varied->second) continue;
    if (option->count() == 0) throw InputError(fmt::format("{}: required", option->get_name()));
  }
  RawSearchOptions& s = args.options.search;
  s.cls.modes = ParseModeList(args.modes);
  s.starts = ParseStarts(args.starts);
  if (!(args.time_budget >= 0) || !std::isfinite(args.time_budget))
    throw InputError("--time-budget: must be finite and ≥ 0");
  // The search stops starting evaluations after 2/3 of the budget; certifying censored pairs
  // past N gets the rest (0: no limit on either).
  s.time_budget = args.time_budget * 2.0 / 3.0;
  args.options.certify_seconds =
      args.time_budget > 0 ? args.time_budget / 3.0 : std::numeric_limits<double>::max();
  ValidateRefuteBound(args.options.bound);
  ValidatePairClass(s.cls);
  if (args.exponent.empty() != args.grid.empty())
    throw InputError("--exponent and --grid go together");
  // The output directory is locked, checked and staged before the search (a bad --out-dir
  // costs nothing); its four files appear together or not at all (io/output_dir.h).
  std::unique_ptr<io::OutputSet> set;
  if (!args.exponent.empty()) return RunExponent(args, set);
  if (!args.out.empty()) set = std::make_unique<io::OutputSet>(args.out, "refute");
  // Progress on stderr (results never depend on it): climbs, with evaluations and the best.
  auto progress = std::make_shared<Progress>(
      "refute", "climbs", Progress::Options{.quiet_seconds = 0, .always_final = true});
  s.progress = [progress](int done, int climbs, std::uint64_t evaluations, double best, double) {
    progress->Update(static_cast<std::uint64_t>(done), static_cast<std::uint64_t>(climbs),
                     fmt::format("{} evaluations, best score {:.0f}", evaluations, best));
  };
  const RefuteResult result = RunRefute(args.options);
  progress->Finish();
  const nlohmann::json j = RefuteToJson(result);
  if (set) WriteRefuteDir(*set, result.search.restarts[result.best.restart], j);
  if (args.json)
    std::cout << j.dump(2) << "\n";
  else
    PrintTable(result);
  if (result.refuted) return 1;
  return result.limited_by.empty() ? 0 : kLimited;
}

}  // namespace

int RunRefuteReplay(const std::string& path, bool json) {
  std::string report;
  const bool ok = ReplayRefute(path, &report);
  if (json) {
    Json doc;
    doc["context"] = Context("replay", 0);
    doc["file"] = path;
    doc["format"] = "refute";
    doc["report"] = report;
    doc["reproduced"] = ok;
    PrintJson(doc);
  } else {
    std::cout << report << (ok ? "\nreproduced\n" : "\nNOT reproduced\n");
  }
  return ok ? kReproduced : kNotReproduced;
}

void AddRefuteCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RefuteArgs>();
  RawSearchOptions& s = args->options.search;
  CLI::App* cmd = app.add_subcommand(
      "refute",
      "Search a class of one-layer pairs (--layers 2: two-layer pairs, docs/refute.md §8) for "
      "one whose certified first disagreement T* (exact threshold; two layers: its path search) "
      "exceeds a conjectured training length EXPR at the pair's own constants "
      "(docs/refute.md); censored best pairs are certified past N before the verdict (one layer "
      "only). Exit 1 "
      "when refuted (--exponent: contradicted), 0 for a genuine \"not refuted within the "
      "budget\", 3 when the verdict is limited by a cap or the time budget (limited_by), 2 on "
      "bad input.");
  SetExamples(
      cmd,
      {"ltsim refute --bound 'L/eps' --eps 0.05 --max-lipschitz 8 --alphabet 2 --period 1 "
       "--locality 0 --width 6 --heads 2 --mlp-width 1 --max-length 300 --budget 40 "
       "--iterations 5",
       "ltsim refute --bound thm4.1-length --eps 0.05 --max-lipschitz 3 --alphabet 2 "
       "--period 1 --locality 0 --width 6 --heads 2 --mlp-width 1 --max-length 200 "
       "--budget 40 --iterations 5 --threads 2 --json",
       "ltsim refute --bound '0.01*L/eps' --eps 0.05 --max-lipschitz 8 --alphabet 2 "
       "--period 2 --locality 0 --width 6 --heads 2 --mlp-width 1 --max-length 300 --budget 40 "
       "--iterations 5 --out-dir refute-out; ltsim replay refute-out/refute.json",
       "ltsim refute --exponent eps --grid 0.1,0.05,0.025 --bound 'L/eps' --max-lipschitz 20 "
       "--alphabet 2 --period 1 --locality 0 --width 5 --heads 2 --mlp-width 1 --starts "
       "families --budget 2 --iterations 0 --max-length 300 --out-dir refute-exp",
       "ltsim construct family bump --slope 4 --out-dir fam/s4; ltsim construct family bump "
       "--slope 16 --out-dir fam/s16; ltsim refute --bound '0.01*L/eps' --family-dir fam "
       "--separation 1.5 --out-dir refute-fam; ltsim replay refute-fam/s16/refute.json",
       "ltsim refute --layers 2 --bound 4 --eps 0.05 --max-lipschitz 8 --max-logit 8 "
       "--alphabet 2 --period 1 --locality 1 --width 5 --heads 1 --mlp-width 1 --max-length 40 "
       "--budget 16 --iterations 7 --time-budget 0 --seed 1 --out-dir refute-two; ltsim replay "
       "refute-two/refute.json"},
      "The first and third example refute their bound (exit 1), the second does not "
      "(exit 0); the fourth fits T*'s exponent in 1/eps over the nested family's starts (2.03, "
      "interval [1.93, 2.12]) against the bound's 1 (contradicts, exit 1; `ltsim replay "
      "refute-exp/point_0.json` re-derives a point); the fifth judges a family of two members "
      "(the slope-16 member refutes it) and replays that member's witness (exit 0); the sixth "
      "searches a two-layer class (no disagreement up to N = 40, so T* > 40 > 4: refuted, then "
      "replayed, exit 0). The "
      "defaults "
      "(--budget 10000 evaluations, "
      "--max-length 20000, --time-budget 60) finish within about a minute: 32 s on 2 free cores "
      "for the first example's class, and the time budget stops larger classes (three heads: "
      "about 0.1 s an evaluation) with the best certified pair, saying so; the examples use "
      "tiny budgets. `ltsim replay DIR/refute.json` re-derives T*, the separation and the "
      "verdict from the files.");
  auto need = [&](CLI::Option* option) { args->required.push_back(option); };
  need(cmd->add_option("--bound", args->options.bound,
                       "conjectured N: a muParser expression over L, Delta, S, tau, gamma, p, C, "
                       "gamma_pos, D, eps (as `ltsim constants --bound`), or a registry bound "
                       "name such as thm4.1-length"));
  args->eps = cmd->add_option("--eps", s.eps,
                              "ε (with --family-dir: every member's; default each member's "
                              "meta.eps)")
                  ->check(CLI::PositiveNumber);
  need(args->eps);
  need(cmd->add_option("--max-lipschitz", s.cls.max_lipschitz, "L₀: L(f), L(g) ≤ L₀"));
  need(cmd->add_option("--alphabet", s.cls.alphabet, "S"));
  need(cmd->add_option("--period", s.cls.period, "Δ"));
  need(cmd->add_option("--locality", s.cls.locality, "τ"));
  need(cmd->add_option("--width", s.cls.width, "d"));
  need(cmd->add_option("--heads", s.cls.heads, "H (one layer)"));
  need(cmd->add_option("--mlp-width", s.cls.mlp_width, "m: MLP units (0: no MLP)"));
  args->modes_option =
      cmd->add_option("--modes", args->modes,
                      "allowed attention modes, comma-separated (--layers 2: the first layer's; "
                      "default hardmax, with --layers 2 hardmax,softmax)")
          ->default_val("hardmax");
  args->search_only.push_back(args->modes_option);
  args->search_only.push_back(
      cmd->add_option("--precision", s.cls.precision_bits, "p of finite attention")
          ->default_val(8));
  args->search_only.push_back(
      cmd->add_option("--min-margin", s.cls.min_margin, "γ₀: γ(f), γ(g) ≥ γ₀ for finite attention")
          ->default_val(0.0));
  args->search_only.push_back(
      cmd->add_option("--max-logit", s.cls.max_logit,
                      "B for softmax and finite layers: max_h (‖M_h‖₂·R₀² + max_t |φ_h[t]|) ≤ B, "
                      "R₀ = max ‖E_s + P_r‖, so every logit lies in [−B, B] (default: unbounded)"));
  args->max_length =
      cmd->add_option("--max-length", s.max_length,
                      "N: T* is exact up to N (default 20000; --layers 2: 100, at most 5000)")
          ->default_val(20000);
  args->budget = cmd->add_option("--budget", s.budget,
                                 "T* evaluations (the time budget may stop them first; default "
                                 "10000, --layers 2: 300)")
                     ->default_val(10000);
  args->search_only.push_back(args->budget);
  args->iterations = cmd->add_option("--iterations", s.iterations,
                                     "proposals per hill climb (default 49, --layers 2: 29)")
                         ->default_val(49);
  args->search_only.push_back(args->iterations);
  args->search_only.push_back(
      cmd->add_option("--starts", args->starts,
                      "where climbs start: random (random pairs of the class), families (the "
                      "built-in families that fit it) or both (families first)")
          ->default_val("both"));
  args->search_only.push_back(
      cmd->add_option("--time-budget", args->time_budget,
                      "seconds (0: none; a point each with --exponent): the search starts no "
                      "evaluation after 2/3 of it, certifying censored pairs past N gets the rest "
                      "(--layers 2 likewise, past N up to 20000 tokens); a "
                      "stop keeps the best certified pair and says so (limited_by)")
          ->default_val(60.0));
  args->search_only.push_back(
      cmd->add_option("--exponent", args->exponent,
                      "eps|scale|period|alphabet|locality|heads: one search for the largest "
                      "certified T* a grid value, then T*'s fitted exponent with its 95% interval "
                      "against the bound's (docs/refute.md §6); witnesses in --out-dir (default "
                      "refute-exponent)"));
  args->search_only.push_back(cmd->add_option(
      "--grid", args->grid, "the values of --exponent's parameter, comma-separated"));
  cmd->add_option("--separation", s.separation,
                  "κ: a pair counts only when some string has a gap ≥ κ·ε")
      ->default_val(2.0);
  cmd->add_option("--family-dir", args->family_dir,
                  "judge a user's family instead of searching a class: DIR holds a subdirectory "
                  "a member with f.json and g.json (as `ltsim construct family ... --out-dir "
                  "DIR/NAME` writes them); each member's certified T* (exact up to "
                  "--max-length; a T* in meta is checked, never used) against the bound at its "
                  "constants, refuted when one exceeds it (docs/refute.md §7); with --out-dir, "
                  "family.json and DIR/<member>/refute.json that `ltsim replay` reproduces");
  cmd->add_option("--layers", args->layers,
                  "1 (default) or 2: search two-layer pairs (docs/refute.md §8); --heads is then "
                  "the first layer's heads, --max-lipschitz L0 bounds the output scale")
      ->default_val(1);
  args->two_only.push_back(cmd->add_option("--second-heads", args->two.cls.second_heads,
                                           "--layers 2: the second layer's heads (default 1)"));
  args->two_only.push_back(cmd->add_option(
      "--bias-scaling", args->bias_scaling,
      "--layers 2: the first layer's local-bias scaling, none or log (φ·ln i; default none)"));
  args->two_only.push_back(cmd->add_option(
      "--second-modes", args->second_modes,
      "--layers 2: the second layer's allowed attention modes (default: those of --modes)"));
  args->two_only.push_back(cmd->add_option(
      "--threshold-evaluations", args->two.threshold_evaluations,
      "--layers 2: evaluation cap of each path-search threshold run (default 50000); a run it "
      "stops is certified up to its last complete length only"));
  AddSeed(cmd, s.seed);
  AddThreads(cmd, s.threads);
  AddOutDir(cmd, args->out,
            "write f.json, g.json, witness.txt and refute.json in this directory (--family-dir: "
            "family.json and those four in a subdirectory a member)");
  AddDeprecated(cmd, "--replay", args->replay, "ltsim replay FILE");
  cmd->add_flag("--json", args->json, "print JSON");
  args->search_only.push_back(
      cmd->add_flag("--random", s.random_only,
                    "the baseline: every evaluation a fresh random start, no climbing"));
  args->search_only.push_back(
      cmd->add_flag("!--no-family-seeds", s.family_seeds,
                    "start every climb from a random pair (not from the built-in families)"));
  for (const char* name :
       {"--exponent", "--grid", "--family-dir", "--starts", "--no-family-seeds", "--min-margin"})
    args->one_only.push_back(cmd->get_option(name));
  cmd->callback([args, &exit_code] { exit_code = Run(*args); });
}

}  // namespace ltsim::cli
