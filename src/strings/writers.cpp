// Writing strings to disk: run-length text and .u8/.u16 binary (docs/formats.md §2).
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/io/output_file.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

constexpr std::size_t kBufferBytes = 1 << 20;
constexpr int kRunsPerLine = 16;

/// The path that names standard output.
constexpr const char* kStdout = "-";

/// An output file that reports failures as InputErrors naming the path. It is written to a
/// temporary file next to the target and renamed over it by Close(), so the target is never
/// truncated (even when it is also the input) and never left half-written; `-` is standard
/// output, written as it goes.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path)
      : file_(path == kStdout ? nullptr : std::make_unique<io::AtomicFile>(path)),
        path_(path == kStdout ? "stdout" : path) {}

  void Write(const void* data, std::size_t bytes) {
    std::ostream& out = stream();
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    if (!out) throw InputError(path() + ": cannot write string file (disk full?)");
  }
  void Close() {
    if (file_) return file_->Commit();
    std::cout.flush();
    if (!std::cout) throw InputError(path() + ": cannot write the string");
  }
  const std::string& path() const { return path_; }

 private:
  std::ostream& stream() { return file_ ? file_->stream() : std::cout; }

  std::unique_ptr<io::AtomicFile> file_;  // null for standard output
  std::string path_;
};

// Refuses a binary output that cannot fit in the free space of its directory, before
// writing any of it (a 2^64-token run would otherwise fill the disk).
void CheckSpace(const std::string& path, std::uint64_t length, int bytes_per_token) {
  if (path == kStdout) return;
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::error_code error;
  const std::filesystem::space_info space = std::filesystem::space(dir, error);
  if (error) return;  // the open below reports a missing directory
  const unsigned __int128 bytes = static_cast<unsigned __int128>(length) * bytes_per_token;
  if (bytes > space.available) {
    throw InputError(path + ": the string has " + std::to_string(length) + " tokens, " +
                     (bytes >> 64 ? std::string("more than 2^64")
                                  : std::to_string(static_cast<std::uint64_t>(bytes))) +
                     " bytes, but only " + std::to_string(space.available) +
                     " bytes are free there");
  }
}

// Bytes of one run as the text writer prints it ("s^c" and a separator), at most 28.
std::uint64_t RunTextBytes(Token token, std::uint64_t count) {
  const auto digits = [](std::uint64_t v) {
    std::uint64_t n = 1;
    while (v >= 10) v /= 10, ++n;
    return n;
  };
  return digits(token) + (count > 1 ? 1 + digits(count) : 0) + 1;
}

// Refuses a text output that cannot fit in the free space of its directory, before writing
// any of it (iid:length=1e19 would otherwise fill the disk): when even one run per token (at
// most 6 bytes each) might not fit, the text's size is estimated from its first ~2^20 tokens
// (exact when they are all of it) and the run is refused if the estimate exceeds the space.
void CheckTextSpace(const Source& source, const std::string& path, std::uint64_t header) {
  if (path == kStdout) return;
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::error_code error;
  const std::filesystem::space_info space = std::filesystem::space(dir, error);
  if (error) return;  // the open below reports a missing directory
  const long double length = static_cast<long double>(source.length());
  if (header + 6.0L * length <= static_cast<long double>(space.available)) return;
  constexpr std::uint64_t kSampleTokens = std::uint64_t{1} << 20;
  std::uint64_t tokens = 0, bytes = header;
  Run current;
  auto reader = source.Open();
  Chunk chunk;
  const auto add = [&](Token token, std::uint64_t count) {
    if (current.count > 0 && current.token == token) {
      current.count += count;
      return;
    }
    if (current.count > 0) bytes += RunTextBytes(current.token, current.count);
    current = Run{token, count};
  };
  while (tokens < kSampleTokens && reader->Next(chunk)) {
    if (chunk.kind == Chunk::Kind::kRun) {
      add(chunk.run.token, chunk.run.count);
    } else {
      for (std::size_t k = 0; k < chunk.size; ++k) add(chunk.at(k), 1);
    }
    tokens += chunk.length();
  }
  if (current.count > 0) bytes += RunTextBytes(current.token, current.count);
  const long double estimate =
      tokens == 0 ? 0.0L
                  : static_cast<long double>(bytes) * (length / static_cast<long double>(tokens));
  if (estimate > static_cast<long double>(space.available)) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%.3g", static_cast<double>(estimate));
    throw InputError(path + ": the string has " + std::to_string(source.length()) +
                     " tokens; its text would take " + (tokens >= source.length() ? "" : "about ") +
                     shown + " bytes, but only " + std::to_string(space.available) +
                     " bytes are free there (nothing written)");
  }
}

/// Merges runs across chunk boundaries and prints them as "s" or "s^c", kRunsPerLine a line.
class RunTextWriter {
 public:
  explicit RunTextWriter(OutputFile& out) : out_(out) {}

  void Add(Token token, std::uint64_t count) {
    if (current_.count > 0 && current_.token == token) {
      current_.count += count;
      return;
    }
    Emit();
    current_ = Run{token, count};
  }

