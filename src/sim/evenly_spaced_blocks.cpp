// `blocks`: evenly spaced contiguous blocks of x plus its suffix, the deterministic rival of
// `markov` (docs/theory.md §4.6).
//
// The layout. Let m = min(T, τ*+1), F = T − m the far positions of x, N = n − m the far
// positions of z (N ≥ 1 is required), k = ⌈N/ℓ⌉ blocks and G = F − N > 0 dropped positions.
// Block i (0 ≤ i < k) is z's far positions [u_i, u_{i+1}), u_i = ⌊iN/k⌋ (lengths ⌊N/k⌋ or
// ⌈N/k⌉ ≤ ℓ), copied from x's positions starting at s_i = u_i + ⌊(2i+1)G/(2k)⌋ (0-based): the
// G dropped positions are split into k equal gaps, half a gap before the first block and half
// after the last, so block i sits in the middle of the i-th k-th of x's far region (the
// midpoint rule). Gaps are ≥ 0, so blocks never overlap (adjacent ones may touch when G < k),
// and the last block ends before F. Then x's last m positions. |z| = n exactly.
#include <fmt/format.h>

#include "ltsim/core/error.h"
#include "sim/simulators.h"

namespace ltsim {
namespace {

// ⌊a·b/c⌋ without overflow (a·b can exceed 2^64 for long strings).
std::uint64_t MulDiv(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(a) * b / c);
}

// The spans of the layout above, the suffix last.
std::vector<Span> LayBlocks(std::uint64_t far_x, std::uint64_t far_z, std::uint64_t blocks,
                            std::uint64_t total) {
  const std::uint64_t dropped = far_x - far_z;
  std::vector<Span> spans;
  for (std::uint64_t i = 0; i < blocks; ++i) {
    const std::uint64_t from = MulDiv(i, far_z, blocks);
    const std::uint64_t to = MulDiv(i + 1, far_z, blocks);
    const std::uint64_t start = from + MulDiv(2 * i + 1, dropped, 2 * blocks);
    if (!spans.empty() && spans.back().end == start) {
      spans.back().end += to - from;
    } else {
      spans.push_back({start, start + to - from});
    }
  }
  spans.push_back({far_x, total});
  return spans;
}

class EvenlySpacedBlocks : public Simulator {
 public:
  std::string name() const override { return "blocks"; }
  SimulatorTraits traits() const override {
    return {.model_free = true, .block_rate = true, .uses_block_length = true};
  }
  Simulation Simulate(const SimulationInput& in) const override {
    Simulation out;
    if (SimulateShortString(in, out)) return out;
    const std::uint64_t suffix = in.counts.suffix.size();
    if (in.target_length <= suffix)
      throw OptionError(
          "length", fmt::format("blocks needs at least {} positions (suffix τ+1 plus one block)",
                                suffix + 1));
    const std::uint64_t total = in.counts.length;
    const std::uint64_t far_z = in.target_length - suffix;
    const std::uint64_t block = BlockLength(in.block_length, in.target_length);
    const std::uint64_t blocks = (far_z + block - 1) / block;
    const std::vector<Span> spans = LayBlocks(total - suffix, far_z, blocks, total);
    out.z = CopySpans(in.x, spans);
    out.length = in.target_length;
    out.detail = fmt::format(
        "{} evenly spaced blocks of ≤ {} positions (stride {:.4g}), last {} kept; no η bound "
        "claimed",
        blocks, block, static_cast<double>(total - suffix) / static_cast<double>(blocks), suffix);
    return out;
  }
};

}  // namespace

std::unique_ptr<Simulator> MakeEvenlySpacedBlocks() {
  return std::make_unique<EvenlySpacedBlocks>();
}

}  // namespace ltsim
