// The adaptive |x| of the simulator check (docs/tightness.md §3, docs/statistics.md §5).
#include "ltsim/study/simulator_check.h"

#include <algorithm>
#include <cmath>

namespace ltsim {

SimulatorCheck GrowSimulatorLength(std::uint64_t start, std::uint64_t cap, double certified,
                                   const std::function<SimulatorStep(std::uint64_t)>& measure) {
  SimulatorCheck s;
  s.certified = certified;
  std::uint64_t length = std::min(start, cap);
  for (;;) {
    SimulatorStep step = measure(length);
    step.x_length = length;
    s.steps.push_back(step);
    if (static_cast<double>(step.needed) > certified) s.within_certificate = false;
    if (step.needed >= s.steps[s.worst_step].needed) s.worst_step = s.steps.size() - 1;
    const std::size_t k = s.steps.size();
    if (static_cast<double>(step.needed) >= certified) {
      s.stop = "upper side";
    } else if (k >= 2 && step.reached && s.steps[k - 2].reached &&
               static_cast<double>(step.needed) <=
                   std::ceil(std::exp2(0.25) * static_cast<double>(s.steps[k - 2].needed))) {
      s.stop = "stopped growing";
    } else if (length >= cap) {
      s.stop = "cap";
    }
    if (!s.stop.empty()) break;
    length = cap / 4 < length ? cap : 4 * length;
  }
  const SimulatorStep& last = s.steps.back();
  s.needed = last.needed;
  s.reached = last.reached;
  s.x_length = last.attained_x_length > 0 ? last.attained_x_length : last.x_length;
  s.x_kind = last.x_kind;
  return s;
}

}  // namespace ltsim
