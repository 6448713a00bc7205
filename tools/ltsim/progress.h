// One progress display for every long command: a bar on a terminal, a plain line when piped.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "ltsim/core/progress.h"
#include "ltsim/strings/source.h"

namespace ltsim::cli {

/// Progress on stderr. On a terminal: a bar redrawn at most 10 times a second, drawn only
/// once the run has lasted `quiet_seconds` (so quick commands print nothing). Not a terminal:
/// a plain line "LABEL: done/total UNIT, rate UNIT/s[, extra], t s" every `every_seconds`
/// (the first after `every_seconds`), plus a last line at the end if any line was printed or
/// `always_final`. Thread-safe; the rate counts only units done in this run (`base` = the
/// units already done before it, e.g. by a resumed campaign).
class Progress {
 public:
  struct Options {
    double quiet_seconds = 1.0;
    double every_seconds = 5.0;
    bool always_final = false;
    std::uint64_t base = 0;
  };
  Progress(std::string label, std::string unit);
  Progress(std::string label, std::string unit, Options options);
  ~Progress();

  /// Reports `done` of `total` (0 = unknown) with an optional extra field ("2 refutations").
  void Update(std::uint64_t done, std::uint64_t total, const std::string& extra = "");
  /// Ends the display: the terminal line is completed, a final plain line printed if due.
  void Finish();
  /// A callback for library hooks (ltsim/core/progress.h) that forwards to Update.
  ProgressCallback Callback();

 private:
  void Draw(double seconds, bool final);
  double Seconds() const;

  std::string label_, unit_;
  Options options_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::uint64_t done_ = 0, total_ = 0;
  std::string extra_;
  double last_draw_ = -1e9;
  std::uint64_t printed_done_ = 0, printed_total_ = 0;
  bool drawn_ = false, finished_ = false;
};

/// Wraps a string so that every pass over it reports tokens read ("pass 2: 3.1e8/1e9
/// tokens"): progress for `eval`, `sandwich` and `statistic` without touching the evaluators.
std::unique_ptr<Source> WithProgress(std::unique_ptr<Source> source,
                                     std::shared_ptr<Progress> progress);

}  // namespace ltsim::cli
