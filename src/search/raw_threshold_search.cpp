// The raw-T* search: class constraints, evaluation with separation, hill climbs, recheck, replay
// (docs/refute.md).
#include "ltsim/search/raw_threshold_search.h"

#include <fmt/format.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <boost/random/discrete_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <mutex>

#include "ltsim/construct/families.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/precise.h"
#include "ltsim/fuzz/recorded.h"
#include "ltsim/io/json.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"
#include "raw_internal.h"

namespace ltsim {
namespace {

using raw::Engine;

double Score(const RawSearchOptions& o, const RawEvaluation& e) {
  if (!e.valid) return -1.0;
  // A pair without a disagreement counts one past the length it is certified to: N + 1, or
  // less when the search's evaluation cap (RawSearchOptions::evaluation_cap) stopped it.
  const double t = e.first_disagreement ? static_cast<double>(*e.first_disagreement)
                                        : static_cast<double>(e.checked_up_to + 1);
  if (e.separated) return t;
  // Partial credit below any separated pair of the same T*: how far the largest gap is on its
  // way from ε to κε (a pair whose gap never exceeds ε scores 0).
  const double progress = std::clamp((e.sup_gap / o.eps - 1.0) / (o.separation - 1.0), 0.0, 1.0);
  return 0.5 * t * progress * progress;
}

// Pads a family model to the class's sizes: zero coordinates, heads and units; positional rows
// for the class's Δ; bias entries for its τ; extra tokens copy `twin`'s embedding row.
Transformer PadToClass(const PairClass& cls, const Transformer& m, int twin) {
  Transformer p;
  p.name = m.name;
  p.meta_json = m.meta_json;
  p.alphabet = cls.alphabet;
  p.width = cls.width;
  p.period = cls.period;
  p.locality = cls.locality;
  p.tie_tolerance = m.tie_tolerance;
  p.embedding = Matrix::Zero(cls.alphabet, cls.width);
  for (int s = 0; s < cls.alphabet; ++s)
    p.embedding.row(s).head(m.width) = m.embedding.row(s < m.alphabet ? s : twin);
  p.positional = Matrix::Zero(cls.period, cls.width);
  if (m.period == cls.period) p.positional.leftCols(m.width) = m.positional;
  Layer layer;
  layer.attention = m.layers[0].attention;
  layer.precision_bits = m.layers[0].precision_bits;
  for (int h = 0; h < cls.heads; ++h) {
    Head head{Matrix::Zero(cls.width, cls.width), Matrix::Zero(cls.width, cls.width),
              Vector::Zero(cls.locality + 1)};
    if (h < static_cast<int>(m.layers[0].heads.size())) {
      const Head& from = m.layers[0].heads[h];
      head.qk.topLeftCorner(m.width, m.width) = from.qk;
      head.ov.topLeftCorner(m.width, m.width) = from.ov;
      head.bias.head(from.bias.size()) = from.bias;
    }
    layer.heads.push_back(head);
  }
  if (cls.mlp_width > 0) {
    Mlp mlp{Matrix::Zero(cls.mlp_width, cls.width), Vector::Zero(cls.mlp_width),
            Matrix::Zero(cls.width, cls.mlp_width)};
    if (m.layers[0].mlp) {
      const Mlp& from = *m.layers[0].mlp;
      mlp.in.topLeftCorner(from.in.rows(), m.width) = from.in;
      mlp.in_bias.head(from.in_bias.size()) = from.in_bias;
      mlp.out.topLeftCorner(m.width, from.out.cols()) = from.out;
    }
    layer.mlp = mlp;
  }
  p.layers.push_back(layer);
  p.readout_weight = Matrix::Zero(1, cls.width);
  p.readout_weight.leftCols(m.width) = m.readout_weight;
  p.readout_bias = m.readout_bias;
  return p;
}

// An a-priori bound on |f(x)| over all strings (Frobenius norms bound the spectral ones):
// |b| + ‖W‖·(‖u‖ + ‖B‖·(‖A‖·‖u‖ + ‖a‖)), ‖u‖ ≤ R·(1 + Σ_h ‖O_h‖).
double OutputBound(const Transformer& m) {
  double radius = 0.0;
  for (int s = 0; s < m.alphabet; ++s)
    for (int r = 0; r < m.period; ++r)
      radius = std::max(radius, (m.embedding.row(s) + m.positional.row(r)).norm());
  double values = 0.0;
  for (const Head& h : m.layers[0].heads) values += h.ov.norm();
  const double u = radius * (1.0 + values);
  double mlp = 0.0;
  if (m.layers[0].mlp) {
    const Mlp& p = *m.layers[0].mlp;
    mlp = p.out.norm() * (p.in.norm() * u + p.in_bias.norm());
  }
  return m.readout_bias.cwiseAbs().maxCoeff() + m.readout_weight.norm() * (u + mlp);
}

/// Outputs above this make the evaluators' agreement (1e-9 relative, eval/evaluate.h) coarser
/// than the gaps that decide T*; such pairs are not evaluated.
constexpr double kMaxOutputBound = 1e4;

bool Allows(const PairClass& cls, Attention mode) {
  return std::find(cls.modes.begin(), cls.modes.end(), mode) != cls.modes.end();
}

std::optional<FamilyMember> TryBuild(const std::string& name, const FamilyValues& values) {
  try {
    return BuildFamilyMember(name, values);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace

void ValidatePairClass(const PairClass& c) {
  auto need = [](bool ok, const char* option, const std::string& rule) {
    if (!ok) throw OptionError(option, rule);
  };
  need(c.alphabet >= 2 && c.alphabet <= 64, "alphabet",
       fmt::format("must be in [2, 64], not {}", c.alphabet));
  need(c.period >= 1 && c.period <= 32, "period",
       fmt::format("must be in [1, 32], not {}", c.period));
  need(c.locality >= 0 && c.locality <= 4, "locality",
       fmt::format("must be in [0, 4], not {}", c.locality));
  need(c.width >= 1 && c.width <= 64, "width", fmt::format("must be in [1, 64], not {}", c.width));
  need(c.heads >= 1 && c.heads <= 16, "heads", fmt::format("must be in [1, 16], not {}", c.heads));
  need(c.mlp_width >= 0 && c.mlp_width <= 64, "mlp_width",
       fmt::format("must be in [0, 64], not {}", c.mlp_width));
  need(!c.modes.empty(), "modes", "at least one attention mode");
  need(c.precision_bits >= 1 && c.precision_bits <= 64, "precision_bits",
       fmt::format("must be in [1, 64], not {}", c.precision_bits));
  need(std::isfinite(c.min_margin) && c.min_margin >= 0, "min_margin",
       fmt::format("must be finite and ≥ 0, not {}", c.min_margin));
  need(std::isfinite(c.max_lipschitz) && c.max_lipschitz > 0, "max_lipschitz",
       fmt::format("must be finite and > 0, not {}", c.max_lipschitz));
  need(!std::isnan(c.max_logit) && c.max_logit > 0, "max_logit",
       fmt::format("must be > 0, not {}", c.max_logit));
  need(c.alphabet * c.period <= kThresholdMaxTypes, "alphabet",
       fmt::format("alphabet·period = {} over the exact threshold's {} types",
                   c.alphabet * c.period, kThresholdMaxTypes));
}

double LogitScale(const Transformer& m) {
  double radius = 0.0;
  for (int s = 0; s < m.alphabet; ++s)
    for (int r = 0; r < m.period; ++r)
      radius = std::max(radius, (m.embedding.row(s) + m.positional.row(r)).norm());
  double scale = 0.0;
  for (const Head& h : m.layers[0].heads)
    scale = std::max(scale, SpectralNorm(h.qk) * radius * radius +
                                (h.bias.size() ? h.bias.cwiseAbs().maxCoeff() : 0.0));
  return scale;
}

bool ProjectOntoClass(const PairClass& cls, Transformer& model) {
  const double L = LipschitzConstant(model);
  if (!std::isfinite(L)) return false;
  if (L > cls.max_lipschitz) model.readout_weight *= cls.max_lipschitz / L * (1.0 - 1e-12);
  if (model.layers[0].attention != Attention::kHardmax && std::isfinite(cls.max_logit)) {
    const double scale = LogitScale(model);
    if (!std::isfinite(scale)) return false;
    if (scale > cls.max_logit) {
      const double k = cls.max_logit / scale * (1.0 - 1e-12);
      for (Head& h : model.layers[0].heads) {
        h.qk *= k;
        h.bias *= k;
      }
    }
  }
  if (model.layers[0].attention == Attention::kFinite && cls.min_margin > 0) {
    const double gamma = LogitMargin(model);
    if (!(gamma > 0)) return false;
    if (std::isfinite(gamma) && gamma < cls.min_margin) {
      const double k = cls.min_margin / gamma * (1.0 + 1e-12);
      for (Head& h : model.layers[0].heads) {
        h.qk *= k;
        h.bias *= k;
      }
    }
  }
  return true;
}

bool InClass(const PairClass& cls, const Transformer& m) {
  if (m.layers.size() != 1 || m.alphabet != cls.alphabet || m.width != cls.width ||
      m.period != cls.period || m.locality != cls.locality ||
      static_cast<int>(m.layers[0].heads.size()) != cls.heads || m.outputs() != 1)
    return false;
  const Layer& layer = m.layers[0];
  const int units = layer.mlp ? static_cast<int>(layer.mlp->in.rows()) : 0;
  if (units != cls.mlp_width || !Allows(cls, layer.attention)) return false;
  if (layer.attention == Attention::kFinite && layer.precision_bits != cls.precision_bits)
    return false;
  if (!(LipschitzConstant(m) <= cls.max_lipschitz * (1 + 1e-9))) return false;
  if (layer.attention == Attention::kFinite && !(LogitMargin(m) >= cls.min_margin * (1 - 1e-9)))
    return false;
  if (layer.attention != Attention::kHardmax && std::isfinite(cls.max_logit) &&
      !(LogitScale(m) <= cls.max_logit * (1 + 1e-9)))
    return false;
  return true;
}

namespace {

// EvaluateRawPair past its class check: the statistics are over o.cls's alphabet, period and
// locality.
RawEvaluation EvaluateInClass(const RawSearchOptions& o, const Transformer& f, const Transformer& g,
                              const std::vector<TypeCounts>& hints) {
  RawEvaluation e;
  if (!(std::max(OutputBound(f), OutputBound(g)) <= kMaxOutputBound)) {
    e.note = "outputs may exceed 1e4: rounding would decide the gaps";
    return e;
  }
  ThresholdOptions t;
  t.epsilon = o.eps;
  t.max_length = o.max_length;
  t.threads = 1;  // the climbs run in parallel; one thread each keeps the arena small
  if (o.evaluation_cap > 0) t.max_evaluations = o.evaluation_cap;
  // The pruned search's cell bounds are not counted as evaluations, so a hard pair can pass
  // the evaluation cap's windows slowly: a time-budgeted search also bounds its time.
  if (o.evaluation_seconds) t.time_budget = std::max(0.5, o.evaluation_seconds());
  ThresholdResult r;
  try {
    r = FindThreshold(f, g, t);
  } catch (const InputError& error) {
    e.note = error.what();
    return e;
  }
  e.valid = true;
  e.stopped_by_time = r.stopped == ThresholdStop::kTimeBudget;
  e.censored_by_cap = o.evaluation_cap > 0 && r.stopped == ThresholdStop::kEvaluations;
  e.first_disagreement = r.first_disagreement;
  e.checked_up_to = r.checked_up_to;
  e.certified_max_length = r.first_disagreement || r.complete
                               ? o.max_length
                               : static_cast<std::uint64_t>(r.checked_up_to);
  e.statistics = r.evaluations;
  const std::size_t below = r.first_disagreement ? *r.first_disagreement - 1 : r.checked_up_to;
  for (std::size_t k = 0; k < below && k < r.max_gap_per_length.size(); ++k)
    e.largest_gap_below = std::max(e.largest_gap_below, r.max_gap_per_length[k]);
  Engine engine(StreamSeed(o.seed, "raw-separation", r.evaluations));
  auto consider = [&](const TypeCounts& c) {
    const double gap = raw::StatisticGap(f, g, c);
    if (std::isfinite(gap) && gap > e.sup_gap) {
      e.sup_gap = gap;
      e.sup_statistic = c;
    }
  };
  if (r.first_disagreement) {
    e.witness = r.witness;
    e.gap = r.gap;
    const auto source = MakeRunSource(r.witness, "witness");
    const TypeCounts w = CountTypes(*source, o.cls.alphabet, o.cls.period, o.cls.locality);
    for (std::uint64_t k = 1; k <= (std::uint64_t{1} << 30); k *= 4)
      consider(raw::ScaleStatistic(w, k));
  }
  for (const TypeCounts& hint : hints)
    if (hint.alphabet == o.cls.alphabet && hint.period == o.cls.period &&
        hint.locality == o.cls.locality && hint.length >= 1)
      consider(hint);
  for (std::uint64_t len :
       {o.max_length, o.max_length << 6, o.max_length << 12, o.max_length << 20}) {
    const TypeCounts c = raw::MaximiseOverStatistics(
        o.cls.alphabet, o.cls.period, o.cls.locality, len,
        [&](const TypeCounts& s) {
          const double gap = raw::StatisticGap(f, g, s);
          return std::isfinite(gap) ? gap : -1.0;
        },
        3, 40, engine, nullptr);
    consider(c);
  }
  e.separated = e.sup_gap >= o.separation * o.eps;
  e.score = Score(o, e);
  return e;
}

}  // namespace

RawEvaluation EvaluateRawPair(const RawSearchOptions& o, const Transformer& f, const Transformer& g,
                              const std::vector<TypeCounts>& hints) {
  if (!InClass(o.cls, f) || !InClass(o.cls, g)) {
    RawEvaluation e;
    e.note = "outside the class";
    return e;
  }
  return EvaluateInClass(o, f, g, hints);
}

RawEvaluation EvaluateGivenPair(const RawSearchOptions& options, const Transformer& f,
                                const Transformer& g, const std::string& f_name,
                                const std::string& g_name) {
  if (f.layers.size() != 1 || g.layers.size() != 1)
    throw InputError(f_name + ", " + g_name + ": a given pair must be two one-layer models");
  if (g.alphabet != f.alphabet || g.period != f.period || g.locality != f.locality)
    throw InputError(fmt::format(
        "{} has alphabet {}, period {}, locality {} and {} has {}, {}, {}: a pair's statistics "
        "need the same three",
        f_name, f.alphabet, f.period, f.locality, g_name, g.alphabet, g.period, g.locality));
  RawSearchOptions o = options;
  o.cls.alphabet = f.alphabet;
  o.cls.period = f.period;
  o.cls.locality = f.locality;
  RawEvaluation e = EvaluateInClass(o, f, g, {});
  // A given pair may sit on the separation's boundary (a family's sup gap is often exactly
  // κε): decided in 50 digits, as ReplayPair decides it, so that its witness replays.
  if (e.valid && e.sup_statistic) {
    const PreciseReal sup = PreciseSupDistance(EvaluatePreciseOneLayer(f, *e.sup_statistic),
                                               EvaluatePreciseOneLayer(g, *e.sup_statistic));
    e.separated = sup >= PreciseReal(o.separation) * PreciseReal(o.eps);
  }
  return e;
}

std::vector<std::pair<std::string, std::pair<Transformer, Transformer>>> FamilySeeds(
    const RawSearchOptions& o) {
  std::vector<std::pair<std::string, std::pair<Transformer, Transformer>>> seeds;
  const PairClass& c = o.cls;
  if (!Allows(c, Attention::kHardmax) || c.mlp_width < 1) return seeds;
  auto add = [&](const std::string& name, const FamilyMember& m, int twin) {
    Transformer f = PadToClass(c, m.f, twin), g = PadToClass(c, m.g, twin);
    if (ProjectOntoClass(c, f) && ProjectOntoClass(c, g) && InClass(c, f) && InClass(c, g))
      seeds.push_back({name, {f, g}});
  };
  // bump: L(f) = 3s·R, R = 1 (Δ = 1) or √2; needs width 2 + Δ (Δ > 1) + 1.
  const int bump_width = 1 + (c.period > 1 ? c.period : 0) + 2;
  if (c.width >= bump_width) {
    const double R = c.period > 1 ? std::sqrt(2.0) : 1.0;
    double slope = c.max_lipschitz / (3.0 * R) * 0.999;
    for (int k = 0; k < 4; ++k, slope *= 0.999) {
      if (auto m = TryBuild("bump", {{"slope", slope},
                                     {"eps", o.eps},
                                     {"period", c.period},
                                     {"height", o.separation + 0.25}})) {
        add("bump", *m, 0);
        break;
      }
    }
  }
  // nested: S' = min(S, H, 4) heads, width 2S' + 1; a from L(f) = (1 + ‖A‖)·ΣO·√2.
  const int S = std::min({c.alphabet, c.heads, 4});
  if (S >= 2 && c.width >= 2 * S + 1 && c.period == 1) {
    const double theta = (o.separation + 1.0) * o.eps;
    double sum_o = std::sqrt(S) + std::sqrt(S - 1.0);
    for (int j = 2; j <= S - 1; ++j) sum_o += std::sqrt(j - 1.0);
    const double norm_a = c.max_lipschitz / (sum_o * std::sqrt(2.0)) - 1.0;
    const double sq = norm_a * norm_a - (S - 1) * 4.0 * theta * theta;
    double a = sq > 0 ? std::sqrt(sq / S) * 0.999 : 0.0;
    // A member on a boundary case is refused: a slightly smaller slope first, then ×0.8.
    for (int k = 0; k < 16 && a > theta; ++k, a *= k < 4 ? 0.999 : 0.8) {
      if (auto m = TryBuild(
              "nested",
              {{"alphabet", S}, {"slope", a}, {"eps", o.eps}, {"height", o.separation + 1.0}})) {
        add("nested", *m, S - 1);
        break;
      }
    }
  }
  return seeds;
}

namespace {

RawRestart Climb(const RawSearchOptions& o, int index, const std::string& start_name,
                 std::pair<Transformer, Transformer> start, std::vector<TypeCounts> start_hints,
                 raw::Memory memory, int iterations, const std::function<bool()>& stop) {
  RawRestart restart;
  restart.index = index;
  restart.start = start_name;
  restart.accepted_by_kind.assign(raw::ProposalNames().size(), 0);
  restart.applied_by_kind.assign(raw::ProposalNames().size(), 0);
  Engine engine(StreamSeed(o.seed, "raw-climb", static_cast<std::uint64_t>(index)));
  restart.f = start.first;
  restart.g = start.second;
  restart.best = EvaluateRawPair(o, restart.f, restart.g, start_hints);
  if (restart.best.stopped_by_time) stop();
  restart.trajectory.push_back(restart.best.score);
  // Proposal kinds by weight (raw::ProposalWeights); one that does not apply (or leaves the
  // class) is redrawn, up to 16 times, without spending an evaluation.
  const std::vector<double>& weights = raw::ProposalWeights();
  boost::random::discrete_distribution<int> pick(weights.begin(), weights.end());
  for (int step = 0; step < iterations; ++step) {
    if (stop()) break;  // the time budget: every evaluation done so far is kept
    Transformer f, g;
    raw::Memory next;
    TypeCounts hint;
    int kind = 0;
    bool ok = false;
    for (int attempt = 0; attempt < 16 && !ok; ++attempt) {
      f = restart.f;
      g = restart.g;
      next = memory;
      hint = TypeCounts{};
      kind = pick(engine);
      ok = raw::Propose(kind, o, next, f, g, engine, &hint) && ProjectOntoClass(o.cls, f) &&
           ProjectOntoClass(o.cls, g);
    }
    if (ok) {
      ++restart.applied_by_kind[kind];
      std::vector<TypeCounts> hints;
      if (hint.length >= 1) hints.push_back(hint);
      if (restart.best.sup_statistic) hints.push_back(*restart.best.sup_statistic);
      RawEvaluation e = EvaluateRawPair(o, f, g, hints);
      if (e.stopped_by_time) stop();  // past the time budget: flags the run as stopped
      if (e.score >= restart.best.score) {
        if (e.score > restart.best.score) ++restart.accepted_by_kind[kind];
        restart.f = f;
        restart.g = g;
        restart.best = e;
        memory = next;
      }
    }
    restart.trajectory.push_back(restart.best.score);
  }
  return restart;
}

// A random start: a random pair of the class with f − g built by a random mechanism in a random
// direction (raw::ApplyMechanism), so climbs and the random baseline start alike.
struct Start {
  std::pair<Transformer, Transformer> pair;
  std::vector<TypeCounts> hints;
  raw::Memory memory;
};

Start RandomStart(const RawSearchOptions& o, int index) {
  Engine engine(StreamSeed(o.seed, "raw-start", static_cast<std::uint64_t>(index)));
  Start s;
  s.pair = raw::RandomPair(o.cls, engine);
  Transformer f = s.pair.first, g = s.pair.second;
  TypeCounts hint;
  if (raw::ApplyMechanism(o, s.memory, f, g, engine, &hint) && ProjectOntoClass(o.cls, f) &&
      ProjectOntoClass(o.cls, g)) {
    s.pair = {f, g};
    if (hint.length >= 1) s.hints.push_back(hint);
  } else {
    s.memory = raw::Memory{};
  }
  return s;
}

}  // namespace

namespace {

// The weight arrays a shrink move visits, in a fixed order.
std::vector<Eigen::Ref<Matrix>> WeightArrays(Transformer& m) {
  std::vector<Eigen::Ref<Matrix>> arrays;
  arrays.emplace_back(m.embedding);
  arrays.emplace_back(m.positional);
  for (Head& h : m.layers[0].heads) {
    arrays.emplace_back(h.qk);
    arrays.emplace_back(h.ov);
  }
  if (m.layers[0].mlp) {
    arrays.emplace_back(m.layers[0].mlp->in);
    arrays.emplace_back(m.layers[0].mlp->out);
  }
  arrays.emplace_back(m.readout_weight);
  return arrays;
}

bool ZeroSmall(Eigen::Ref<Matrix> a) {
  const double top = a.cwiseAbs().maxCoeff();
  bool changed = false;
  for (Eigen::Index i = 0; i < a.size(); ++i)
    if (a.data()[i] != 0.0 && std::abs(a.data()[i]) < 0.01 * top) {
      a.data()[i] = 0.0;
      changed = true;
    }
  return changed;
}

bool Round3(Eigen::Ref<Matrix> a) {
  bool changed = false;
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    const double x = a.data()[i];
    if (x == 0.0) continue;
    const double unit = std::pow(10.0, std::floor(std::log10(std::abs(x))) - 2);
    const double y = std::round(x / unit) * unit;
    if (y != x) {
      a.data()[i] = y;
      changed = true;
    }
  }
  return changed;
}

}  // namespace

int ShrinkRestart(const RawSearchOptions& o, RawRestart& restart, std::uint64_t budget,
                  std::uint64_t* spent, const std::function<bool()>& stop) {
  auto rank = [&](const Transformer& f, const Transformer& g, const RawEvaluation& e) {
    return o.rank ? o.rank(f, g, e) : std::array<double, 3>{e.score, 0.0, 0.0};
  };
  auto current = rank(restart.f, restart.g, restart.best);
  int kept = 0;
  std::uint64_t used = 0;
  const std::size_t arrays = WeightArrays(restart.f).size();
  for (int move = 0; move < 2; ++move)
    for (int side = 0; side < 2; ++side)
      for (std::size_t k = 0; k < arrays; ++k) {
        if (used >= budget || (stop && stop())) goto done;
        Transformer f = restart.f, g = restart.g;
        Transformer& m = side == 0 ? f : g;
        auto list = WeightArrays(m);
        if (k >= list.size()) continue;
        if (!(move == 0 ? ZeroSmall(list[k]) : Round3(list[k]))) continue;
        if (!ProjectOntoClass(o.cls, f) || !ProjectOntoClass(o.cls, g)) continue;
        ++used;
        std::vector<TypeCounts> hints;
        if (restart.best.sup_statistic) hints.push_back(*restart.best.sup_statistic);
        const RawEvaluation e = EvaluateRawPair(o, f, g, hints);
        if (e.stopped_by_time && stop) stop();
        if (!e.valid) continue;
        const auto r = rank(f, g, e);
        if (r >= current && e.score >= restart.best.score) {
          restart.f = std::move(f);
          restart.g = std::move(g);
          restart.best = e;
          current = r;
          ++kept;
        }
      }
done:
  if (spent) *spent += used;
  return kept;
}

const char* RawStartsName(RawStarts starts) {
  switch (starts) {
    case RawStarts::kRandom:
      return "random";
    case RawStarts::kFamilies:
      return "families";
    case RawStarts::kBoth:
      return "both";
  }
  return "both";
}

RawSearchResult RunRawSearch(const RawSearchOptions& o) {
  ValidatePairClass(o.cls);
  if (!(o.eps > 0) || !std::isfinite(o.eps)) throw OptionError("eps", "must be finite and > 0");
  if (o.budget < 1) throw OptionError("budget", "must be at least 1");
  if (!(o.separation > 1.0)) throw OptionError("separation", "must exceed 1");
  if (o.max_length < 1 || o.max_length > kThresholdMaxLength)
    throw OptionError("max_length", fmt::format("must be in [1, {}]", kThresholdMaxLength));
  if (!(o.time_budget >= 0) || !std::isfinite(o.time_budget))
    throw OptionError("time_budget", "must be finite and ≥ 0");
  RawSearchResult result;
  result.options = o;
  const RawStarts starts = o.family_seeds ? o.starts : RawStarts::kRandom;
  const auto seeds =
      o.random_only || starts == RawStarts::kRandom
          ? std::vector<std::pair<std::string, std::pair<Transformer, Transformer>>>{}
          : FamilySeeds(o);
  if (!o.random_only && starts == RawStarts::kFamilies && seeds.empty())
    throw OptionError("starts",
                      "no built-in family fits this class (docs/families.md: bump needs width "
                      "2 + Δ, nested Δ = 1, width 2·min(S, H) + 1; both need hardmax and an MLP "
                      "unit); use random or both");
  int restarts, iterations;
  const std::uint64_t shrink_budget = o.random_only ? 0 : std::min(o.shrink_budget, o.budget / 10);
  const std::uint64_t search_budget = o.budget - shrink_budget;
  if (o.random_only) {
    restarts = static_cast<int>(o.budget);
    iterations = 0;
  } else {
    iterations = static_cast<int>(std::min<std::uint64_t>(o.iterations, search_budget - 1));
    restarts = static_cast<int>(std::max<std::uint64_t>(1, search_budget / (iterations + 1)));
  }
  result.restarts.resize(restarts);
  std::atomic<int> done{0};
  std::atomic<std::uint64_t> spent{0};
  std::atomic<bool> timed_out{false};
  std::mutex report;
  double best_so_far = -1.0;
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const std::function<bool()> stop = [&] {
    if (o.time_budget <= 0) return false;
    if (elapsed() < o.time_budget) return false;
    timed_out = true;
    return true;
  };
  // Evaluations get the time left (so a hard pair cannot overrun the budget by minutes); the
  // result is then flagged as stopped by time, as when the budget stops the climbs.
  RawSearchOptions timed = o;
  // The exact threshold's evaluation cap for one evaluation of the search: a pair whose pruned
  // search needs more (a hard pair, at most seconds of CPU) counts as censored at the last
  // length it certified, a lower bound, and may be certified further past the cap
  // (CertifyPastCap). A count, not a time, so the search stays the same for any thread count
  // and machine.
  timed.evaluation_cap = o.search_evaluation_cap;
  if (o.time_budget > 0) timed.evaluation_seconds = [&] { return o.time_budget - elapsed(); };
  auto run = [&](int i) {
    // Climb 0 always evaluates its start, so a result has at least one evaluated pair.
    if (i > 0 && stop()) {
      result.restarts[i].index = i;
      result.restarts[i].start = "not run (time budget)";
      result.restarts[i].best.note = "not run: the time budget ran out first";
      result.restarts[i].best.score = -1.0;
      return;
    }
    const bool from_family =
        !seeds.empty() && (starts == RawStarts::kFamilies || i < static_cast<int>(seeds.size()));
    if (from_family) {
      const auto& seed = seeds[static_cast<std::size_t>(i) % seeds.size()];
      result.restarts[i] =
          Climb(timed, i, "family " + seed.first, seed.second, {}, raw::Memory{}, iterations, stop);
    } else {
      Start s = RandomStart(o, i);
      result.restarts[i] = Climb(timed, i, "random", std::move(s.pair), std::move(s.hints),
                                 std::move(s.memory), iterations, stop);
    }
    spent += result.restarts[i].trajectory.size();
    const int finished = ++done;
    if (o.progress) {
      const std::lock_guard<std::mutex> lock(report);
      best_so_far = std::max(best_so_far, result.restarts[i].best.score);
      o.progress(finished, restarts, spent.load(), best_so_far, elapsed());
    }
  };
  tbb::task_arena arena(o.threads > 0 ? o.threads : tbb::task_arena::automatic);
  arena.execute([&] { tbb::parallel_for(0, restarts, run); });
  auto rank = [&](const RawRestart& r) {
    if (r.trajectory.empty()) return std::array<double, 3>{-2.0, -2.0, -2.0};
    return o.rank ? o.rank(r.f, r.g, r.best) : std::array<double, 3>{r.best.score, 0.0, 0.0};
  };
  for (int i = 0; i < restarts; ++i) {
    result.evaluations += result.restarts[i].trajectory.size();
    if (!result.restarts[i].trajectory.empty()) ++result.restarts_run;
    if (rank(result.restarts[i]) > rank(result.restarts[result.best_restart]))
      result.best_restart = i;
  }
  RawRestart& best = result.restarts[result.best_restart];
  if (!o.random_only && shrink_budget > 0)
    result.shrink_accepted =
        ShrinkRestart(timed, best, shrink_budget, &result.shrink_evaluations, stop);
  result.evaluations += result.shrink_evaluations;
  result.recheck = RecheckRaw(o, best.f, best.g, best.best);
  result.stopped_by_time = timed_out.load();
  result.seconds = elapsed();
  return result;
}

std::optional<std::string> RawCensoredBy(const RawEvaluation& e) {
  if (!e.valid || e.first_disagreement) return std::nullopt;
  if (e.censored_by_cap) return "threshold_evaluations";
  if (e.stopped_by_time) return "time_budget";
  return std::nullopt;
}

bool CertifyPastCap(const RawSearchOptions& o, const Transformer& f, const Transformer& g,
                    RawEvaluation& e, std::uint64_t target, double seconds, int threads) {
  target = std::min(target, kThresholdMaxLength);
  if (!e.valid || e.first_disagreement || e.checked_up_to >= target) return false;
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  const std::uint64_t before = e.checked_up_to;
  std::uint64_t length = e.checked_up_to;
  while (!e.first_disagreement && e.checked_up_to >= length && length < target) {
    const double left = seconds - elapsed();
    if (left <= 0) {
      e.stopped_by_time = true;  // short of the target: a result that depends on timing
      break;
    }
    // Seconds beyond 1e9 (--time-budget 0 passes the largest double) are no budget at all:
    // the threshold keeps its default evaluation cap and no time budget, and the lengths grow
    // ×4 a run. Timed, one run goes straight to the target: it stops at T* or at its time
    // budget, exact up to the lengths every task finished, and re-runs no lengths (a run's
    // time hardly depends on its max_length: 13.5 s to T* = 223,446 at max_length 320,000,
    // 14.4 s at 10⁷, docs/refute.md §5.4).
    const bool timed = left < 1e9;
    length = timed ? target : std::min(target, std::max<std::uint64_t>(length * 4, length + 1));
    ThresholdOptions t;
    t.epsilon = o.eps;
    t.max_length = length;
    t.threads = threads;
    t.max_evaluations = o.certify_evaluation_cap;
    if (timed) {
      // Only time stops a timed run: the threshold's default evaluation cap would censor the
      // pair below its target without naming why.
      t.time_budget = left;
      t.max_evaluations = std::numeric_limits<std::uint64_t>::max();
    }
    ThresholdResult r;
    try {
      r = FindThreshold(f, g, t);
    } catch (const InputError&) {
      break;
    }
    if (timed && r.stopped == ThresholdStop::kTimeBudget) e.stopped_by_time = true;
    // The threshold's evaluation cap (untimed runs) ends the exact region below the target.
    const bool capped = r.stopped == ThresholdStop::kEvaluations;
    if (r.checked_up_to <= e.checked_up_to && !r.first_disagreement) {
      if (capped) e.censored_by_cap = true;
      break;
    }
    // Where this run ends the exact region, its own cap (if any) censors the pair.
    e.censored_by_cap = capped;
    e.first_disagreement = r.first_disagreement;
    e.checked_up_to = r.checked_up_to;
    e.certified_max_length = r.first_disagreement ? length : r.checked_up_to;
    e.statistics += r.evaluations;
    const std::size_t below = r.first_disagreement ? *r.first_disagreement - 1 : r.checked_up_to;
    e.largest_gap_below = 0.0;
    for (std::size_t k = 0; k < below && k < r.max_gap_per_length.size(); ++k)
      e.largest_gap_below = std::max(e.largest_gap_below, r.max_gap_per_length[k]);
    if (r.first_disagreement) {
      e.witness = r.witness;
      e.gap = r.gap;
    }
    if (!r.complete) break;  // the evaluation budget (time) stopped it
  }
  // The score counts a censored pair at one past the length it is now certified to.
  e.score = e.separated ? static_cast<double>(e.first_disagreement ? *e.first_disagreement
                                                                   : e.checked_up_to + 1)
                        : Score(o, e);
  return e.checked_up_to > before || e.first_disagreement.has_value();
}

RawRecheck RecheckRaw(const RawSearchOptions& o, const Transformer& f, const Transformer& g,
                      const RawEvaluation& e) {
  RawRecheck r;
  bool ok = true;
  if (e.first_disagreement) {
    const auto source = MakeRunSource(e.witness, "witness");
    const TypeCounts w = CountTypes(*source, o.cls.alphabet, o.cls.period, o.cls.locality);
    const PreciseReal gap =
        PreciseSupDistance(EvaluatePreciseOneLayer(f, w), EvaluatePreciseOneLayer(g, w));
    r.gap_text = PreciseText(gap);
    ok = ok && gap > PreciseReal(o.eps);
  }
  if (e.sup_statistic) {
    const PreciseReal sup = PreciseSupDistance(EvaluatePreciseOneLayer(f, *e.sup_statistic),
                                               EvaluatePreciseOneLayer(g, *e.sup_statistic));
    r.sup_gap_text = PreciseText(sup);
    ok = ok && (sup >= PreciseReal(o.separation) * PreciseReal(o.eps)) == e.separated;
  }
  r.status = ok ? RecheckStatus::kAgrees : RecheckStatus::kDiffers;
  return r;
}

std::string RunLengthText(const std::vector<Run>& runs) {
  std::string text;
  for (const Run& run : runs) {
    if (!text.empty()) text += ' ';
    text +=
        run.count == 1 ? fmt::format("{}", run.token) : fmt::format("{}^{}", run.token, run.count);
  }
  return text;
}

nlohmann::json RawWitnessToJson(const RawSearchOptions& o, const Transformer& f,
                                const Transformer& g, const RawEvaluation& e,
                                const RawRecheck& recheck) {
  nlohmann::json j;
  j["format"] = "ltsim-raw-search-witness";
  j["version"] = 1;
  j["eps"] = o.eps;
  j["max_length"] = o.max_length;
  j["certified_max_length"] = std::max(e.certified_max_length, std::uint64_t{1});
  j["separation"] = o.separation;
  j["seed"] = o.seed;
  j["f"] = ModelToJsonValue(f);
  j["g"] = ModelToJsonValue(g);
  j["first_disagreement"] =
      e.first_disagreement ? nlohmann::json(*e.first_disagreement) : nlohmann::json(nullptr);
  j["checked_up_to"] = e.checked_up_to;
  const std::optional<std::string> censored_by = RawCensoredBy(e);
  j["censored_by"] = censored_by ? nlohmann::json(*censored_by) : nlohmann::json(nullptr);
  j["witness_text"] = RunLengthText(e.witness);
  j["gap"] = e.gap;
  j["largest_gap_below"] = e.largest_gap_below;
  j["sup_gap"] = e.sup_gap;
  j["separated"] = e.separated;
  if (e.sup_statistic) {
    j["sup_statistic"] = {{"length", e.sup_statistic->length},
                          {"far", e.sup_statistic->far},
                          {"suffix", e.sup_statistic->suffix}};
  } else {
    j["sup_statistic"] = nullptr;
  }
  j["recheck"] = {{"digits", 50},
                  {"status", kRecheckValueNames.Name(recheck.status)},
                  {"gap", recheck.gap_text},
                  {"sup_gap", recheck.sup_gap_text}};
  return j;
}

TypeCounts ReadStatistic(const io::JsonReader& s, const Transformer& f) {
  s.Keys({"length", "far", "suffix"}, {"length", "far", "suffix"});
  TypeCounts c;
  c.alphabet = f.alphabet;
  c.period = f.period;
  c.locality = f.locality;
  c.length = s.At("length").UInt(1);
  const std::size_t types = static_cast<std::size_t>(f.alphabet) * f.period;
  std::uint64_t total = 0;
  // Each count ≤ the length, so their sum (≤ types·length) cannot wrap.
  for (const io::JsonReader& x : s.At("far").Array(types, types))
    c.far.push_back(x.UInt(0, c.length));
  const std::size_t m = std::min<std::uint64_t>(c.length, f.locality + 1);
  for (const io::JsonReader& x : s.At("suffix").Array(m, m))
    c.suffix.push_back(static_cast<Token>(x.Int(0, f.alphabet - 1)));
  for (std::uint64_t x : c.far) total += x;
  if (total + c.suffix.size() != c.length)
    s.Fail("far counts and suffix do not add up to the length");
  return c;
}

// The results a raw witness or refute.json records, recomputed from the threshold's result `r`
// and the recorded separation statistic (as EvaluateRawPair and RecheckRaw compute them).
nlohmann::json RecomputedResults(const ReplayInput& in, const ThresholdResult& r) {
  RawSearchOptions o;
  o.eps = in.eps;
  o.separation = in.separation;
  o.cls.alphabet = in.f.alphabet;
  o.cls.period = in.f.period;
  o.cls.locality = in.f.locality;
  RawEvaluation e;
  e.first_disagreement = r.first_disagreement;
  e.checked_up_to = r.checked_up_to;
  const std::size_t below = r.first_disagreement ? *r.first_disagreement - 1 : r.checked_up_to;
  for (std::size_t k = 0; k < below && k < r.max_gap_per_length.size(); ++k)
    e.largest_gap_below = std::max(e.largest_gap_below, r.max_gap_per_length[k]);
  if (r.first_disagreement) {
    e.witness = r.witness;
    e.gap = r.gap;
  }
  if (in.sup_statistic) {
    e.sup_statistic = in.sup_statistic;
    const double gap = raw::StatisticGap(in.f, in.g, *in.sup_statistic);
    e.sup_gap = std::isfinite(gap) ? gap : 0.0;
  }
  e.separated = in.separated;
  const RawRecheck recheck = RecheckRaw(o, in.f, in.g, e);
  nlohmann::json j;
  j["checked_up_to"] = e.checked_up_to;
  j["witness_text"] = RunLengthText(e.witness);
  j["gap"] = e.gap;
  j["largest_gap_below"] = e.largest_gap_below;
  j["sup_gap"] = e.sup_gap;
  j["sup_gap_length"] =
      e.sup_statistic ? nlohmann::json(e.sup_statistic->length) : nlohmann::json(nullptr);
  j["recheck"] = {{"digits", 50},
                  {"status", kRecheckValueNames.Name(recheck.status)},
                  {"gap", recheck.gap_text},
                  {"sup_gap", recheck.sup_gap_text}};
  return j;
}

bool ReplayPair(const ReplayInput& in, std::string* report) {
  ThresholdOptions t;
  t.epsilon = in.eps;
  t.max_length = in.max_length;
  const ThresholdResult r = FindThreshold(in.f, in.g, t);
  const bool same_t = r.first_disagreement == in.first_disagreement;
  const nlohmann::json fresh = RecomputedResults(in, r);
  std::vector<std::string> differences;
  for (const auto& [key, value] : in.recorded.items())
    CompareRecorded(value, fresh.at(key), key, differences);
  bool same_sup = true;
  std::string sup_text = "none recorded";
  if (in.sup_statistic) {
    const PreciseReal sup = PreciseSupDistance(EvaluatePreciseOneLayer(in.f, *in.sup_statistic),
                                               EvaluatePreciseOneLayer(in.g, *in.sup_statistic));
    same_sup = (sup >= PreciseReal(in.separation) * PreciseReal(in.eps)) == in.separated;
    sup_text = PreciseText(sup);
  }
  auto show = [](const std::optional<std::uint64_t>& t) {
    return t ? std::to_string(*t) : std::string("none");
  };
  if (report)
    *report = fmt::format(
        "first disagreement {} (recorded {}), recheck {}; separation gap {} (50 digits), "
        "separated {} (recorded {}){}",
        show(r.first_disagreement), show(in.first_disagreement),
        r.recheck.status == RecheckStatus::kNone ? "" : kRecheckClaimNames.Name(r.recheck.status),
        sup_text, same_sup == in.separated ? "yes" : "no", in.separated ? "yes" : "no",
        differences.empty() ? std::string()
                            : "; recorded results that differ: " + DifferenceSummary(differences));
  return same_t && same_sup && r.recheck.status != RecheckStatus::kDiffers && differences.empty();
}

ReplayInput RawWitnessFromJson(const io::Json& doc, const std::string& source) {
  const io::JsonReader j(doc, source);
  if (j.At("format").String() != "ltsim-raw-search-witness" || j.At("version").Int() != 1)
    j.At("format").Fail("not an ltsim-raw-search-witness version 1");
  ReplayInput in;
  in.f = ModelFromJson(j.At("f").json(), source + ": f");
  in.g = ModelFromJson(j.At("g").json(), source + ": g");
  ReadReplayNumbers(j, in);
  return in;
}

bool ReplayRawWitness(const std::string& path, std::string* report) {
  return ReplayPair(RawWitnessFromJson(io::ReadJsonFile(path, "raw search witness"), path), report);
}

void ReadReplayNumbers(const io::JsonReader& j, ReplayInput& in) {
  for (const char* key : {"checked_up_to", "witness_text", "gap", "largest_gap_below", "sup_gap",
                          "sup_gap_length", "recheck"})
    if (j.Has(key)) in.recorded[key] = nlohmann::json::parse(j.At(key).json().dump());
  in.eps = j.At("eps").Positive();
  in.max_length = j.At("max_length").UInt(1, kThresholdMaxLength);
  // Past the search's cap (CertifyPastCap) the result was certified up to a longer length.
  if (j.Has("certified_max_length"))
    in.max_length = j.At("certified_max_length").UInt(1, kThresholdMaxLength);
  in.separation = j.At("separation").Number(1.0);
  if (!j.At("first_disagreement").json().is_null())
    in.first_disagreement = j.At("first_disagreement").UInt(1);
  in.separated = j.At("separated").Bool();
  if (!j.At("sup_statistic").json().is_null()) {
    // Evaluated by both models' one-layer precise evaluators in f's view.
    if (in.f.layers.size() != 1 || in.g.layers.size() != 1 || in.g.alphabet != in.f.alphabet ||
        in.g.period != in.f.period || in.g.locality != in.f.locality)
      j.At("sup_statistic")
          .Fail(
              "a separation statistic needs one-layer f and g with the same alphabet, period "
              "and locality");
    in.sup_statistic = ReadStatistic(j.At("sup_statistic"), in.f);
  }
}

}  // namespace ltsim
