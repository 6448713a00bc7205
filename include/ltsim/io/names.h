// One name table per enum: the names files and flags use, the parse that inverts them.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ltsim/core/error.h"

namespace ltsim::io {

/// One enumerator and the name it has in files and on the command line.
template <typename E>
struct Named {
  E value;
  const char* name;
};

/// The names of an enum's values, written once; Name and Parse are inverse by construction.
/// `kind` says what the names are ("attention mode") in the error of an unknown name.
template <typename E, std::size_t N>
struct NameTable {
  const char* kind;
  std::array<Named<E>, N> entries;

  /// The name of `value` (every enumerator is in the table: a missing one is our bug).
  const char* Name(E value) const {
    for (const Named<E>& entry : entries)
      if (entry.value == value) return entry.name;
    LTSIM_CHECK(!"enumerator missing from its name table");
  }

  /// The value named `name`, if any.
  std::optional<E> Find(std::string_view name) const {
    for (const Named<E>& entry : entries)
      if (name == entry.name) return entry.value;
    return std::nullopt;
  }

  /// The value named `name`; InputError "unknown KIND 'name' (known: a, b, c)" otherwise.
  E Parse(std::string_view name) const {
    if (const std::optional<E> value = Find(name)) return *value;
    constexpr std::size_t kEcho = 60;  // a long value is cut: the error stays one short line
    const std::string shown =
        name.size() > kEcho ? std::string(name.substr(0, kEcho)) + "..." : std::string(name);
    throw InputError("unknown " + std::string(kind) + " '" + shown + "' (known: " + Known() + ")");
  }

  /// "a, b, c": every name in table order.
  std::string Known() const {
    std::string out;
    for (const Named<E>& entry : entries)
      out += (out.empty() ? "" : ", ") + std::string(entry.name);
    return out;
  }

  /// Every name in table order (for command-line checks and help texts).
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (const Named<E>& entry : entries) out.emplace_back(entry.name);
    return out;
  }

  /// Every value in table order.
  std::vector<E> Values() const {
    std::vector<E> out;
    for (const Named<E>& entry : entries) out.push_back(entry.value);
    return out;
  }
};

}  // namespace ltsim::io
