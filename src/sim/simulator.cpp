// The simulator registry (docs/design.md §6) and the layout helpers the constructions share.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/core/suggest.h"
#include "sim/simulators.h"

namespace ltsim {
namespace {

struct Entry {
  const char* name;
  std::function<std::unique_ptr<Simulator>()> make;
  bool listed = true;  // false: a deliberately broken method for testing campaigns
};

// The registry: one line per method, in the order help texts list them.
const std::vector<Entry>& Registry() {
  // clang-format off
  static const std::vector<Entry> entries = {
      {"frequency", MakeFrequencyMatching},
      {"frequency-agnostic", MakeFrequencyAgnostic},
      {"truncate", MakeTruncate},
      {"uniform", MakeUniformSubsequence},
      {"markov", MakeMarkovSubset},
      {"blocks", MakeEvenlySpacedBlocks},
      {"balanced-blocks", MakeBalancedBlocks},
      {"test-drop-suffix", MakeTestDropSuffix, false},
  };
  // clang-format on
  return entries;
}

}  // namespace

std::vector<std::string> SimulatorNames() {
  std::vector<std::string> names;
  for (const Entry& entry : Registry())
    if (entry.listed) names.emplace_back(entry.name);
  return names;
}

std::unique_ptr<Simulator> MakeSimulator(const std::string& name) {
  std::string known;
  for (const Entry& entry : Registry()) {
    if (name == entry.name) return entry.make();
    if (entry.listed) known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  const std::string shown = name.size() > 60 ? name.substr(0, 60) + "..." : name;
  throw OptionError("method", "unknown method '" + shown + "'" +
                                  DidYouMean(name, SimulatorNames()) + " (known: " + known + ")");
}

bool SimulatorHas(const std::string& name, bool SimulatorTraits::*trait) {
  for (const Entry& entry : Registry())
    if (name == entry.name) return entry.make()->traits().*trait;
  return false;
}

std::vector<std::string> SimulatorNamesWith(bool SimulatorTraits::*trait) {
  std::vector<std::string> names;
  for (const Entry& entry : Registry())
    if (entry.listed && entry.make()->traits().*trait) names.emplace_back(entry.name);
  return names;
}

std::string JoinNames(const std::vector<std::string>& names, const std::string& last) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " " + last + " " : ", ";
    out += names[i];
  }
  return out;
}

FarRegion PlanFarRegion(const TypeCounts& counts, std::uint64_t target, const char* method) {
  const std::uint64_t period = counts.period;
  const std::uint64_t suffix = counts.suffix.size();
  const std::uint64_t length =
      target - ((target % period + period - counts.length % period) % period);
  if (target < suffix + period || length < suffix)
    throw OptionError("length", std::string(method) + " needs at least " +
                                    std::to_string(suffix + period) +
                                    " positions (suffix τ+1 plus a period)");
  FarRegion region;
  region.length = length - suffix;
  region.residue_sizes.assign(period, region.length / period);
  for (std::uint64_t j = 1; j <= region.length % period; ++j) ++region.residue_sizes[j % period];
  return region;
}

std::vector<Run> LayOut(const TypeCounts& counts, const FarRegion& region,
                        const std::vector<std::uint64_t>& far) {
  const int period = counts.period;
  // Per residue, a cursor over (token, remaining count) in token order.
  std::vector<int> next_token(period, 0);
  std::vector<std::uint64_t> left(far);
  std::vector<Run> runs;
  auto take = [&](int r, std::uint64_t count) {
    while (count > 0) {
      int& s = next_token[r];
      while (left[counts.TypeIndex(s, r)] == 0) ++s;
      LTSIM_CHECK(s < counts.alphabet);
      const std::uint64_t k = std::min(count, left[counts.TypeIndex(s, r)]);
      AppendRun(runs, static_cast<Token>(s), k);
      left[counts.TypeIndex(s, r)] -= k;
      count -= k;
    }
  };
  if (period == 1) {
    take(0, region.length);
  } else {
    for (std::uint64_t j = 1; j <= region.length; ++j) take(static_cast<int>(j % period), 1);
  }
  for (Token s : counts.suffix) AppendRun(runs, s, 1);
  return runs;
}

std::vector<std::uint64_t> LargestRemainder(const std::vector<double>& quotas,
                                            std::uint64_t total) {
  long double sum = 0.0L;
  for (double q : quotas) sum += q;
  LTSIM_CHECK(sum > 0.0L);
  std::vector<std::uint64_t> out(quotas.size());
  std::vector<std::pair<long double, std::size_t>> remainders;
  std::uint64_t used = 0;
  for (std::size_t k = 0; k < quotas.size(); ++k) {
    const long double exact = quotas[k] / sum * static_cast<long double>(total);
    out[k] = static_cast<std::uint64_t>(std::floor(exact));
    used += out[k];
    remainders.push_back({exact - std::floor(exact), k});
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  // Rounding can leave the floors a unit over `total` (never in exact arithmetic): take the
  // excess back from the smallest remainders, so the result always sums to `total`.
  for (std::size_t k = remainders.size(); used > total && k-- > 0;) {
    if (out[remainders[k].second] == 0) continue;
    --out[remainders[k].second];
    --used;
  }
  for (std::size_t k = 0; used < total; k = (k + 1) % remainders.size(), ++used)
    ++out[remainders[k].second];
  return out;
}

bool SimulateShortString(const SimulationInput& in, Simulation& out) {
  // Every simulator starts here, so n ≥ 1 is checked once for all (markov's chain has no
  // keep rate at n = 0).
  if (in.target_length == 0) throw InputError("the target length n must be at least 1");
  if (in.counts.length > in.target_length) return false;
  out.z = WholeString(in.x);
  out.length = in.counts.length;
  out.eta = 0.0;
  out.detail = "x is no longer than the target: z = x";
  return true;
}

std::vector<Run> WholeString(const Source& x) {
  std::vector<Run> runs;
  auto reader = x.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    if (chunk.kind == Chunk::Kind::kRun) {
      AppendRun(runs, chunk.run.token, chunk.run.count);
      continue;
    }
    for (std::size_t k = 0; k < chunk.size; ++k) AppendRun(runs, chunk.at(k), 1);
  }
  return runs;
}

std::vector<Run> CopySpans(const Source& x, const std::vector<Span>& spans) {
  std::vector<Run> runs;
  auto span = spans.begin();
  std::uint64_t seen = 0;  // tokens before the current chunk
  auto reader = x.Open();
  Chunk chunk;
  while (span != spans.end() && reader->Next(chunk)) {
    const std::uint64_t end = seen + chunk.length();
    for (; span != spans.end() && span->begin < end; ++span) {
      const std::uint64_t from = std::max(span->begin, seen) - seen;
      const std::uint64_t to = std::min(span->end, end) - seen;
      if (chunk.kind == Chunk::Kind::kRun) {
        AppendRun(runs, chunk.run.token, to - from);
      } else {
        for (std::uint64_t k = from; k < to; ++k) AppendRun(runs, chunk.at(k), 1);
      }
      if (span->end > end) break;  // the span goes on in the next chunk
    }
    seen = end;
  }
  return runs;
}

std::uint64_t BlockLength(std::uint64_t requested, std::uint64_t target) {
  if (requested > 0) return requested;
  auto length = static_cast<std::uint64_t>(std::ceil(std::cbrt(static_cast<double>(target))));
  while (length > 1 && (length - 1) * (length - 1) * (length - 1) >= target) --length;
  while (length * length * length < target) ++length;  // exact ⌈n^(1/3)⌉ despite rounding
  return std::max<std::uint64_t>(length, 1);
}

}  // namespace ltsim
