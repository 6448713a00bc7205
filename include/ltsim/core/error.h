// Error channels (docs/design.md §3): InputError for bad input, LTSIM_CHECK for our invariants.
#pragma once

#include <stdexcept>
#include <string>

namespace ltsim {

/// Bad input (a file, a flag, a string that does not fit a model). The message is one line
/// naming the file and the key or position; the command line prints it and exits with 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

/// Bad input that is one option of a library call (an options struct's field, e.g. `length`
/// or `methods`). The library names the option by its field name, never by a command-line
/// flag; the command line maps the option to its flag (`--length`) when it prints the error.
/// `value` (optional) is the offending value as the message shows it: "option value: rule".
class OptionError : public InputError {
 public:
  OptionError(const std::string& option, const std::string& rule, const std::string& value = "")
      : InputError(option + (value.empty() ? "" : " " + value) + ": " + rule),
        option_(option),
        rule_(rule),
        value_(value) {}
  const std::string& option() const { return option_; }
  const std::string& rule() const { return rule_; }
  const std::string& value() const { return value_; }

 private:
  std::string option_, rule_, value_;
};

/// Aborts with file:line when an invariant of ours is broken (never for bad input).
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition);

}  // namespace ltsim

#define LTSIM_CHECK(condition) \
  ((condition) ? static_cast<void>(0) : ::ltsim::CheckFailed(__FILE__, __LINE__, #condition))
