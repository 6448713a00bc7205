// placeholder: `ltsim statistic` (Lemma 5.3) is being written.
#include "commands.h"

namespace ltsim::cli {
void AddStatisticCommand(CLI::App&) {}
}  // namespace ltsim::cli
