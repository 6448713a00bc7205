// One Lemma 5.3 point (an adversarial statistic error) as a file that replays with one command:
// `ltsim replay FILE` (format ltsim-attack-point; docs/tightness.md §5).
#pragma once

#include <string>

#include "ltsim/gen/input_generator.h"
#include "ltsim/io/json.h"
#include "ltsim/study/statistic_attack.h"

namespace ltsim {

/// x is stored as its generator spec (the same string on every run), z as the scheme, n and
/// seed that build it, and the search by its options: AttackStatistic recomputes both numbers.
struct AttackWitness {
  std::string study = "tightness";
  std::string label;                      ///< what the numbers are
  io::Json context = io::Json::object();  ///< where the point comes from: theorem, scheme, point, …
  InputSpec input;
  AttackOptions options;   ///< models empty: the schemes of the sweep are model-free
  double error = 0.0;      ///< the adversarial error found (a lower bound on the supremum)
  double certified = 0.0;  ///< the transport bound over the whole class on the same x and z
  bool censored = false;   ///< error ≤ 1e-12: only an upper bound on the error
};

/// Writes `stem`.attack.json (format ltsim-attack-point, version 1); returns its path.
std::string WriteAttackWitness(const AttackWitness& w, const std::string& stem);

/// Reads strictly (InputError naming the file and key): unknown or missing keys, a scheme
/// that needs models, |x| over 10^8, n outside [1, |x|).
AttackWitness ReadAttackWitness(const std::string& path);

struct AttackReplay {
  double error = 0.0, certified = 0.0;
  bool censored = false;
  bool reproduced = false;  ///< both numbers within 1e-12 relative, and the censoring
};

/// Regenerates x, rebuilds z and reruns the search from the file alone.
AttackReplay ReplayAttack(const AttackWitness& w);

}  // namespace ltsim
