// The outcome of recomputing a double result in 50 significant digits (docs/design.md §5) and
// its two spellings in files.
#pragma once

#include "ltsim/io/names.h"

namespace ltsim {

/// What re-computing a double result in high precision (eval/precise.h) found.
enum class RecheckStatus {
  kNone,     ///< nothing to recheck (the double verdict held: no refutation, no witness)
  kAgrees,   ///< the high-precision result agrees with the double one (a claim is confirmed)
  kDiffers,  ///< it does not: the double result was a rounding artefact (a claim unconfirmed)
  kSkipped,  ///< no high-precision evaluation applies: unverified (a note says why)
};

/// The words of the documents that recheck a claim (fuzz witnesses and campaigns, `replay` of
/// a fuzz witness, `threshold`'s witness): "none", "confirmed", "unconfirmed", "skipped".
inline constexpr io::NameTable<RecheckStatus, 4> kRecheckClaimNames{
    "recheck status",
    {{{RecheckStatus::kNone, "none"},
      {RecheckStatus::kAgrees, "confirmed"},
      {RecheckStatus::kDiffers, "unconfirmed"},
      {RecheckStatus::kSkipped, "skipped"}}}};

/// The words of the documents that recheck a value (search witnesses, `refute`, `search
/// --raw-threshold`, point witnesses): "agrees", "differs", "skipped"; kNone is written as no
/// recheck at all.
inline constexpr io::NameTable<RecheckStatus, 3> kRecheckValueNames{
    "recheck status",
    {{{RecheckStatus::kAgrees, "agrees"},
      {RecheckStatus::kDiffers, "differs"},
      {RecheckStatus::kSkipped, "skipped"}}}};

}  // namespace ltsim
