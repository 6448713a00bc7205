// String files through one descriptor, each block checked against its first read.
#include "strings/file_blocks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ltsim/core/digest.h"
#include "ltsim/core/error.h"

namespace ltsim {
namespace {

bool SameTime(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

}  // namespace

FileBlocks::FileBlocks(const std::string& path, std::size_t block_bytes)
    : path_(path), block_(block_bytes) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw InputError(path_ + ": cannot open string file");
  if (::fstat(fd_, &opened_) != 0 || !S_ISREG(opened_.st_mode)) {
    ::close(fd_);
    throw InputError(path_ + ": cannot open string file (not a regular file)");
  }
  size_ = static_cast<std::uint64_t>(opened_.st_size);
  digests_ = std::vector<std::atomic<std::uint64_t>>((size_ + block_ - 1) / block_);
}

FileBlocks::~FileBlocks() { ::close(fd_); }

void FileBlocks::Changed(const std::string& how) const {
  throw InputError(path_ + ": the file changed while ltsim was reading it (" + how +
                   "); run again once it is complete");
}

std::size_t FileBlocks::Read(std::uint64_t k, char* buffer) const {
  const std::uint64_t begin = k * block_;
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(block_, size_ - begin));
  std::size_t got = 0;
  while (got < want) {
    const ssize_t n = ::pread(fd_, buffer + got, want - got, static_cast<off_t>(begin + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(path_ + ": cannot read string file (" + std::strerror(errno) + ")");
    if (n == 0) Changed("it is shorter than when it was opened");
    got += static_cast<std::size_t>(n);
  }
  // After the read: a write that changed these bytes had already updated the times.
  struct stat now {};
  if (::fstat(fd_, &now) != 0) throw InputError(path_ + ": cannot read string file");
  if (now.st_size != opened_.st_size) Changed("its size differs");
  // The change time is not compared: unlinking the path (a rename over it) changes it too.
  if (!SameTime(now.st_mtim, opened_.st_mtim)) Changed("its modification time differs");
  // Writes within the clock's resolution, or a restored time, leave it as it was: the digest still
  // sees them (every pass after the first reads the bytes the first one read, or stops).
  const std::uint64_t digest = DigestOf(std::string_view(buffer, want), k) | 1;
  std::uint64_t expected = 0;
  if (!digests_[k].compare_exchange_strong(expected, digest) && expected != digest)
    Changed("block " + std::to_string(k) + " differs from its first reading");
  return want;
}

}  // namespace ltsim
