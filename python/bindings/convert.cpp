// Strings between numpy and sources, and the progress hook that lets Ctrl-C stop a long call.
#include <fmt/format.h>

#include <atomic>

#include "common.h"
#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"

namespace ltsim::python {

ProgressHook::~ProgressHook() {
  // Only reached with the GIL held (the binding owns the hook); drop an exception not raised.
  Py_XDECREF(type_);
  Py_XDECREF(value_);
  Py_XDECREF(trace_);
}

void ProgressHook::Report(std::uint64_t done, std::uint64_t total) {
  std::lock_guard<std::mutex> lock(mutex_);
  py::gil_scoped_acquire gil;
  if (type_) throw Interrupted{};  // already interrupted: keep unwinding
  bool failed = PyErr_CheckSignals() != 0;
  if (!failed && callback_ && !callback_.is_none()) {
    PyObject* result =
        PyObject_CallFunction(callback_.ptr(), "KK", static_cast<unsigned long long>(done),
                              static_cast<unsigned long long>(total));
    failed = result == nullptr;
    Py_XDECREF(result);
  }
  if (failed) {
    PyErr_Fetch(&type_, &value_, &trace_);
    throw Interrupted{};
  }
}

void ProgressHook::Raise() {
  LTSIM_CHECK(type_ != nullptr);
  PyErr_Restore(type_, value_, trace_);
  type_ = value_ = trace_ = nullptr;
  throw py::error_already_set();
}

namespace {

// Tokens of a numpy array, checked one by one: [0, kMaxAlphabet).
std::vector<Token> TokensFromArray(const py::array& array, const std::string& what) {
  if (array.ndim() != 1)
    throw InputError(
        fmt::format("{}: expected a 1-D array of tokens, got {} dimensions", what, array.ndim()));
  const char kind = array.dtype().kind();
  if (array.size() != 0 && kind != 'i' && kind != 'u')
    throw InputError(fmt::format("{}: expected integer tokens, got dtype {}", what,
                                 std::string(py::str(array.dtype()))));
  const auto values = py::array_t<long long, py::array::c_style | py::array::forcecast>(array);
  const auto view = values.unchecked<1>();
  std::vector<Token> tokens(static_cast<std::size_t>(view.shape(0)));
  for (py::ssize_t i = 0; i < view.shape(0); ++i) {
    const long long t = view(i);
    if (t < 0 || t >= kMaxAlphabet)
      throw InputError(fmt::format("{}: position {}: token {} is outside [0, {})", what, i + 1, t,
                                   kMaxAlphabet));
    tokens[static_cast<std::size_t>(i)] = static_cast<Token>(t);
  }
  return tokens;
}

// numpy's view of `object` (InputError when numpy cannot make an array of it).
py::array AsArray(const py::object& object, const std::string& what) {
  py::array array = py::array::ensure(object);
  if (!array)
    throw InputError(fmt::format("{}: expected a 1-D integer array, got {}", what,
                                 std::string(py::str(py::type::of(object).attr("__name__")))));
  return array;
}

std::vector<Run> RunsFromArrays(const py::object& tokens_object, const py::object& counts_object,
                                const std::string& what) {
  const std::vector<Token> tokens = TokensFromArray(AsArray(tokens_object, what), what);
  const py::array counts_array = AsArray(counts_object, what);
  if (counts_array.ndim() != 1 || static_cast<std::size_t>(counts_array.size()) != tokens.size())
    throw InputError(
        fmt::format("{}: runs need as many counts as tokens ({} tokens)", what, tokens.size()));
  const char kind = counts_array.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw InputError(fmt::format("{}: expected integer counts", what));
  // Signed counts are checked for ≥ 1 before they are read as unsigned.
  if (kind == 'i') {
    const auto signed_counts =
        py::array_t<long long, py::array::c_style | py::array::forcecast>(counts_array);
    const auto view = signed_counts.unchecked<1>();
    for (py::ssize_t i = 0; i < view.shape(0); ++i)
      if (view(i) < 1)
        throw InputError(
            fmt::format("{}: run {}: count {} must be at least 1", what, i + 1, view(i)));
  }
  const auto counts =
      py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>(counts_array);
  const auto view = counts.unchecked<1>();
  std::vector<Run> runs;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::uint64_t c = view(static_cast<py::ssize_t>(i));
    if (c < 1) throw InputError(fmt::format("{}: run {}: count must be at least 1", what, i + 1));
    if (total + c < total) throw InputError(fmt::format("{}: total length overflows 2^64", what));
    total += c;
    AppendRun(runs, tokens[i], c);
  }
  if (runs.empty()) throw InputError(fmt::format("{}: the string is empty", what));
  return runs;
}

class HookReader : public ChunkReader {
 public:
  HookReader(std::unique_ptr<ChunkReader> inner, ProgressHook& hook, std::uint64_t length)
      : inner_(std::move(inner)), hook_(hook), length_(length) {}
  bool Next(Chunk& chunk) override {
    const bool more = inner_->Next(chunk);
    if (more) read_ += chunk.length();
    if (read_ >= next_report_ || !more) {
      next_report_ = read_ + (std::uint64_t{1} << 20);
      hook_.Report(more ? read_ : length_, length_);
    }
    return more;
  }

