// A user's family directory for `tightness --family-dir` and `refute --family-dir`: one
// subdirectory a member, each a model pair f.json + g.json with its parameter and ε in `meta`
// (docs/tightness.md §7, docs/refute.md §7).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ltsim/model/transformer.h"
#include "ltsim/search/refute.h"

namespace ltsim {

/// Most members a family directory may hold (counted before any model is read).
inline constexpr std::size_t kMaxFamilyMembers = 1000;

/// One member: the pair of one subdirectory and what its `meta` says.
struct UserFamilyMember {
  std::string name;            ///< the subdirectory's name
  std::string f_file, g_file;  ///< DIR/name/f.json, DIR/name/g.json
  Transformer f, g;
  /// The parameter's value (NaN when no parameter was asked for).
  double value = std::numeric_limits<double>::quiet_NaN();
  double eps = 0.0;  ///< the ε given, else meta.eps
  /// meta.first_disagreement when f's meta has one (checked, never trusted).
  std::optional<std::uint64_t> recorded_first_disagreement;
};

struct UserFamilyOptions {
  std::string dir;
  /// The meta key of the parameter: meta.NAME, else meta.params.NAME of f.json (g.json when f's
  /// meta lacks it). Empty with `need_parameter`: the only key of meta.params whose value
  /// differs between members.
  std::string parameter;
  bool need_parameter = true;
  double eps = 0.0;  ///< > 0: every member's ε; 0: each member's meta.eps
};

struct UserFamily {
  std::string dir;
  std::string parameter;                  ///< the key read ("" when none was asked for)
  std::vector<UserFamilyMember> members;  ///< by subdirectory name
};

/// Reads every subdirectory of options.dir (files beside them are ignored) in name order.
/// InputError (one line naming the directory, file or key) for: a missing directory, no
/// member, more than kMaxFamilyMembers, a member without f.json or g.json, a model that does not
/// read, f and g of different alphabets (CheckPair), a parameter or ε absent or not a positive
/// finite number (ε; the parameter: finite), or no parameter to choose by default.
UserFamily ReadUserFamily(const UserFamilyOptions& options);

struct RefuteFamilyOptions {
  /// The bound, N (search.max_length), κ (search.separation), the separation search's seed
  /// (search.seed) and the threads (search.threads, never changing the result); search.eps > 0
  /// is every member's ε, else each member's meta.eps.
  RefuteOptions refute;
  std::string dir;
};

/// One member judged against the bound (JudgeGivenPair).
struct RefuteFamilyMember {
  std::string name;
  std::string f_file, g_file;
  std::optional<std::uint64_t> recorded_first_disagreement;  ///< meta's T*, checked only
  RefuteResult result;
};

struct RefuteFamilyResult {
  RefuteFamilyOptions options;
  std::vector<RefuteFamilyMember> members;  ///< by directory name
  bool refuted = false;                     ///< some member refutes the bound
  int best = 0;  ///< the refuting member of largest T*/bound, else the largest T*/bound
  /// Members whose verdict a cap limits (a separated member agreeing up to N < the bound).
  std::vector<std::string> limited;
};

/// `refute --bound EXPR --family-dir DIR` (docs/refute.md §7): every member's certified T*
/// against the bound at its own constants, members in parallel (identical for any thread
/// count). InputError as ReadUserFamily, or for a member that is not two one-layer models of
/// one alphabet, period and locality.
RefuteFamilyResult RunRefuteFamily(const RefuteFamilyOptions& options);

}  // namespace ltsim
