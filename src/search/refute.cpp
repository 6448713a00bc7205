// `ltsim refute`: judge the raw-T* search's pairs against a conjectured bound (docs/refute.md).
#include "ltsim/search/refute.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "ltsim/core/error.h"
#include "ltsim/fuzz/recorded.h"
#include "ltsim/io/json.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/model_file.h"
#include "ltsim/search/two_layer_refute.h"

namespace ltsim {
namespace {

ConstantMap PairOf(const Transformer& f, const Transformer& g, double eps) {
  ConstantMap c = PairConstants(f, g);
  c["eps"] = eps;
  return c;
}

bool IsRegistryName(const std::string& bound) {
  for (const Bound& b : BoundRegistry())
    if (b.name == bound) return true;
  return false;
}

RefuteCandidate Judge(const RefuteOptions& o, const RawRestart& r) {
  RefuteCandidate c;
  c.restart = r.index;
  c.constants = PairOf(r.f, r.g, o.search.eps);
  c.bound_value = EvaluateRefuteBound(o.bound, c.constants);
  // A censored pair counts at one past the length it is certified to (N, or more after
  // CertifyPastCap): a lower bound on its T*.
  const double t = r.best.first_disagreement ? static_cast<double>(*r.best.first_disagreement)
                                             : static_cast<double>(r.best.checked_up_to + 1);
  if (c.constants.count("L")) c.lipschitz = c.constants.at("L");
  c.eps_over_L = t * o.search.eps / c.lipschitz;
  if (r.best.valid && std::isfinite(c.bound_value) && c.bound_value > 0) {
    c.ratio = t / c.bound_value;
    c.refutes = r.best.separated && t > c.bound_value;
  }
  return c;
}

}  // namespace

double EvaluateRefuteBound(const std::string& bound, const ConstantMap& constants) {
  if (IsRegistryName(bound)) return FindBound(bound).value(constants);
  return EvaluateBoundExpression(bound, constants);
}

void ValidateRefuteBound(const std::string& bound) {
  if (bound.empty()) throw OptionError("bound", "an expression is required");
  ConstantMap probe;
  for (const char* name : {"L", "Delta", "S", "tau", "gamma", "p", "C", "gamma_pos", "D", "eps"})
    probe[name] = 1.0;
  EvaluateRefuteBound(bound, probe);  // throws InputError naming the expression
}

namespace {

bool Censored(const RawEvaluation& e) { return e.valid && e.separated && !e.first_disagreement; }

std::array<double, 3> RankOf(const RefuteOptions& o, const RawRestart& r) {
  if (r.trajectory.empty()) return {-2.0, -2.0, -2.0};  // never evaluated (time budget)
  if (o.maximise_first_disagreement) return {r.best.score, 0.0, 0.0};
  const RefuteCandidate c = Judge(o, r);
  return {c.refutes ? 1.0 : 0.0, r.best.valid && r.best.separated ? 1.0 : 0.0,
          std::isnan(c.ratio) ? -1.0 : c.ratio};
}

// Certifies the best censored pairs past the search's cap (docs/refute.md §4): in rank order,
// each given an equal share of the seconds left, up to the bound's value (enough to decide it)
// or, when maximising T*, the seconds left in turn, up to the exact threshold's largest length.
// True when time stopped it short of a pair's target or before a pair's turn.
bool CertifyCensored(const RefuteOptions& o, RefuteResult& result) {
  bool stopped_by_time = false;
  RawSearchResult& s = result.search;
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(s.restarts.size()); ++i)
    if (!s.restarts[i].trajectory.empty() && Censored(s.restarts[i].best)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return RankOf(o, s.restarts[a]) > RankOf(o, s.restarts[b]);
  });
  if (static_cast<int>(order.size()) > o.certify_pairs) order.resize(o.certify_pairs);
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  for (std::size_t k = 0; k < order.size(); ++k) {
    RawRestart& r = s.restarts[order[k]];
    std::uint64_t target = kThresholdMaxLength;
    if (!o.maximise_first_disagreement) {
      const RefuteCandidate c = Judge(o, r);
      if (c.refutes) break;  // already decided: T* ≥ N + 1 > bound
      if (!std::isfinite(c.bound_value) || !(c.bound_value > 0)) continue;
      // Certified agreement up to ⌈bound⌉ gives T* > bound.
      if (c.bound_value < static_cast<double>(kThresholdMaxLength))
        target = static_cast<std::uint64_t>(std::ceil(c.bound_value));
    }
    // Maximising T*, the best censored pair is the point: it gets every second left, and the
    // others what it leaves (a pair certified exact stays the best unless a later one is
    // certified beyond its T*). Against a bound, an equal share each.
    const double left =
        (o.certify_seconds - elapsed()) /
        (o.maximise_first_disagreement ? 1.0 : static_cast<double>(order.size() - k));
    if (left <= 0) {
      stopped_by_time = true;
      break;
    }
    const bool timed_before = r.best.stopped_by_time;
    r.best.stopped_by_time = false;
    const bool further = CertifyPastCap(o.search, r.f, r.g, r.best, target, left, o.search.threads);
    if (further) ++result.certified_past_cap;
    if (r.best.stopped_by_time) stopped_by_time = true;
    // The search's time stop still ends the exact region when certification did not extend it.
    if (!further) r.best.stopped_by_time = r.best.stopped_by_time || timed_before;
    if (!o.maximise_first_disagreement && Judge(o, r).refutes) break;
  }
  result.certify_seconds = elapsed();
  // The best pair again, by the same order, and its 50-digit recheck (its witness may be new).
  int best = s.best_restart;
  for (int i = 0; i < static_cast<int>(s.restarts.size()); ++i)
    if (RankOf(o, s.restarts[i]) > RankOf(o, s.restarts[best])) best = i;
  s.best_restart = best;
  if (result.certified_past_cap > 0)
    s.recheck = RecheckRaw(o.search, s.restarts[best].f, s.restarts[best].g, s.restarts[best].best);
  return stopped_by_time;
}

