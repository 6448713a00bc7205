// A string file read through one descriptor, block by block, each block checked against the
// first read of it (docs/formats.md §2.1): a file that changes while ltsim reads it is an
// InputError, never a crash or a result mixing two contents.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ltsim {

/// The file is opened once; every pass reads it with pread(2) through that descriptor (so a
/// rename or a replacement of the path cannot swap the string between passes), and
/// FileBlocks is safe to read from any number of threads at once. Each read checks that the
/// file's size and modification time are those it had when opened, and that the block's
/// digest equals the one recorded by the first read of that block.
class FileBlocks {
 public:
  /// Opens `path` (a regular file); InputError naming it when it cannot.
  FileBlocks(const std::string& path, std::size_t block_bytes);
  ~FileBlocks();
  FileBlocks(const FileBlocks&) = delete;
  FileBlocks& operator=(const FileBlocks&) = delete;

  const std::string& path() const { return path_; }
  /// The file's size when it was opened: every pass reads exactly these bytes.
  std::uint64_t size() const { return size_; }
  std::size_t block_bytes() const { return block_; }
  std::uint64_t blocks() const { return digests_.size(); }

  /// Reads block `k` (< blocks()) into `buffer`, which holds block_bytes() bytes; returns how
  /// many bytes it holds (block_bytes() but for the last block). InputError naming the file
  /// when it cannot be read or has changed since it was opened.
  std::size_t Read(std::uint64_t k, char* buffer) const;

 private:
  [[noreturn]] void Changed(const std::string& how) const;

  std::string path_;
  std::size_t block_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  struct stat opened_ {};
  // Digest | 1 of each block once read (0: not read yet), shared by every pass and thread.
  mutable std::vector<std::atomic<std::uint64_t>> digests_;
};

}  // namespace ltsim
