// Atomic output files: temporary file in the target's directory, then rename(2).
#include "ltsim/io/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "ltsim/core/error.h"

namespace ltsim::io {
namespace {
namespace fs = std::filesystem;
}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::error_code error;
  if (fs::is_directory(path_, error)) {
    throw InputError(path_ + ": is a directory, expected an output file");
  }
  const fs::path target(path_);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // O_EXCL on a name unique to this process and call: created with mode 0666 less the
  // umask, like any output, and never an existing file.
  static std::atomic<unsigned long> counter{0};
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    temp_ = (dir / ("." + target.filename().string() + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(counter++)))
                .string();
    fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    throw InputError(path_ + ": cannot open for writing");
  }
  ::close(fd);
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    std::remove(temp_.c_str());
    throw InputError(path_ + ": cannot open for writing");
  }
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  std::remove(temp_.c_str());
}

void AtomicFile::Commit() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written || out_.fail()) {
    throw InputError(path_ + ": cannot write the output file (disk full?)");
  }
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    throw InputError(path_ + ": cannot replace the output file (" + std::strerror(errno) + ")");
  }
  committed_ = true;
}

void WriteFileAtomically(const std::string& path, std::string_view text) {
  AtomicFile file(path);
  file.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  file.Commit();
}

bool SameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  if (fs::exists(a, error) && fs::exists(b, error)) {
    const bool same = fs::equivalent(a, b, error);
    if (!error) return same;
  }
  const fs::path na = fs::weakly_canonical(a, error);
  if (error) return a == b;
  const fs::path nb = fs::weakly_canonical(b, error);
  if (error) return a == b;
  return na == nb;
}

void RefuseOutputIsInput(const std::string& output, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    std::error_code error;
    if (!fs::exists(input, error)) continue;  // a generator spec, not a file
    if (SameFile(output, input)) {
      throw InputError(output + ": is also an input (" + input + "); choose another output file");
    }
  }
}

}  // namespace ltsim::io
