// Text strings (docs/formats.md §2): `s` and `s^c` tokens, `#` comments, streamed.
#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"
#include "strings/file_blocks.h"

namespace ltsim {
namespace {

constexpr std::size_t kReadBlock = 1 << 18;  // bytes read from a file at a time
constexpr std::size_t kWordBatch = 1 << 16;  // plain tokens handed out per chunk
constexpr std::size_t kMaxTokenChars = 64;   // longer tokens are malformed
constexpr unsigned kLargestToken = 65534;    // S <= 65535 (docs/model.md §1)

/// One token of the text with the 1-based line and column of its first character.
struct TextToken {
  Run run;
  std::uint64_t line = 0;
  std::uint64_t column = 0;
};

bool IsDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsBlank(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/// Printable form of a token for messages.
std::string Quoted(std::string_view text) {
  std::string shown = "'";
  for (char c : text) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  return shown + "'";
}

/// Splits a character stream (a file or a string in memory) into validated tokens.
class TextScanner {
 public:
  TextScanner(std::shared_ptr<const std::string> text, std::string name)
      : name_(std::move(name)), text_(std::move(text)) {
    pos_ = text_->data();
    end_ = pos_ + text_->size();
  }
  TextScanner(std::shared_ptr<const FileBlocks> file, std::string name)
      : name_(std::move(name)), file_(std::move(file)), buffer_(file_->block_bytes()) {}

  /// Reads the next token; false at the end. Throws InputError "name:line:col: rule".
  bool Next(TextToken& token) {
    for (;;) {
      const int c = Peek();
      if (c == kEnd) return false;
      if (c == '#') {
        SkipComment();
      } else if (c == '\n') {
        Advance();
        ++line_;
        column_ = 1;
      } else if (IsBlank(c)) {
        Advance();
        ++column_;
      } else {
        token.line = line_;
        token.column = column_;
        token.run = Parse(ReadWord(), token);
        return true;
      }
    }
  }

  /// Throws InputError at the position of `token`.
  [[noreturn]] void Fail(const TextToken& token, const std::string& rule) const {
    throw InputError(name_ + ":" + std::to_string(token.line) + ":" + std::to_string(token.column) +
                     ": " + rule);
  }

 private:
  static constexpr int kEnd = -1;

  int Peek() {
    if (pos_ == end_ && !Refill()) return kEnd;
    return static_cast<unsigned char>(*pos_);
  }
  void Advance() { ++pos_; }

  bool Refill() {
    if (!file_ || block_ == file_->blocks()) return false;
    const std::size_t got = file_->Read(block_++, buffer_.data());
    pos_ = buffer_.data();
    end_ = pos_ + got;
    return got > 0;
  }

  void SkipComment() {
    for (int c = Peek(); c != kEnd && c != '\n'; c = Peek()) Advance();
  }

  // The characters of one token, up to whitespace, '#' or the end.
  const std::string& ReadWord() {
    word_.clear();
    for (int c = Peek(); c != kEnd && c != '#' && c != '\n' && !IsBlank(c); c = Peek()) {
      if (word_.size() <= kMaxTokenChars) word_ += static_cast<char>(c);
      Advance();
      ++column_;
    }
    return word_;
  }

  Run Parse(std::string_view word, const TextToken& at) const {
    const std::size_t caret = word.find('^');
    const std::string_view symbol = word.substr(0, caret);
    const std::string_view count =
        caret == std::string_view::npos ? std::string_view("1") : word.substr(caret + 1);
    if (word.size() > kMaxTokenChars || !IsDigits(symbol) || !IsDigits(count)) {
      const std::string_view shown = word.substr(0, kMaxTokenChars);
      Fail(at, "malformed token " + Quoted(shown) + (word.size() > kMaxTokenChars ? "..." : ""));
    }
    Run run;
    unsigned value = 0;
    const auto symbol_end = symbol.data() + symbol.size();
    if (std::from_chars(symbol.data(), symbol_end, value).ec != std::errc() ||
        value > kLargestToken) {
      Fail(at, "token " + std::string(symbol) + " exceeds the largest token " +
                   std::to_string(kLargestToken));
    }
    run.token = static_cast<Token>(value);
    if (std::from_chars(count.data(), count.data() + count.size(), run.count).ec != std::errc()) {
      Fail(at, "run count " + std::string(count) + " does not fit in 64 bits");
    }
    if (run.count < 1) Fail(at, "run count must be at least 1");
    return run;
  }

  std::string name_;
  std::shared_ptr<const std::string> text_;
  std::shared_ptr<const FileBlocks> file_;
  std::uint64_t block_ = 0;  // the next block of file_ to read
  std::vector<char> buffer_;
  const char* pos_ = nullptr;
  const char* end_ = nullptr;
  std::uint64_t line_ = 1;
  std::uint64_t column_ = 1;
  std::string word_;
};

/// Hands out runs as kRun chunks and batches plain tokens into kWords chunks.
class TextReader : public ChunkReader {
 public:
  explicit TextReader(std::unique_ptr<TextScanner> scanner)
      : scanner_(std::move(scanner)), words_(kWordBatch) {}

  bool Next(Chunk& chunk) override {
    std::size_t size = 0;
    TextToken token;
    while (!has_pending_ && size < words_.size() && scanner_->Next(token)) {
      if (token.run.count == 1) {
        words_[size++] = token.run.token;
      } else {
        pending_ = token.run;
        has_pending_ = true;
      }
    }
    chunk = Chunk{};
    if (size > 0) {
      chunk.kind = Chunk::Kind::kWords;
      chunk.words = words_.data();
      chunk.size = size;
      return true;
    }
    if (!has_pending_) return false;
    chunk.kind = Chunk::Kind::kRun;
    chunk.run = pending_;
    has_pending_ = false;
    return true;
  }

 private:
  std::unique_ptr<TextScanner> scanner_;
  std::vector<Token> words_;
  Run pending_;
  bool has_pending_ = false;
};

/// A text string in a file (text_ == nullptr; read through one descriptor, every pass checked
/// against the first: file_blocks.h) or in memory; scanned once to validate.
class TextSource : public Source {
 public:
  TextSource(std::string name, std::shared_ptr<const std::string> text)
      : name_(std::move(name)),
        text_(std::move(text)),
        file_(text_ ? nullptr : std::make_shared<const FileBlocks>(name_, kReadBlock)) {
    auto scanner = NewScanner();
    TextToken token;
    while (scanner->Next(token)) {
      if (length_ + token.run.count < length_) scanner->Fail(token, "string too long for 64 bits");
      length_ += token.run.count;
    }
    if (length_ == 0) throw InputError(name_ + ": empty string");
  }

  std::uint64_t length() const override { return length_; }
  std::unique_ptr<ChunkReader> Open() const override {
    return std::make_unique<TextReader>(NewScanner());
  }
  std::string name() const override { return name_; }

  std::string Locate(std::uint64_t index) const override {
    auto scanner = NewScanner();
    TextToken token;
    std::uint64_t start = 0;
    while (scanner->Next(token)) {
      if (index - start < token.run.count) {
        return name_ + ":" + std::to_string(token.line) + ":" + std::to_string(token.column);
      }
      start += token.run.count;
    }
    return Source::Locate(index);
  }

 private:
  std::unique_ptr<TextScanner> NewScanner() const {
    if (text_) return std::make_unique<TextScanner>(text_, name_);
    return std::make_unique<TextScanner>(file_, name_);
  }

  std::string name_;
  std::shared_ptr<const std::string> text_;
  std::shared_ptr<const FileBlocks> file_;
  std::uint64_t length_ = 0;
};

}  // namespace

std::unique_ptr<Source> OpenTextFile(const std::string& path) {
  return std::make_unique<TextSource>(path, nullptr);
}

std::unique_ptr<Source> ParseTextString(const std::string& text, const std::string& name) {
  return std::make_unique<TextSource>(name, std::make_shared<const std::string>(text));
}

}  // namespace ltsim
