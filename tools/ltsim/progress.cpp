// Progress display (progress.h): one implementation for every command.
#include "progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>

namespace ltsim::cli {
namespace {

constexpr double kRedrawSeconds = 0.1;
constexpr int kBarWidth = 30;

// 12345 → "12345"; 3.1e8 → "3.1e8" (large counts of tokens stay short).
std::string Count(std::uint64_t n) {
  if (n < 10'000'000) return std::to_string(n);
  return fmt::format("{:.3g}", static_cast<double>(n));
}

}  // namespace

Progress::Progress(std::string label, std::string unit)
    : Progress(std::move(label), std::move(unit), Options{}) {}

Progress::Progress(std::string label, std::string unit, Options options)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      options_(options),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {
  // LTSIM_PROGRESS_EVERY=S: a line every S seconds (0: at every update), for scripts and tests.
  if (const char* every = std::getenv("LTSIM_PROGRESS_EVERY")) {
    char* end = nullptr;
    const double seconds = std::strtod(every, &end);
    if (end != every && *end == '\0' && seconds >= 0) {
      options_.every_seconds = seconds;
      options_.quiet_seconds = std::min(options_.quiet_seconds, seconds);
    }
  }
}

Progress::~Progress() { Finish(); }

double Progress::Seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::Update(std::uint64_t done, std::uint64_t total, const std::string& extra) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  done_ = done;
  total_ = total;
  extra_ = extra;
  const double seconds = Seconds();
  const bool end = total > 0 && done >= total;
  if (tty_) {
    if (seconds < options_.quiet_seconds && !(end && options_.always_final)) return;
    if (seconds - last_draw_ < kRedrawSeconds && !end) return;
  } else {
    const bool due =
        seconds >= options_.every_seconds && seconds - last_draw_ >= options_.every_seconds && !end;
    if (!due && !(end && (drawn_ || options_.always_final))) return;
  }
  last_draw_ = seconds;
  Draw(seconds, false);
}

void Progress::Draw(double seconds, bool final) {
  const std::uint64_t fresh = done_ >= options_.base ? done_ - options_.base : 0;
  const double rate = seconds > 0 ? fresh / seconds : 0.0;
  const std::string extra = extra_.empty() ? "" : ", " + extra_;
  const std::string of = total_ > 0 ? "/" + Count(total_) : "";
  const std::string this_run = options_.base > 0 ? ", " + Count(fresh) + " this run" : "";
  if (tty_) {
    const int filled =
        total_ > 0 ? static_cast<int>(kBarWidth * std::min<double>(1.0, 1.0 * done_ / total_)) : 0;
    std::cerr << fmt::format("\r{}: [{}{}] {}{} {}{}  {:.1f} {}/s{}   ", label_,
                             std::string(filled, '#'), std::string(kBarWidth - filled, ' '),
                             Count(done_), of, unit_, this_run, rate, unit_, extra)
              << std::flush;
    if (final) std::cerr << "\n";
  } else {
    std::cerr << fmt::format("{}: {}{} {}{}, {:.1f} {}/s{}, {:.1f} s\n", label_, Count(done_), of,
                             unit_, this_run, rate, unit_, extra, seconds);
  }
  drawn_ = true;
  printed_done_ = done_;
  printed_total_ = total_;
}

void Progress::Finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  // A terminal line is completed; a plain stream gets a last line unless it has just had it.
  if (drawn_ && (tty_ || printed_done_ != done_ || printed_total_ != total_)) Draw(Seconds(), true);
}

ProgressCallback Progress::Callback() {
  return [this](std::uint64_t done, std::uint64_t total) { Update(done, total); };
}

namespace {

// Reports the tokens of each pass; passes are numbered by the order they were opened.
class ProgressReader : public ChunkReader {
 public:
  ProgressReader(std::unique_ptr<ChunkReader> inner, std::shared_ptr<Progress> progress,
                 std::uint64_t length, int pass)
      : inner_(std::move(inner)), progress_(std::move(progress)), length_(length), pass_(pass) {}

  bool Next(Chunk& chunk) override {
    const bool more = inner_->Next(chunk);
    if (more) read_ += chunk.length();
    // One report per 2^20 tokens and one at the end: a run-length string has one chunk a run.
    if (!more || read_ >= next_report_) {
      next_report_ = read_ + kReportTokens;
      progress_->Update(more ? read_ : length_, length_, fmt::format("pass {}", pass_));
    }
    return more;
  }

 private:
  std::unique_ptr<ChunkReader> inner_;
  std::shared_ptr<Progress> progress_;
  static constexpr std::uint64_t kReportTokens = 1 << 20;
  std::uint64_t length_, read_ = 0, next_report_ = 0;
  int pass_;
};

class ProgressSource : public Source {
 public:
  ProgressSource(std::unique_ptr<Source> inner, std::shared_ptr<Progress> progress)
      : inner_(std::move(inner)), progress_(std::move(progress)) {}

  std::uint64_t length() const override { return inner_->length(); }
  std::unique_ptr<ChunkReader> Open() const override {
    return std::make_unique<ProgressReader>(inner_->Open(), progress_, inner_->length(), ++passes_);
  }
  std::string name() const override { return inner_->name(); }
  std::string Locate(std::uint64_t index) const override { return inner_->Locate(index); }

 private:
  std::unique_ptr<Source> inner_;
  std::shared_ptr<Progress> progress_;
  mutable std::atomic<int> passes_{0};
};

}  // namespace

std::unique_ptr<Source> WithProgress(std::unique_ptr<Source> source,
                                     std::shared_ptr<Progress> progress) {
  return std::make_unique<ProgressSource>(std::move(source), std::move(progress));
}

}  // namespace ltsim::cli
