// Atomic output files: temporary file in the target's directory, then rename(2).
#include "ltsim/io/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "ltsim/core/error.h"

namespace ltsim::io {
namespace {
namespace fs = std::filesystem;

// The temporary files being written, for a signal handler to remove (unlink(2) is
// async-signal-safe; nothing else here is touched by it). A slot is free (0), being filled or
// emptied (1), or holds a path (2).
constexpr int kTempSlots = 256;
constexpr std::size_t kTempPathBytes = 4096;
struct TempSlot {
  std::atomic<int> state{0};
  char path[kTempPathBytes];
};
TempSlot g_temp_slots[kTempSlots];

// The slot now holding `path`, or -1 when every slot is taken (the file is then only removed
// by the destructor).
int RegisterTemp(const std::string& path) {
  if (path.size() >= kTempPathBytes) return -1;
  for (int k = 0; k < kTempSlots; ++k) {
    int free = 0;
    if (!g_temp_slots[k].state.compare_exchange_strong(free, 1)) continue;
    std::memcpy(g_temp_slots[k].path, path.c_str(), path.size() + 1);
    g_temp_slots[k].state.store(2);
    return k;
  }
  return -1;
}

void UnregisterTemp(int slot) {
  if (slot >= 0) g_temp_slots[slot].state.store(0);
}

extern "C" void RemoveTempsAndReraise(int signal) {
  RemoveTemporaryFiles();
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

void RemoveTemporaryFiles() {
  for (TempSlot& slot : g_temp_slots)
    if (slot.state.load() == 2) ::unlink(slot.path);
}

void RemoveTemporaryFilesOnSignals() {
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, RemoveTempsAndReraise);
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path_, error);
  // The rename would replace a link, not write where it points: refused, so that what the
  // user named is what changes (and nothing outside a directory is reached through one).
  if (fs::is_symlink(status)) {
    throw InputError(path_ +
                     ": is a symbolic link; ltsim does not write through links (name "
                     "the file it points to, or another file)");
  }
  if (fs::is_directory(status)) {
    throw InputError(path_ + ": is a directory, expected an output file");
  }
  const fs::path target(path_);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // O_EXCL on a name unique to this process and call: created with mode 0666 less the
  // umask, like any output, and never an existing file.
  static std::atomic<unsigned long> counter{0};
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    std::string name = ".";  // appended piecewise: g++ 12 warns (-Wrestrict) on "." + string
    name += target.filename().string();
    name += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    temp_ = (dir / name).string();
    fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    throw InputError(path_ + ": cannot open for writing");
  }
  ::close(fd);
  slot_ = RegisterTemp(temp_);
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    std::remove(temp_.c_str());
    throw InputError(path_ + ": cannot open for writing");
  }
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::remove(temp_.c_str());
  }
  UnregisterTemp(slot_);  // after: a signal meanwhile unlinks a name that is gone, harmlessly
}

void AtomicFile::Commit() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written || out_.fail()) {
    throw InputError(path_ + ": cannot write the output file (disk full?)");
  }
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int code = errno;
    std::remove(temp_.c_str());
    throw InputError(path_ + ": cannot replace the output file (" + std::strerror(code) + ")");
  }
  committed_ = true;
  // The temporary name no longer exists: a signal from here on unlinks nothing.
  UnregisterTemp(slot_);
  slot_ = -1;
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
