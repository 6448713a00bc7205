// Binary strings: .u8 (one byte a token) and little-endian .u16, read in 1 MiB blocks.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"
#include "strings/file_blocks.h"

namespace ltsim {
namespace {

constexpr std::size_t kChunkBytes = 1 << 20;

/// One pass over a binary file through the source's descriptor; `T` is the on-disk token type.
template <typename T>
class BinaryReader : public ChunkReader {
 public:
  explicit BinaryReader(std::shared_ptr<const FileBlocks> file)
      : file_(std::move(file)), buffer_(file_->block_bytes() / sizeof(T)) {}

  bool Next(Chunk& chunk) override {
    if (block_ == file_->blocks()) return false;
    const std::size_t got =
        file_->Read(block_++, reinterpret_cast<char*>(buffer_.data())) / sizeof(T);
    chunk = Chunk{};
    chunk.size = got;
    if constexpr (sizeof(T) == 1) {
      chunk.kind = Chunk::Kind::kBytes;
      chunk.bytes = buffer_.data();
    } else {
      if constexpr (std::endian::native == std::endian::big) {
        for (std::size_t k = 0; k < got; ++k)
          buffer_[k] = static_cast<T>((buffer_[k] >> 8) | (buffer_[k] << 8));
      }
      chunk.kind = Chunk::Kind::kWords;
      chunk.words = buffer_.data();
    }
    return true;
  }

 private:
  std::shared_ptr<const FileBlocks> file_;
  std::uint64_t block_ = 0;
  std::vector<T> buffer_;
};

/// A .u8 or .u16 file, opened once (file_blocks.h: one descriptor, every pass checked against
/// the first); its size is taken when it is opened.
class BinarySource : public Source {
 public:
  BinarySource(std::string path, int bytes_per_token)
      : path_(std::move(path)),
        bytes_per_token_(bytes_per_token),
        file_(std::make_shared<const FileBlocks>(path_, kChunkBytes)) {
    const std::uint64_t size = file_->size();
    if (size % bytes_per_token_ != 0) {
      throw InputError(path_ + ": size " + std::to_string(size) +
                       " bytes is odd, but a .u16 string has 2 bytes a token");
    }
    if (size == 0) throw InputError(path_ + ": empty string");
    length_ = size / bytes_per_token_;
  }

  std::uint64_t length() const override { return length_; }
  std::unique_ptr<ChunkReader> Open() const override {
    if (bytes_per_token_ == 1) return std::make_unique<BinaryReader<std::uint8_t>>(file_);
    return std::make_unique<BinaryReader<std::uint16_t>>(file_);
  }
  std::string name() const override { return path_; }
  std::string Locate(std::uint64_t index) const override {
    return path_ + ": offset " + std::to_string(index * bytes_per_token_);
  }

 private:
  std::string path_;
  int bytes_per_token_;
  std::shared_ptr<const FileBlocks> file_;
  std::uint64_t length_ = 0;
};

}  // namespace

std::unique_ptr<Source> OpenBinaryFile(const std::string& path, int bytes_per_token) {
  LTSIM_CHECK(bytes_per_token == 1 || bytes_per_token == 2);
  return std::make_unique<BinarySource>(path, bytes_per_token);
}

}  // namespace ltsim
