// Formatting helpers of the command line.
#include "output.h"

#include <fmt/format.h>
#include <oneapi/tbb/task_arena.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "ltsim/core/error.h"
#include "ltsim/core/version.h"
#include "ltsim/io/output_dir.h"
#include "ltsim/io/output_file.h"
#include "ltsim/study/report_format.h"

namespace ltsim::cli {
namespace {

void RunPlotScript(const std::string& script, const std::string& dir, const std::string& png,
                   const std::string& shown_dir) {
  constexpr int kNoMatplotlib = 3;
  const std::string python = "/usr/bin/python3";
  const std::string install = "apt-get install python3-matplotlib";
  const std::string out = (std::filesystem::path(shown_dir) / png).string();
  if (!std::filesystem::exists(python)) {
    std::cout << png << " skipped: " << python << " not found (" << install << ")\n";
    return;
  }
  const int status = std::system((python + " '" + script + "' '" + dir + "'").c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == kNoMatplotlib) {
    std::cout << png << " skipped: matplotlib is missing (" << install << ")\n";
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cout << png << " skipped: the plot script failed (status " << status << ")\n";
  } else {
    std::cout << "wrote " << out << "\n";
  }
}

void WriteJsonAndCsv(const std::string& dir, const std::string& stem, const Json& json,
                     const std::string& csv) {
  const std::filesystem::path base(dir);
  // Each file whole or not at all (io/output_file.h), the set swapped in by the caller.
  io::WriteFileAtomically((base / (stem + ".json")).string(), json.dump(2) + "\n");
  io::WriteFileAtomically((base / (stem + ".csv")).string(), csv);
}

}  // namespace

Json Number(double value) { return FiniteNumber(value); }

Json Array(const Vector& v) {
  Json array = Json::array();
  for (Eigen::Index k = 0; k < v.size(); ++k) array.push_back(Number(v[k]));
  return array;
}

Json Context(const std::string& command, std::uint64_t seed, int threads) {
  return {{"version", kVersion}, {"command", command}, {"seed", seed}, {"threads", threads}};
}

Json ReproducibleContext(const std::string& command, std::uint64_t seed) {
  return {{"version", kVersion}, {"command", command}, {"seed", seed}};
}

std::string ShownString(const std::string& spec, std::uint64_t seed) {
  const bool seeded = spec.find(",seed=") != std::string::npos || spec.starts_with("iid:seed=");
  return spec.starts_with("iid:") && !seeded ? spec + ",seed=" + std::to_string(seed) : spec;
}

int UsedThreads(int requested) {
  return requested > 0 ? requested : oneapi::tbb::this_task_arena::max_concurrency();
}

void PrintJson(const Json& document) { std::cout << document.dump(2) << "\n"; }

void Report(const Json& json, const std::string& csv, bool print_json,
            const std::function<void()>& print_table, io::OutputSet* out, const std::string& stem,
            const std::string& script) {
  print_json ? PrintJson(json) : print_table();
  if (!out) return;
  WriteJsonAndCsv(out->staging(), stem, json, csv);
  if (!print_json && !script.empty())
    RunPlotScript(script, out->staging(), stem + ".png", out->dir());
  out->Commit();
}

std::string Show(double value) { return ShowNumber(value); }

std::string Plural(std::uint64_t count, const std::string& word) {
  return fmt::format("{} {}{}", count, word, count == 1 ? "" : "s");
}

std::string Thousands(std::uint64_t count) {
  std::string digits = std::to_string(count), out;
  for (std::size_t k = 0; k < digits.size(); ++k) {
    if (k > 0 && (digits.size() - k) % 3 == 0) out += ',';
    out += digits[k];
  }
  return out;
}

std::string Show(const Vector& v) {
  if (v.size() == 1) return Show(v[0]);
  std::string out = "[";
  for (Eigen::Index k = 0; k < v.size(); ++k) out += (k ? ", " : "") + Show(v[k]);
  return out + "]";
}

ProgressPrinter MakeProgressPrinter(const std::string& command, const std::string& unit,
                                    bool quiet_when_short) {
  const bool tty = isatty(STDERR_FILENO);
  auto last = std::make_shared<double>(quiet_when_short ? 0.0 : -1e9);
  return [tty, last, command, unit, quiet_when_short](std::uint64_t done, std::uint64_t total,
                                                      const std::string& detail, double seconds) {
    if (quiet_when_short && !tty && seconds < 5.0 && *last == 0.0) return;
    if (tty) {
      const int width = 30;
      const int filled = total ? static_cast<int>(width * std::min(done, total) / total) : width;
      std::cerr << fmt::format("\r[{}{}] {}/{} {}  {}   ", std::string(filled, '#'),
                               std::string(width - filled, ' '), done, total, unit, detail)
                << std::flush;
      if (done == total) std::cerr << "\n";
    } else if (seconds - *last >= 5.0 || done == total) {
      *last = seconds;
      std::cerr << fmt::format("{}: {}/{} {}, {}, {:.0f} s\n", command, done, total, unit, detail,
                               seconds);
    }
  };
}

}  // namespace ltsim::cli