// What limits the verdict (empty: genuine) and why, in words.
// `certify_stopped_by_time`: time stopped certifying censored pairs past N (CertifyCensored).
// Which evaluation cap censored a pair: the search's (below N) or, past N, the exact threshold's
// own default cap in an untimed certification run (CertifyPastCap).
std::string CapText(const RefuteOptions& o, const RawEvaluation& e) {
  if (e.checked_up_to < o.search.max_length)
    return fmt::format("the search's evaluation cap of {} statistics, below max_length {}",
                       o.search.search_evaluation_cap, o.search.max_length);
  return fmt::format("the exact threshold's evaluation cap of {} statistics, certifying past N",
                     o.search.certify_evaluation_cap);
}

void DecideLimits(const RefuteOptions& o, RefuteResult& result, bool certify_stopped_by_time) {
  RawSearchResult& s = result.search;
  const bool search_stopped_by_time = s.stopped_by_time;
  std::string reason;
  bool capped = false;  // an evaluation cap censored the limiting pair (RawCensoredBy)
  if (!result.refuted) {
    const RawRestart& best = s.restarts[result.best.restart];
    if (o.maximise_first_disagreement) {
      if (Censored(best.best)) {
        reason = fmt::format(
            "the best pair agrees up to {} (certified{}), so its T* is only a lower bound",
            best.best.checked_up_to,
            best.best.censored_by_cap ? ", censored there by " + CapText(o, best.best)
                                      : std::string());
        capped = best.best.censored_by_cap;
      }
    } else {
      for (const RawRestart& r : s.restarts) {
        if (r.trajectory.empty() || !Censored(r.best)) continue;
        const RefuteCandidate c = Judge(o, r);
        if (std::isfinite(c.bound_value) &&
            static_cast<double>(r.best.checked_up_to) >= c.bound_value)
          continue;
        // Below N only when the search's evaluation cap stopped its threshold (and
        // certification past it did not reach N); past N, an untimed certification run's cap.
        capped = r.best.censored_by_cap;
        reason = fmt::format(
            "a separated pair agrees up to {} (certified{}) while the bound at its constants is "
            "{:.6g}: its T* may exceed the bound; certification stopped at {}",
            r.best.checked_up_to,
            capped ? ", censored there by " + CapText(o, r.best) : std::string(), c.bound_value,
            r.best.checked_up_to >= kThresholdMaxLength
                ? "the exact threshold's largest length"
                : "the end of the certification's time (or its pair limit)");
        break;
      }
    }
    // A censored limiting pair: the length limits the verdict, and when an evaluation cap ended
    // its exact region below the length it was certified to, that cap as well.
    if (!reason.empty()) {
      result.limited_by.push_back("max_length");
      if (capped) result.limited_by.push_back("threshold_evaluations");
    }
    // A limited verdict whose certification time ran out: a longer budget may decide it.
    if (!reason.empty() && certify_stopped_by_time && !search_stopped_by_time) {
      result.limited_by.push_back("time_budget");
      reason += "; the time budget stopped certifying censored pairs past N";
    }
  }
  // The result depends on timing whenever time stopped the search or its certification.
  if (certify_stopped_by_time) s.stopped_by_time = true;
  if (search_stopped_by_time) {
    result.limited_by.push_back("time_budget");
    reason += fmt::format(
        "{}the time budget stopped the search after {} of {} evaluations "
        "({} of {} climbs run)",
        reason.empty() ? "" : "; ", s.evaluations, o.search.budget, s.restarts_run,
        s.restarts.size());
  }
  result.limited_by_reason = reason;
}

}  // namespace

