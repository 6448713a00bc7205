// The extension module ltsim._ltsim: bad input becomes ltsim.InputError (a ValueError) with the
// command line's one-line message; the Python package (python/ltsim/) builds its API on it.
#include <pybind11/pybind11.h>

#include "common.h"
#include "ltsim/core/error.h"
#include "ltsim/core/version.h"

namespace py = pybind11;

PYBIND11_MODULE(_ltsim, m) {
  m.doc() = "ltsim's C++ libraries (docs/python.md); use the package `ltsim`, not this module.";
  m.attr("__version__") = ltsim::kVersion;
  // OptionError derives from InputError: both arrive as InputError. An option error also
  // carries the option's name, rule and value, so the package can name its keyword argument.
  static py::exception<ltsim::InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ltsim::OptionError& e) {
      py::object error = py::reinterpret_borrow<py::object>(input_error.ptr())(e.what());
      error.attr("option") = e.option();
      error.attr("rule") = e.rule();
      error.attr("value") = e.value();
      PyErr_SetObject(input_error.ptr(), error.ptr());
    } catch (const ltsim::InputError& e) {
      PyErr_SetString(input_error.ptr(), e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_MemoryError,
                      "out of memory (the input asks for more than this machine holds)");
    }
  });
  ltsim::python::BindModels(m);
  ltsim::python::BindAnalyses(m);
}
