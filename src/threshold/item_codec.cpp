// The threshold's dealt outcomes as exact bytes (core/bytes.h), for MPI ranks and shards.
#include "threshold/item_codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/core/item_error.h"
#include "ltsim/core/work.h"
#include "threshold/statistics.h"

namespace ltsim {

// The dealt fields (core/bytes.h). A length's outcome travels with its evaluation count.
template <typename Visit, FieldsOf<TypeCounts> Self>
static void ByteFields(Visit& visit, Self& c) {
  visit(c.alphabet, c.period, c.locality, c.length, c.far, c.suffix);
}

}  // namespace ltsim

namespace ltsim::threshold {
namespace {

template <typename Visit, typename Outcome, typename Count>
void OutcomeFields(Visit& visit, Outcome& o, Count& evaluations) {
  visit(o.max_gap, o.disagrees, o.witness_gap, evaluations, o.argmax, o.argmax_counts, o.precise);
}

}  // namespace

template <typename Visit, FieldsOf<TaskOutcome> Self>
static void ByteFields(Visit& visit, Self& o) {
  visit(o.first_T, o.best_gap, o.best_counts, o.best_T, o.evaluated, o.pruned, o.max_gap,
        o.max_bound, o.stopped_at, o.evaluations, o.cells, o.cells_pruned, o.max_pruned_bound,
        o.precise);
}

std::string OutcomeBytes(const LengthOutcome& o, std::uint64_t evaluations) {
  ByteWriter w;
  FieldWriter visit{w};
  OutcomeFields(visit, o, evaluations);
  return w.Take();
}

namespace {

// Throws the item's InputError unless `ok`.
void Expect(bool ok, const std::string& where, const std::string& what) {
  if (!ok) throw ItemBytesError(where + ": " + what);
}

// ByteReader's own errors (a truncated item) as ItemBytesError.
template <typename Decode>
auto Decoded(const Decode& decode) {
  try {
    return decode();
  } catch (const ItemBytesError&) {
    throw;
  } catch (const InputError& e) {
    throw ItemBytesError(e.what());
  }
}

bool TokensBelow(const std::vector<Token>& tokens, int alphabet) {
  for (Token s : tokens)
    if (static_cast<int>(s) >= alphabet) return false;
  return true;
}

}  // namespace

namespace {

LengthOutcome DecodeOutcome(const std::string& bytes, std::uint64_t length, const JointView& view,
                            std::uint64_t& evaluations) {
  // Under `ltsim merge` the thread's byte origin names the shard file and item (core/bytes.h).
  const std::string where = (g_byte_origin.empty() ? "" : g_byte_origin + ": ") +
                            fmt::format("threshold item (length {})", length);
  ByteReader r(bytes, where);
  LengthOutcome o;
  std::uint64_t item_evaluations = 0;
  FieldReader visit{r};
  OutcomeFields(visit, o, item_evaluations);
  Expect(r.done(), where, "trailing bytes");
  Expect(!std::isnan(o.max_gap) && !std::isnan(o.witness_gap), where, "a gap is NaN");
  Expect(item_evaluations >= 1, where, "no evaluation recorded");
  if (o.disagrees) {
    // The witness Record realises: a string of the length, or the statistics of one.
    Expect(o.argmax.empty() != !o.argmax_counts.has_value(), where,
           "a disagreement needs exactly one witness (a string or statistics)");
    Expect(o.witness_gap <= o.max_gap, where, "the witness's gap exceeds the length's largest");
  }
  if (!o.argmax.empty())
    Expect(o.argmax.size() == length && TokensBelow(o.argmax, view.alphabet), where,
           fmt::format("the witness string must have {} tokens below {}", length, view.alphabet));
  if (o.argmax_counts) {
    const TypeCounts& c = *o.argmax_counts;
    const std::uint64_t m = std::min<std::uint64_t>(length, view.locality + 1);
    bool ok = c.alphabet == view.alphabet && c.period == view.period &&
              c.locality == view.locality && c.length == length &&
              c.far.size() == static_cast<std::size_t>(view.alphabet) * view.period &&
              c.suffix.size() == m && TokensBelow(c.suffix, view.alphabet);
    // Residue r's far counts add up to its share of the T − m far positions.
    for (int rho = 0; ok && rho < view.period; ++rho) {
      std::uint64_t sum = 0;
      for (int s = 0; s < view.alphabet && ok; ++s) {
        const std::uint64_t n = c.far[c.TypeIndex(s, rho)];
        ok = n <= length && sum + n >= sum;
        sum += n;
      }
      ok = ok && sum == ClassSize(length - m, view.period, rho);
    }
    Expect(ok, where,
           fmt::format("the witness statistics are not those of a string of length {} (S = {}, "
                       "Δ = {}, τ = {})",
                       length, view.alphabet, view.period, view.locality));
  }
  evaluations += item_evaluations;
  return o;
}

}  // namespace

LengthOutcome OutcomeFromBytes(const std::string& bytes, std::uint64_t length,
                               const JointView& view, std::uint64_t& evaluations) {
  return Decoded([&] { return DecodeOutcome(bytes, length, view, evaluations); });
}

std::string TaskBytes(const TaskOutcome& o) {
  ByteWriter w;
  PutFields(w, o);
  return w.Take();
}

namespace {

TaskOutcome DecodeTask(const std::string& bytes, const TaskSpec& spec, const JointView& view) {
  const std::string where = (g_byte_origin.empty() ? "" : g_byte_origin + ": ") +
                            fmt::format("threshold task (lengths from {})", spec.key.length);
  ByteReader r(bytes, where);
  TaskOutcome o;
  GetFields(r, o);
  Expect(r.done(), where, "trailing bytes");
  // Per-length vectors span the task's lengths; T* and the best statistic's length are among
  // them, and the best statistic splits each residue's far positions among the tokens.
  const std::size_t width = static_cast<std::size_t>(spec.k_hi - spec.k_lo + 1);
  Expect(o.evaluated.size() == width && o.max_gap.size() == width && o.max_bound.size() == width &&
             (o.pruned.empty() || o.pruned.size() == width),
         where, fmt::format("per-length entries must number the task's {} lengths", width));
  const auto in_task = [&](std::uint64_t T) {
    const std::uint64_t period = static_cast<std::uint64_t>(view.period);
    return T >= spec.T_base && (T - spec.T_base) % period == 0 &&
           (T - spec.T_base) / period >= static_cast<std::uint64_t>(spec.k_lo) &&
           (T - spec.T_base) / period <= static_cast<std::uint64_t>(spec.k_hi);
  };
  Expect(o.first_T == 0 || in_task(o.first_T), where, "first disagreement outside the task");
  // A dealt task runs whole: only a process that runs every task itself interrupts them.
  Expect(o.stopped_at == 0, where, "a dealt task cannot be interrupted");
  if (!o.best_counts.empty()) {
    bool ok = o.best_counts.size() == static_cast<std::size_t>(view.alphabet) * view.period &&
              in_task(o.best_T) && !std::isnan(o.best_gap);
    const std::uint64_t m = spec.key.suffix.size();
    for (int rho = 0; ok && rho < view.period; ++rho) {
      std::uint64_t sum = 0;
      for (int s = 0; s < view.alphabet && ok; ++s) {
        const std::uint64_t n = o.best_counts[static_cast<std::size_t>(rho) * view.alphabet + s];
        ok = n <= o.best_T && sum + n >= sum;
        sum += n;
      }
      ok = ok && o.best_T >= m && sum == ClassSize(o.best_T - m, view.period, rho);
    }
    Expect(ok, where, "the best statistic is not one of the task's");
  }
  return o;
}

}  // namespace

TaskOutcome TaskFromBytes(const std::string& bytes, const TaskSpec& spec, const JointView& view) {
  return Decoded([&] { return DecodeTask(bytes, spec, view); });
}

}  // namespace ltsim::threshold
