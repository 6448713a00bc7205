// Δ* = lcm of the periods and τ* = max of the localities of several models (docs/theory.md §2.4).
#include "ltsim/model/joint_view.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "ltsim/core/error.h"

namespace ltsim {

JointView JointViewOf(const std::vector<const Transformer*>& models) {
  LTSIM_CHECK(!models.empty());
  JointView view{models.front()->alphabet, 1, 0};
  for (const Transformer* model : models) {
    if (model->alphabet != view.alphabet)
      throw InputError("models have different alphabets (" + std::to_string(view.alphabet) +
                       " and " + std::to_string(model->alphabet) + ")");
    const long long period = std::lcm<long long>(view.period, model->period);
    if (period > (1 << 20))
      throw InputError("models' periods have a common period " + std::to_string(period) +
                       " above the limit 2^20");
    view.period = static_cast<int>(period);
    view.locality = std::max(view.locality, model->locality);
  }
  return view;
}

}  // namespace ltsim
