// Binary strings: .u8 (one byte a token) and little-endian .u16, read in 1 MiB chunks.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

constexpr std::size_t kChunkBytes = 1 << 20;

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr OpenForReading(const std::string& path) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file) throw InputError(path + ": cannot open string file");
  return file;
}

/// One pass over a binary file through its own handle; `T` is the on-disk token type.
template <typename T>
class BinaryReader : public ChunkReader {
 public:
  BinaryReader(const std::string& path, std::uint64_t length)
      : path_(path),
        file_(OpenForReading(path)),
        remaining_(length),
        buffer_(std::min<std::uint64_t>(length, kChunkBytes / sizeof(T))) {}

  bool Next(Chunk& chunk) override {
    if (remaining_ == 0) return false;
    const std::size_t wanted = std::min<std::uint64_t>(remaining_, buffer_.size());
    const std::size_t got = std::fread(buffer_.data(), sizeof(T), wanted, file_.get());
    if (got == 0) throw InputError(path_ + ": string file ended early or cannot be read");
    remaining_ -= got;
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
  std::string path_;
  FilePtr file_;
  std::uint64_t remaining_;
  std::vector<T> buffer_;
};

/// A .u8 or .u16 file; its size is taken once, on construction.
class BinarySource : public Source {
 public:
  BinarySource(std::string path, int bytes_per_token)
      : path_(std::move(path)), bytes_per_token_(bytes_per_token) {
    OpenForReading(path_);
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(path_, error);
    if (error) throw InputError(path_ + ": cannot open string file");
    if (size % bytes_per_token_ != 0) {
      throw InputError(path_ + ": size " + std::to_string(size) +
                       " bytes is odd, but a .u16 string has 2 bytes a token");
    }
    if (size == 0) throw InputError(path_ + ": empty string");
    length_ = size / bytes_per_token_;
  }

  std::uint64_t length() const override { return length_; }
  std::unique_ptr<ChunkReader> Open() const override {
    if (bytes_per_token_ == 1) return std::make_unique<BinaryReader<std::uint8_t>>(path_, length_);
    return std::make_unique<BinaryReader<std::uint16_t>>(path_, length_);
  }
  std::string name() const override { return path_; }
  std::string Locate(std::uint64_t index) const override {
    return path_ + ": offset " + std::to_string(index * bytes_per_token_);
  }

 private:
  std::string path_;
  int bytes_per_token_;
  std::uint64_t length_ = 0;
};

}  // namespace

std::unique_ptr<Source> OpenBinaryFile(const std::string& path, int bytes_per_token) {
  LTSIM_CHECK(bytes_per_token == 1 || bytes_per_token == 2);
  return std::make_unique<BinarySource>(path, bytes_per_token);
}

}  // namespace ltsim
