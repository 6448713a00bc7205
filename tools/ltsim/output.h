// Formatting helpers of the command line: JSON context blocks, numbers, vectors (no computing).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "ltsim/core/types.h"
#include "ltsim/io/output_dir.h"

namespace ltsim::cli {

/// JSON documents keep their keys in insertion order, so the context block comes first.
using Json = nlohmann::ordered_json;

/// A number for JSON: non-finite values (∞ margins, NaN "not applicable") become null.
Json Number(double value);

/// A vector as a JSON array.
Json Array(const Vector& v);

/// The context block every JSON output opens with (docs/design.md §7). `threads` is the number
/// of threads the command used; the documents a study also writes to its directory keep 1, so
/// that their files are the same bytes for any --threads (docs/formats.md §3).
Json Context(const std::string& command, std::uint64_t seed, int threads = 1);

/// The context block of a document that is the same bytes for any `--threads` (tightness,
/// sweep, experiment, statistic --sweep; docs/design.md §4): version, command and seed, and no
/// thread count, which would be the one thing that differs.
Json ReproducibleContext(const std::string& command, std::uint64_t seed);

/// A STRING argument as a table names it: an `iid:` spec without `seed=` with the master seed
/// it took (OpenSource's default seed), anything else as given.
std::string ShownString(const std::string& spec, std::uint64_t seed);

/// The threads a `--threads K` run uses: K, or every core oneTBB sees for 0.
int UsedThreads(int requested);

/// Prints a JSON document on stdout, context first.
void PrintJson(const Json& document);

/// A vector for humans: "0.5" or "[0.5, -1, 2]", 6 significant digits.
std::string Show(const Vector& v);

/// The end of a command with tables and plots (`sweep`, `experiment`, `tightness`): `json` on
/// stdout if `print_json`, else print_table(); then, if `out` is set, <stem>.json and
/// <stem>.csv in its staging directory and, unless `print_json`, <stem>.png from `script`
/// (Debian's /usr/bin/python3 with matplotlib; a missing Python or matplotlib is a one-line
/// note, not an error: the scripts exit with 3 without it; an empty `script` draws nothing),
/// and the set is committed: the directory then holds the whole new set (io/output_dir.h).
void Report(const Json& json, const std::string& csv, bool print_json,
            const std::function<void()>& print_table, io::OutputSet* out, const std::string& stem,
            const std::string& script);

/// Progress of a long run on stderr: a redrawn bar on a terminal, a plain line every 5 s
/// (and at the end) otherwise. Call it with (done, total, detail, elapsed seconds); `detail`
/// is appended (e.g. "12.5 cases/s  refutations 0"). `command` starts the plain lines. With
/// `quiet_when_short`, a run that ends within 5 s prints nothing when not on a terminal (so
/// scripts reading a short --json run see an empty stderr).
using ProgressPrinter =
    std::function<void(std::uint64_t, std::uint64_t, const std::string&, double)>;
ProgressPrinter MakeProgressPrinter(const std::string& command, const std::string& unit,
                                    bool quiet_when_short = false);

/// A number for humans ("∞", "n/a" for NaN, else 6 significant digits).
std::string Show(double value);

/// "1 head", "2 heads" (English plural by an added "s").
std::string Plural(std::uint64_t count, const std::string& word);

/// 1000355 → "1,000,355".
std::string Thousands(std::uint64_t count);

}  // namespace ltsim::cli