  void Finish() {
    Emit();
    if (on_line_ > 0) text_ += '\n';
    out_.Write(text_.data(), text_.size());
    text_.clear();
  }

 private:
  void Emit() {
    if (current_.count == 0) return;
    if (on_line_ > 0) text_ += ' ';
    AppendNumber(current_.token);
    if (current_.count > 1) {
      text_ += '^';
      AppendNumber(current_.count);
    }
    if (++on_line_ == kRunsPerLine) {
      text_ += '\n';
      on_line_ = 0;
    }
    if (text_.size() >= kBufferBytes) {
      out_.Write(text_.data(), text_.size());
      text_.clear();
    }
  }

  void AppendNumber(std::uint64_t value) {
    char digits[24];
    const auto result = std::to_chars(digits, digits + sizeof(digits), value);
    text_.append(digits, result.ptr);
  }

  OutputFile& out_;
  Run current_;
  int on_line_ = 0;
  std::string text_;
};

/// Buffers tokens of on-disk type T (little-endian) and checks that each one fits.
template <typename T>
class BinaryWriter {
 public:
  BinaryWriter(const Source& source, OutputFile& out) : source_(source), out_(out) {
    buffer_.reserve(kCapacity);
  }

  void Add(const Chunk& chunk) {
    if (CanWriteDirectly(chunk)) {
      Flush();
      out_.Write(sizeof(T) == 1 ? static_cast<const void*>(chunk.bytes) : chunk.words,
                 chunk.size * sizeof(T));
    } else if (chunk.kind == Chunk::Kind::kRun) {
      AddRun(chunk.run);
    } else {
      AddTokens(chunk);
    }
    index_ += chunk.length();
  }

  void Flush() {
    if constexpr (sizeof(T) == 2 && std::endian::native == std::endian::big) {
      for (T& word : buffer_) word = static_cast<T>((word >> 8) | (word << 8));
    }
    out_.Write(buffer_.data(), buffer_.size() * sizeof(T));
    buffer_.clear();
  }

 private:
  static constexpr std::size_t kCapacity = kBufferBytes / sizeof(T);

  static bool CanWriteDirectly(const Chunk& chunk) {
    if constexpr (sizeof(T) == 1) return chunk.kind == Chunk::Kind::kBytes;
    return chunk.kind == Chunk::Kind::kWords && std::endian::native == std::endian::little;
  }

  void CheckFits(Token token, std::uint64_t index) const {
    if (sizeof(T) == 1 && token > 0xff) {
      // Position first, then the value: "x.u8: iid:…: token 5 is 294, which does not fit".
      throw InputError(out_.path() + ": " + source_.Locate(index) + " is " + std::to_string(token) +
                       ", which does not fit in one byte (.u8 needs tokens below 256; use .u16)");
    }
  }

  void AddTokens(const Chunk& chunk) {
    for (std::size_t k = 0; k < chunk.size; ++k) {
      CheckFits(chunk.at(k), index_ + k);
      buffer_.push_back(static_cast<T>(chunk.at(k)));
      if (buffer_.size() == kCapacity) Flush();
    }
  }

  // Appends run.count copies; the run starts at index_.
  void AddRun(const Run& run) {
    CheckFits(run.token, index_);
    for (std::uint64_t left = run.count; left > 0;) {
      const std::size_t room = kCapacity - buffer_.size();
      const std::size_t n = std::min<std::uint64_t>(left, room);
      buffer_.insert(buffer_.end(), n, static_cast<T>(run.token));
      left -= n;
      if (buffer_.size() == kCapacity) Flush();
    }
  }

  const Source& source_;
  OutputFile& out_;
  std::vector<T> buffer_;
  std::uint64_t index_ = 0;
};

template <typename T>
void WriteTokens(const Source& source, OutputFile& out) {
  BinaryWriter<T> writer(source, out);
  auto reader = source.Open();
  Chunk chunk;
  while (reader->Next(chunk)) writer.Add(chunk);
  writer.Flush();
}

}  // namespace

void WriteRunLengthText(const Source& source, const std::string& path) {
  const std::string header = "# ltsim string, length " + std::to_string(source.length()) + "\n";
  CheckTextSpace(source, path, header.size());
  OutputFile out(path);
  out.Write(header.data(), header.size());
  RunTextWriter writer(out);
  auto reader = source.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    if (chunk.kind == Chunk::Kind::kRun) {
      writer.Add(chunk.run.token, chunk.run.count);
    } else {
      for (std::size_t k = 0; k < chunk.size; ++k) writer.Add(chunk.at(k), 1);
    }
  }
  writer.Finish();
  out.Close();
}

void WriteBinary(const Source& source, const std::string& path, int bytes_per_token) {
  LTSIM_CHECK(bytes_per_token == 1 || bytes_per_token == 2);
  CheckSpace(path, source.length(), bytes_per_token);
  OutputFile out(path);
  if (bytes_per_token == 1) {
    WriteTokens<std::uint8_t>(source, out);
  } else {
    WriteTokens<std::uint16_t>(source, out);
  }
  out.Close();
}

}  // namespace ltsim