 private:
  std::unique_ptr<ChunkReader> inner_;
  ProgressHook& hook_;
  std::uint64_t length_, read_ = 0, next_report_ = std::uint64_t{1} << 20;
};

class HookSource : public Source {
 public:
  HookSource(std::unique_ptr<Source> inner, ProgressHook& hook)
      : inner_(std::move(inner)), hook_(hook) {}
  std::uint64_t length() const override { return inner_->length(); }
  std::unique_ptr<ChunkReader> Open() const override {
    return std::make_unique<HookReader>(inner_->Open(), hook_, inner_->length());
  }
  std::string name() const override { return inner_->name(); }
  std::string Locate(std::uint64_t index) const override { return inner_->Locate(index); }

 private:
  std::unique_ptr<Source> inner_;
  ProgressHook& hook_;
};

}  // namespace

std::unique_ptr<Source> SourceFromPython(const py::object& x, const std::string& what) {
  if (py::isinstance<py::str>(x)) return OpenSource(x.cast<std::string>());
  if (py::isinstance<py::tuple>(x) && py::len(x) == 2) {
    const py::tuple pair = x.cast<py::tuple>();
    return MakeRunSource(RunsFromArrays(pair[0], pair[1], what), what);
  }
  const py::array array = AsArray(x, what);
  std::vector<Token> tokens = TokensFromArray(array, what);
  if (tokens.empty()) throw InputError(fmt::format("{}: the string is empty", what));
  return MakeTokenSource(std::move(tokens), what);
}

std::unique_ptr<Source> WithHook(std::unique_ptr<Source> source, ProgressHook& hook) {
  return std::make_unique<HookSource>(std::move(source), hook);
}

py::tuple RunsToNumpy(const std::vector<Run>& runs) {
  py::array_t<std::uint16_t> tokens(static_cast<py::ssize_t>(runs.size()));
  py::array_t<std::uint64_t> counts(static_cast<py::ssize_t>(runs.size()));
  auto t = tokens.mutable_unchecked<1>();
  auto c = counts.mutable_unchecked<1>();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    t(static_cast<py::ssize_t>(i)) = runs[i].token;
    c(static_cast<py::ssize_t>(i)) = runs[i].count;
  }
  return py::make_tuple(tokens, counts);
}

py::array_t<std::uint16_t> RunsToTokens(const std::vector<Run>& runs, std::uint64_t max_length) {
  std::uint64_t total = 0;
  for (const Run& run : runs) total += run.count;
  if (total > max_length)
    throw InputError(
        fmt::format("the string has {} tokens, more than the {} an array may hold here "
                    "(use the runs instead)",
                    total, max_length));
  py::array_t<std::uint16_t> out(static_cast<py::ssize_t>(total));
  auto o = out.mutable_unchecked<1>();
  py::ssize_t k = 0;
  for (const Run& run : runs)
    for (std::uint64_t i = 0; i < run.count; ++i) o(k++) = run.token;
  return out;
}

py::array_t<double> VectorToNumpy(const Vector& v) {
  py::array_t<double> out(static_cast<py::ssize_t>(v.size()));
  auto o = out.mutable_unchecked<1>();
  for (Eigen::Index i = 0; i < v.size(); ++i) o(i) = v(i);
  return out;
}

}  // namespace ltsim::python
