// Strict numbers on every flag of every command, added in one place (main.cpp). CLI11 reads
// integers with strtoull/strtoll in base 0 and reals with strtod, so "-1" wraps to 2^64 − 1,
// "010" is octal, "0x10" hex, 99999999999999999999 clamps, and "nan" or "inf" pass; here an
// integer flag takes plain decimal digits that fit, and a real flag a finite decimal number.
#pragma once

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace ltsim::cli {

/// At most this many threads (oneTBB fails far beyond the cores any machine has).
inline constexpr int kMaxThreads = 1024;

namespace detail {

inline std::string IntegerRule(std::string& value, bool is_signed) {
  const std::size_t digits = is_signed && !value.empty() && value[0] == '-' ? 1 : 0;
  const bool decimal =
      value.size() > digits && value.find_first_not_of("0123456789", digits) == std::string::npos;
  if (!decimal) {
    return std::string("must be a whole number") + (is_signed ? "" : " ≥ 0") +
           " in decimal digits, not '" + value.substr(0, 40) + "'";
  }
  // CLI11 converts in base 0, where a leading 0 means octal: "010" is written back as "10".
  const std::size_t first = value.find_first_not_of('0', digits);
  value.erase(digits, (first == std::string::npos ? value.size() - 1 : first) - digits);
  errno = 0;
  if (is_signed)
    (void)std::strtoll(value.c_str(), nullptr, 10);
  else
    (void)std::strtoull(value.c_str(), nullptr, 10);
  if (errno == ERANGE) return "'" + value.substr(0, 40) + "' is too large";
  return "";
}

inline std::string RealRule(const std::string& value) {
  char* end = nullptr;
  const double parsed = std::strtod(value.c_str(), &end);
  const bool hex = value.find_first_of("xX") != std::string::npos;
  if (value.empty() || hex || end != value.c_str() + value.size() || !std::isfinite(parsed)) {
    return "must be a finite number, not '" + value.substr(0, 40) + "'";
  }
  return "";
}

}  // namespace detail

/// Adds the strict-number checks to every option of `app` and of its subcommands, and the
/// thread bound to every --threads.
inline void RequireStrictNumbers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string full = option->get_type_name();
    const std::string type = full.substr(0, full.find(':'));
    if (type == "UINT" || type == "INT") {
      const bool is_signed = type == "INT";
      // transform, not check: it may rewrite the value ("010" → "10") and runs first.
      option->transform(CLI::Validator(
          [is_signed](std::string& value) { return detail::IntegerRule(value, is_signed); }, ""));
    } else if (type == "FLOAT") {
      option->check(CLI::Validator([](std::string& value) { return detail::RealRule(value); }, ""));
    }
    if (option->check_name("--threads")) {
      option->check(CLI::Validator(
          [](std::string& value) {
            const long long threads = std::strtoll(value.c_str(), nullptr, 10);
            return threads < 0 || threads > kMaxThreads
                       ? "must be between 0 (every core) and " + std::to_string(kMaxThreads) +
                             ", not " + value
                       : std::string();
          },
          ""));
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    RequireStrictNumbers(*sub);
  }
}

}  // namespace ltsim::cli