RefuteResult RunRefute(const RefuteOptions& o) {
  ValidateRefuteBound(o.bound);
  if (!(o.certify_seconds >= 0) || !std::isfinite(o.certify_seconds))
    throw OptionError("certify_seconds", "must be finite and ≥ 0");
  RefuteResult result;
  result.options = o;
  // The best candidate: a refuting one first, then separated pairs (the only ones that count,
  // docs/refute.md) by ratio, then the rest by ratio; ties keep the lower restart index. The
  // search reports (and shrinks) its best by this order. Maximising T*: by the score.
  RawSearchOptions search = o.search;
  if (!o.maximise_first_disagreement)
    search.rank = [&o](const Transformer& f, const Transformer& g, const RawEvaluation& e) {
      RawRestart r;
      r.f = f;
      r.g = g;
      r.best = e;
      r.trajectory.push_back(e.score);
      return RankOf(o, r);
    };
  result.search = RunRawSearch(search);
  result.search.options.rank = nullptr;
  const bool certify_stopped_by_time = o.certify_seconds > 0 && CertifyCensored(o, result);
  result.best = Judge(o, result.search.restarts[result.search.best_restart]);
  result.refuted = result.best.refutes;
  DecideLimits(o, result, certify_stopped_by_time);
  // The best family for the class, evaluated like any pair.
  for (const auto& [name, pair] : FamilySeeds(o.search)) {
    const RawEvaluation e = EvaluateRawPair(o.search, pair.first, pair.second);
    if (!e.valid || !e.separated) continue;
    // Without a disagreement, one past the length it is certified to (N + 1 only when checked
    // to N): a lower bound on its T*.
    const std::uint64_t t = e.first_disagreement.value_or(e.checked_up_to + 1);
    if (!result.family_first_disagreement || t > *result.family_first_disagreement) {
      result.family_name = name;
      result.family_first_disagreement = t;
      const double L = std::max(LipschitzConstant(pair.first), LipschitzConstant(pair.second));
      result.family_eps_over_L = static_cast<double>(t) * o.search.eps / L;
    }
  }
  return result;
}

RefuteResult JudgeGivenPair(const RefuteOptions& options, const Transformer& f,
                            const Transformer& g, const std::string& start,
                            const std::string& f_name, const std::string& g_name) {
  ValidateRefuteBound(options.bound);
  RefuteOptions o = options;
  // The class the documents describe is the pair's own: its sizes, its attention and its L.
  RawEvaluation e = EvaluateGivenPair(o.search, f, g, f_name, g_name);
  PairClass& c = o.search.cls;
  c.alphabet = f.alphabet;
  c.period = f.period;
  c.locality = f.locality;
  c.width = f.width;
  c.heads = static_cast<int>(f.layers[0].heads.size());
  c.mlp_width = f.layers[0].mlp ? static_cast<int>(f.layers[0].mlp->in.rows()) : 0;
  c.modes = {f.layers[0].attention};
  if (g.layers[0].attention != f.layers[0].attention) c.modes.push_back(g.layers[0].attention);
  c.max_lipschitz = std::max(LipschitzConstant(f), LipschitzConstant(g));
  if (!e.valid) throw InputError(f_name + ", " + g_name + ": " + e.note);
  RefuteResult result;
  result.options = o;
  RawRestart r;
  r.start = start;
  r.f = f;
  r.g = g;
  r.best = std::move(e);
  r.trajectory.push_back(r.best.score);
  result.search.options = o.search;
  result.search.evaluations = 1;
  result.search.restarts_run = 1;
  result.search.recheck = RecheckRaw(o.search, f, g, r.best);
  result.search.restarts.push_back(std::move(r));
  result.best = Judge(o, result.search.restarts[0]);
  result.refuted = result.best.refutes;
  DecideLimits(o, result, false);
  return result;
}

