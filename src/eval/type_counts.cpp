// One streaming pass that counts far types (token, residue) and keeps the τ-suffix.
#include "ltsim/eval/type_counts.h"

#include <algorithm>
#include <array>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

// Counts bytes into per-residue histograms hist[r·256 + b]. For Δ = 1 four interleaved
// sub-histograms hide the store-to-load latency of repeated bytes; this loop is the whole
// cost of one-layer evaluation, so it is the one place written for speed.
void CountBytes(const std::uint8_t* data, std::size_t size, std::uint64_t first_position,
                int period, std::vector<std::uint64_t>& hist) {
  constexpr std::size_t kBlock = std::size_t{1} << 24;  // keeps uint32 counters exact
  for (std::size_t begin = 0; begin < size; begin += kBlock) {
    const std::size_t n = std::min(kBlock, size - begin);
    const std::uint8_t* p = data + begin;
    const std::uint64_t pos0 = first_position + begin;  // 1-based position of p[0]
    if (period == 1) {
      std::array<std::array<std::uint32_t, 256>, 4> sub{};
      std::size_t k = 0;
      for (; k + 4 <= n; k += 4) {
        ++sub[0][p[k]];
        ++sub[1][p[k + 1]];
        ++sub[2][p[k + 2]];
        ++sub[3][p[k + 3]];
      }
      for (; k < n; ++k) ++sub[0][p[k]];
      for (int b = 0; b < 256; ++b) hist[b] += sub[0][b] + sub[1][b] + sub[2][b] + sub[3][b];
      continue;
    }
    // One sub-histogram per offset within a period: consecutive bytes go to different
    // histograms, which interleaves the increments like the Δ = 1 case.
    std::vector<std::uint32_t> sub(static_cast<std::size_t>(period) * 256, 0);
    const std::size_t step = static_cast<std::size_t>(period);
    std::size_t k = 0;
    for (; k + step <= n; k += step)
      for (std::size_t offset = 0; offset < step; ++offset) ++sub[offset * 256 + p[k + offset]];
    for (std::size_t offset = 0; k + offset < n; ++offset) ++sub[offset * 256 + p[k + offset]];
    for (int offset = 0; offset < period; ++offset) {
      const int r = static_cast<int>((pos0 + offset) % period);
      for (int b = 0; b < 256; ++b) hist[r * 256 + b] += sub[offset * 256 + b];
    }
  }
}

// Keeps the last `keep` tokens seen, oldest first.
class Tail {
 public:
  explicit Tail(std::size_t keep) : keep_(keep) {}
  void Append(const Chunk& chunk) {
    const std::uint64_t len = chunk.length();
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(len, keep_));
    const std::size_t start = static_cast<std::size_t>(len - take);
    for (std::size_t k = 0; k < take; ++k) tokens_.push_back(chunk.at(start + k));
    if (tokens_.size() > keep_) tokens_.erase(tokens_.begin(), tokens_.end() - keep_);
  }
  const std::vector<Token>& tokens() const { return tokens_; }

 private:
  std::size_t keep_;
  std::vector<Token> tokens_;
};

// Adds `count` positions starting at 1-based `first` holding `token` to the far counts.
void CountRun(Token token, std::uint64_t first, std::uint64_t count, TypeCounts& out) {
  const std::uint64_t period = out.period;
  if (count >= period) {
    const std::uint64_t full = count / period;
    for (int r = 0; r < out.period; ++r) out.far[out.TypeIndex(token, r)] += full;
  }
  const std::uint64_t rest = count % period;
  for (std::uint64_t k = 0; k < rest; ++k)
    ++out.far[out.TypeIndex(token, out.Residue(first + count - rest + k))];
}

TypeCounts EmptyCounts(int alphabet, int period, int locality) {
  LTSIM_CHECK(alphabet >= 1 && period >= 1 && locality >= 0);
  TypeCounts counts;
  counts.alphabet = alphabet;
  counts.period = period;
  counts.locality = locality;
  counts.far.assign(static_cast<std::size_t>(alphabet) * period, 0);
  return counts;
}

// Moves the suffix positions out of the far counts (they were counted like every position).
void SplitSuffix(const std::vector<Token>& tail, TypeCounts& counts) {
  counts.suffix = tail;
  const std::uint64_t first = counts.length - tail.size() + 1;
  for (std::size_t k = 0; k < tail.size(); ++k)
    --counts.far[counts.TypeIndex(tail[k], counts.Residue(first + k))];
}

