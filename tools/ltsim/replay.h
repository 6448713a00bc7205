// `ltsim replay`: re-run a recorded witness (fuzz, search or tightness point) and say whether it
// reproduced.
#pragma once

#include <string>

namespace ltsim::cli {

/// The one exit convention of replays (docs/commands.md "Replaying a witness"): 0 = the recorded
/// result reproduced, 1 = it did not; bad input throws InputError (exit 2).
constexpr int kReproduced = 0;
constexpr int kNotReproduced = 1;

/// A fuzz witness (format ltsim-witness): reproduced when its property is still refuted.
int RunFuzzReplay(const std::string& path, bool json);

/// A search witness (format ltsim-search-witness): reproduced when the objective is within
/// 1e-12 relative of the stored value and the high-precision recheck gives the recorded status.
int RunSearchReplay(const std::string& path, bool json);

/// A tightness point witness (format ltsim-point): reproduced when the replayed T* (or its
/// censoring) is the recorded one.
int RunPointReplay(const std::string& path, bool json);

/// A Lemma 5.3 point witness (format ltsim-attack-point): reproduced when the adversarial error
/// and the transport bound are within 1e-12 relative of the recorded ones.
int RunAttackReplay(const std::string& path, bool json);

/// A refute result (DIR/refute.json beside DIR/f.json and DIR/g.json) or a raw search witness
/// (format ltsim-raw-search-witness): reproduced when T*, the separation and the verdict are.
int RunRefuteReplay(const std::string& path, bool json);

/// Any kind, told apart by the file's "format" key.
int RunReplay(const std::string& path, bool json);

}  // namespace ltsim::cli
