// The simulator check of `sweep` and `tightness`: the frequency simulator's needed length on
// found x, with |x| grown adaptively, and the hardmax regime it must reach (docs/statistics.md §5,
// docs/tightness.md §3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ltsim {

/// A `finite` pair's x is in the hardmax regime (where Theorem 4.1's frequency argument
/// applies) when |x| ≥ kHardmaxRegimeMargin·T_hard, T_hard = 2^(p/γ); the same margin as
/// `tightness` (docs/statistics.md §5).
inline constexpr double kHardmaxRegimeMargin = 4;

/// One |x| of the adaptive simulator check: the needed n at that |x| (the larger over the
/// x kinds) and the x attaining it.
struct SimulatorStep {
  std::uint64_t x_length = 0;           ///< the target |x| of the step
  std::uint64_t needed = 0;             ///< smallest grid n meeting ε on the worse x (|x| if none)
  bool reached = false;                 ///< some n < |x| met ε on that x
  std::uint64_t attained_x_length = 0;  ///< |x| of the x attaining it (a scaled witness
                                        ///< is only near the target)
  std::string x_kind;
};

/// The frequency simulator on the worst x found for a point (neither bound), with |x| grown
/// adaptively: the summary fields are those of the last step.
struct SimulatorCheck {
  std::uint64_t needed = 0;  ///< smallest grid n meeting ε (|x| if none)
  std::uint64_t x_length = 0;
  bool reached = false;              ///< some n < |x| met ε
  double certified = 0.0;            ///< the upper side at this point
  bool within_certificate = true;    ///< needed ≤ certified at every step
  std::string x_kind;                ///< which candidate attained it
  bool hardmax_regime = true;        ///< |x| ≥ T_hard with margin (4×)
  std::vector<SimulatorStep> steps;  ///< every |x| tried, in order
  /// Why the growth stopped: "stopped growing" (n within one grid step 2^(1/4) of the
  /// previous |x|'s), "upper side" (n ≥ the certified length) or "cap" (|x| at
  /// --max-x-length).
  std::string stop;
  /// The step with the largest n (the latest on ties): a larger |x| is another input, and its
  /// n can be smaller than an earlier step's.
  std::size_t worst_step = 0;
};

/// The adaptive |x| of the simulator check (docs/tightness.md §3): measures at |x| = start,
/// then 4·|x| (at most cap), until the needed n stops growing (the step's n ≤ 2^(1/4)·the
/// previous step's n, both reached), reaches `certified`, or |x| = cap. `measure(|x|)` gives
/// one step; the summary fields of the result are the last step's. Pure in its arguments.
SimulatorCheck GrowSimulatorLength(std::uint64_t start, std::uint64_t cap, double certified,
                                   const std::function<SimulatorStep(std::uint64_t)>& measure);

}  // namespace ltsim
