// Strings held in memory: bytes, tokens and runs, shared by every reader without copying.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

constexpr std::size_t kChunkTokens = 1 << 20;

/// Hands out an array in slices of up to kChunkTokens; keeps the array alive.
template <typename T>
class ArrayReader : public ChunkReader {
 public:
  explicit ArrayReader(std::shared_ptr<const std::vector<T>> data) : data_(std::move(data)) {}

  bool Next(Chunk& chunk) override {
    if (next_ >= data_->size()) return false;
    chunk = Chunk{};
    chunk.size = std::min(kChunkTokens, data_->size() - next_);
    if constexpr (sizeof(T) == 1) {
      chunk.kind = Chunk::Kind::kBytes;
      chunk.bytes = data_->data() + next_;
    } else {
      chunk.kind = Chunk::Kind::kWords;
      chunk.words = data_->data() + next_;
    }
    next_ += chunk.size;
    return true;
  }

 private:
  std::shared_ptr<const std::vector<T>> data_;
  std::size_t next_ = 0;
};

/// A byte (T = uint8_t) or token (T = Token) array in memory.
template <typename T>
class ArraySource : public Source {
 public:
  ArraySource(std::vector<T> data, std::string name)
      : data_(std::make_shared<const std::vector<T>>(std::move(data))), name_(std::move(name)) {}

  std::uint64_t length() const override { return data_->size(); }
  std::unique_ptr<ChunkReader> Open() const override {
    return std::make_unique<ArrayReader<T>>(data_);
  }
  std::string name() const override { return name_; }

 private:
  std::shared_ptr<const std::vector<T>> data_;
  std::string name_;
};

/// Hands out one kRun chunk per (non-empty) run.
class RunReader : public ChunkReader {
 public:
  explicit RunReader(std::shared_ptr<const std::vector<Run>> runs) : runs_(std::move(runs)) {}

  bool Next(Chunk& chunk) override {
    while (next_ < runs_->size() && (*runs_)[next_].count == 0) ++next_;
    if (next_ >= runs_->size()) return false;
    chunk = Chunk{};
    chunk.kind = Chunk::Kind::kRun;
    chunk.run = (*runs_)[next_++];
    return true;
  }

 private:
  std::shared_ptr<const std::vector<Run>> runs_;
  std::size_t next_ = 0;
};

class RunSource : public Source {
 public:
  RunSource(std::vector<Run> runs, std::string name)
      : runs_(std::make_shared<const std::vector<Run>>(std::move(runs))), name_(std::move(name)) {
    for (const Run& run : *runs_) length_ += run.count;
  }

  std::uint64_t length() const override { return length_; }
  std::unique_ptr<ChunkReader> Open() const override { return std::make_unique<RunReader>(runs_); }
  std::string name() const override { return name_; }

 private:
  std::shared_ptr<const std::vector<Run>> runs_;
  std::string name_;
  std::uint64_t length_ = 0;
};

}  // namespace

std::unique_ptr<Source> MakeByteSource(std::vector<std::uint8_t> tokens, std::string name) {
  return std::make_unique<ArraySource<std::uint8_t>>(std::move(tokens), std::move(name));
}

std::unique_ptr<Source> MakeTokenSource(std::vector<Token> tokens, std::string name) {
  return std::make_unique<ArraySource<Token>>(std::move(tokens), std::move(name));
}

std::unique_ptr<Source> MakeRunSource(std::vector<Run> runs, std::string name) {
  return std::make_unique<RunSource>(std::move(runs), std::move(name));
}

}  // namespace ltsim