nlohmann::json LengthScales(const RawSearchOptions& o) {
  nlohmann::json scales = nlohmann::json::object();
  const PairClass& c = o.cls;
  auto number = [](double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
  };
  for (const Attention mode : c.modes) {
    nlohmann::json s;
    if (mode == Attention::kHardmax) {
      s = {{"constant", "L0/eps"}, {"value", c.max_lipschitz / o.eps}};
    } else if (mode == Attention::kSoftmax) {
      // Logits in [−B, B]: a key's weight is at least e^(−2B) times any other's, so one key
      // type moves an average by ≈ e^(2B)/T and lengths beyond e^(2B) are needed before a
      // single type's count stops mattering (docs/refute.md §5.2).
      s = {{"constant", "exp(2*B)"}, {"value", number(std::exp(2.0 * c.max_logit))}};
    } else {
      s = {{"constant", "2^(p/gamma0)"},
           {"value", number(c.min_margin > 0 ? std::exp2(c.precision_bits / c.min_margin)
                                             : std::numeric_limits<double>::infinity())}};
    }
    if (s["value"].is_null()) s["note"] = "unbounded: T* is not bounded by L in this mode";
    scales[kAttentionNames.Name(mode)] = s;
  }
  return scales;
}

nlohmann::json RefuteToJson(const RefuteResult& result) {
  const RefuteOptions& o = result.options;
  const RawSearchResult& s = result.search;
  const RawRestart& r = s.restarts[result.best.restart];
  auto number = [](double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
  };
  nlohmann::json j;
  // No thread count: the document is byte-identical for any --threads.
  j["context"] = {{"command", "refute"}, {"seed", o.search.seed}};
  j["refuted"] = result.refuted;
  j["first_disagreement"] = r.best.first_disagreement ? nlohmann::json(*r.best.first_disagreement)
                                                      : nlohmann::json(nullptr);
  j["first_disagreement_lower_bound"] =
      r.best.first_disagreement ? *r.best.first_disagreement : r.best.checked_up_to + 1;
  j["checked_up_to"] = r.best.checked_up_to;
  const std::optional<std::string> censored_by = RawCensoredBy(r.best);
  j["censored_by"] = censored_by ? nlohmann::json(*censored_by) : nlohmann::json(nullptr);
  j["certified_max_length"] = std::max(r.best.certified_max_length, std::uint64_t{1});
  j["limited_by"] =
      result.limited_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(result.limited_by);
  j["limited_by_reason"] = result.limited_by_reason;
  j["certified_past_cap"] = result.certified_past_cap;
  j["max_logit"] = std::isfinite(o.search.cls.max_logit) ? nlohmann::json(o.search.cls.max_logit)
                                                         : nlohmann::json(nullptr);
  j["length_scale"] = LengthScales(o.search);
  j["starts"] = RawStartsName(o.search.family_seeds ? o.search.starts : RawStarts::kRandom);
  j["time_budget"] = o.search.time_budget;
  j["stopped_by_time"] = s.stopped_by_time;
  j["bound"] = o.bound;
  j["bound_value"] = number(result.best.bound_value);
  j["ratio"] = number(result.best.ratio);
  j["evaluations"] = s.evaluations;
  j["budget"] = o.search.budget;
  j["shrink_evaluations"] = s.shrink_evaluations;
  j["shrink_accepted"] = s.shrink_accepted;
  j["seed"] = o.search.seed;
  j["eps"] = o.search.eps;
  j["max_length"] = o.search.max_length;
  j["separation"] = o.search.separation;
  j["separated"] = r.best.separated;
  j["witness_text"] = RunLengthText(r.best.witness);
  j["gap"] = number(r.best.gap);
  j["largest_gap_below"] = number(r.best.largest_gap_below);
  j["sup_gap"] = number(r.best.sup_gap);
  j["sup_gap_length"] =
      r.best.sup_statistic ? nlohmann::json(r.best.sup_statistic->length) : nlohmann::json(nullptr);
  j["sup_statistic"] = r.best.sup_statistic
                           ? nlohmann::json{{"length", r.best.sup_statistic->length},
                                            {"far", r.best.sup_statistic->far},
                                            {"suffix", r.best.sup_statistic->suffix}}
                           : nlohmann::json(nullptr);
  j["start"] = r.start;
  j["lipschitz"] = number(result.best.lipschitz);
  j["first_disagreement_eps_over_L"] = number(result.best.eps_over_L);
  nlohmann::json constants = nlohmann::json::object();
  for (const auto& [k, v] : result.best.constants) constants[k] = number(v);
  j["constants"] = constants;
  j["recheck"] = {{"digits", 50},
                  {"status", kRecheckValueNames.Name(s.recheck.status)},
                  {"gap", s.recheck.gap_text},
                  {"sup_gap", s.recheck.sup_gap_text}};
  j["family"] = result.family_name.empty()
                    ? nlohmann::json(nullptr)
                    : nlohmann::json{{"name", result.family_name},
                                     {"first_disagreement", *result.family_first_disagreement},
                                     {"first_disagreement_eps_over_L", result.family_eps_over_L}};
  nlohmann::json restarts = nlohmann::json::array();
  for (const RawRestart& x : s.restarts)
    restarts.push_back({{"index", x.index},
                        {"start", x.start},
                        {"first_disagreement", x.best.first_disagreement
                                                   ? nlohmann::json(*x.best.first_disagreement)
                                                   : nlohmann::json(nullptr)},
                        {"separated", x.best.separated},
                        {"applied", x.applied_by_kind},
                        {"accepted", x.accepted_by_kind},
                        {"score", x.best.score}});
  j["restarts"] = restarts;
  return j;
}