// Adds the byte histograms to the far counts; false if a byte is outside the alphabet.
bool FoldBytes(const std::vector<std::uint64_t>& byte_hist, TypeCounts& counts) {
  if (byte_hist.empty()) return true;
  for (int r = 0; r < counts.period; ++r) {
    for (int b = 0; b < 256; ++b) {
      const std::uint64_t c = byte_hist[r * 256 + b];
      if (c == 0) continue;
      if (b >= counts.alphabet) return false;
      counts.far[counts.TypeIndex(b, r)] += c;
    }
  }
  return true;
}

// Counts 16-bit tokens; false at the first token outside the alphabet.
bool CountWords(const Chunk& chunk, std::uint64_t first, TypeCounts& counts) {
  for (std::size_t k = 0; k < chunk.size; ++k) {
    const Token s = chunk.words[k];
    if (s >= counts.alphabet) return false;
    ++counts.far[counts.TypeIndex(s, counts.Residue(first + k))];
  }
  return true;
}

}  // namespace

TypeCounts CountTypes(const Source& source, int alphabet, int period, int locality) {
  TypeCounts counts = EmptyCounts(alphabet, period, locality);
  std::vector<std::uint64_t> byte_hist;
  Tail tail(static_cast<std::size_t>(locality) + 1);
  bool in_alphabet = true;
  std::uint64_t seen = 0;
  auto reader = source.Open();
  Chunk chunk;
  while (in_alphabet && reader->Next(chunk)) {
    const std::uint64_t first = seen + 1;
    switch (chunk.kind) {
      case Chunk::Kind::kBytes:
        if (byte_hist.empty()) byte_hist.assign(static_cast<std::size_t>(period) * 256, 0);
        CountBytes(chunk.bytes, chunk.size, first, period, byte_hist);
        break;
      case Chunk::Kind::kWords:
        in_alphabet = CountWords(chunk, first, counts);
        break;
      case Chunk::Kind::kRun:
        in_alphabet = chunk.run.token < alphabet;
        if (in_alphabet) CountRun(chunk.run.token, first, chunk.run.count, counts);
        break;
    }
    tail.Append(chunk);
    seen += chunk.length();
  }
  in_alphabet = in_alphabet && FoldBytes(byte_hist, counts);
  if (!in_alphabet) {
    CheckAlphabet(source, alphabet);  // throws, naming the first offending position
    LTSIM_CHECK(false);
  }
  if (seen == 0) throw InputError(source.name() + ": empty string");
  counts.length = seen;
  SplitSuffix(tail.tokens(), counts);
  return counts;
}

TypeCounts CountTypes(const std::vector<Token>& tokens, int alphabet, int period, int locality) {
  TypeCounts counts = EmptyCounts(alphabet, period, locality);
  LTSIM_CHECK(!tokens.empty());
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    LTSIM_CHECK(tokens[k] < alphabet);
    ++counts.far[counts.TypeIndex(tokens[k], counts.Residue(k + 1))];
  }
  counts.length = tokens.size();
  const std::size_t m = std::min(tokens.size(), static_cast<std::size_t>(locality) + 1);
  SplitSuffix(std::vector<Token>(tokens.end() - m, tokens.end()), counts);
  return counts;
}

TypeCounts Coarsen(const TypeCounts& counts, int period, int locality) {
  LTSIM_CHECK(period >= 1 && counts.period % period == 0 && locality <= counts.locality);
  TypeCounts out = EmptyCounts(counts.alphabet, period, locality);
  out.length = counts.length;
  for (int r = 0; r < counts.period; ++r)
    for (int s = 0; s < counts.alphabet; ++s)
      out.far[out.TypeIndex(s, r % period)] += counts.count(s, r);
  const std::size_t keep = std::min(counts.suffix.size(), static_cast<std::size_t>(locality) + 1);
  const std::size_t moved = counts.suffix.size() - keep;
  const std::uint64_t first = counts.length - counts.suffix.size() + 1;
  for (std::size_t k = 0; k < moved; ++k)
    ++out.far[out.TypeIndex(counts.suffix[k], out.Residue(first + k))];
  out.suffix.assign(counts.suffix.begin() + moved, counts.suffix.end());
  return out;
}

}  // namespace ltsim
