// What every binding file of the Python module shares: long calls without the GIL, progress
// and Ctrl-C, strings from numpy arrays and specs, results as dictionaries (docs/python.md).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"
#include "ltsim/strings/source.h"

namespace ltsim::python {

namespace py = pybind11;

/// Unwinds a long call from its progress hook when Python has an exception to raise (Ctrl-C
/// seen by PyErr_CheckSignals, or the user's callback raised): the binding restores that
/// exception once the GIL is held again. Never escapes the module.
struct Interrupted {};

/// The progress of one long call: the user's callback (None: nobody watches) and, after an
/// interruption, the Python exception to raise. Called from C++ with the GIL released, from
/// any thread (serialised here).
class ProgressHook {
 public:
  explicit ProgressHook(py::object callback) : callback_(std::move(callback)) {}
  ProgressHook(const ProgressHook&) = delete;
  ProgressHook& operator=(const ProgressHook&) = delete;
  ~ProgressHook();

  /// Takes the GIL, checks for signals (Ctrl-C), then calls callback(done, total); throws
  /// Interrupted when either raised. `total` 0 means unknown.
  void Report(std::uint64_t done, std::uint64_t total);
  /// With the GIL held after an Interrupted: raises the stored Python exception.
  [[noreturn]] void Raise();

 private:
  py::object callback_;
  std::mutex mutex_;
  PyObject *type_ = nullptr, *value_ = nullptr, *trace_ = nullptr;
};

/// Runs `call` without the GIL and turns an Interrupted into the pending Python exception.
/// Results must be plain C++ values; Python objects are built after the GIL is back.
template <class Call>
auto RunWithoutGil(ProgressHook& hook, Call&& call) {
  try {
    py::gil_scoped_release release;
    return call();
  } catch (const Interrupted&) {
    hook.Raise();
  }
}

/// A model as Python holds it: shared; no binding changes it once built.
using ModelPtr = std::shared_ptr<Transformer>;

/// The string `x` of a call: a 1-D integer numpy array (or anything numpy turns into one),
/// a str spec for OpenSource (a path, `text:…`, `iid:…`), or a (tokens, counts) pair of
/// runs. Tokens must lie in [0, 65535) (InputError naming the position); `what` names the
/// argument in messages. Needs the GIL.
std::unique_ptr<Source> SourceFromPython(const py::object& x, const std::string& what);

/// Wraps a source so that every 2^20 tokens read report to `hook` (and so can be interrupted).
std::unique_ptr<Source> WithHook(std::unique_ptr<Source> source, ProgressHook& hook);

/// Runs as a pair of numpy arrays (tokens uint16, counts uint64).
py::tuple RunsToNumpy(const std::vector<Run>& runs);
/// Runs expanded into a 1-D numpy array of tokens (InputError above `max_length`).
py::array_t<std::uint16_t> RunsToTokens(const std::vector<Run>& runs, std::uint64_t max_length);
/// A vector as a 1-D float64 numpy array (copied).
py::array_t<double> VectorToNumpy(const Vector& v);
/// A number for Python: NaN stays NaN, infinities stay infinite.
inline py::float_ Float(double v) { return py::float_(v); }

void BindModels(py::module_& m);
void BindAnalyses(py::module_& m);

}  // namespace ltsim::python