bool ReplayRefute(const std::string& path, std::string* report) {
  const io::Json doc = io::ReadJsonFile(path, "refute result");
  const io::JsonReader j(doc, path);
  if (j.Has("layers") && j.At("layers").Int(1, 2) == 2) return ReplayTwoLayerRefute(path, report);
  if (j.Has("format")) return ReplayRawWitness(path, report);
  // A refute.json: the pair is DIR/f.json and DIR/g.json beside it.
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  ReplayInput in;
  in.f = ReadModel((dir / "f.json").string());
  in.g = ReadModel((dir / "g.json").string());
  ReadReplayNumbers(j, in);
  std::string pair_report;
  const bool pair_ok = ReplayPair(in, &pair_report);
  // The verdict again, from the replayed T* and the bound at the pair's constants.
  const std::string bound = j.At("bound").String();
  const double value = EvaluateRefuteBound(bound, PairOf(in.f, in.g, in.eps));
  const double t = in.first_disagreement ? static_cast<double>(*in.first_disagreement)
                                         : static_cast<double>(in.max_length + 1);
  const bool refuted = in.separated && std::isfinite(value) && value > 0 && t > value;
  const bool same_verdict = refuted == j.At("refuted").Bool();
  // The verdict's numbers as RefuteToJson writes them, recomputed from the pair and T*; of the
  // constants, those the file records.
  auto number = [](double x) {
    return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
  };
  const ConstantMap constants = PairOf(in.f, in.g, in.eps);
  const double lipschitz = constants.count("L") ? constants.at("L") : std::nan("");
  nlohmann::json fresh;
  fresh["first_disagreement_lower_bound"] =
      in.first_disagreement ? *in.first_disagreement : in.max_length + 1;
  fresh["bound_value"] = number(value);
  fresh["ratio"] = number(std::isfinite(value) && value > 0 ? t / value : std::nan(""));
  fresh["lipschitz"] = number(lipschitz);
  fresh["first_disagreement_eps_over_L"] = number(t * in.eps / lipschitz);
  std::vector<std::string> differences;
  for (const char* key : {"first_disagreement_lower_bound", "bound_value", "ratio", "lipschitz",
                          "first_disagreement_eps_over_L"})
    if (j.Has(key) && !(std::string(key) == "ratio" && j.At(key).json().is_null()))
      CompareRecorded(nlohmann::json::parse(j.At(key).json().dump()), fresh[key], key, differences);
  if (j.Has("constants") && j.At("constants").json().is_object())
    for (const auto& [name, recorded] : j.At("constants").json().items()) {
      const auto it = constants.find(name);
      CompareRecorded(nlohmann::json::parse(recorded.dump()),
                      it == constants.end() ? nlohmann::json("absent") : number(it->second),
                      "constants." + name, differences);
    }
  if (report)
    *report = fmt::format("{}; bound '{}' = {} at the pair's constants, refuted {} (recorded {}){}",
                          pair_report, bound, value, refuted, j.At("refuted").Bool(),
                          differences.empty() ? std::string()
                                              : "; recorded verdict numbers that differ: " +
                                                    DifferenceSummary(differences));
  return pair_ok && same_verdict && differences.empty();
}

}  // namespace ltsim
