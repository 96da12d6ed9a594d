#ifndef EMBER_PYTHON_STATUS_H_
#define EMBER_PYTHON_STATUS_H_

// ember's errors as Python exceptions. A Status: InvalidArgument and OutOfRange as
// ValueError, NotFound as FileNotFoundError, anything else as RuntimeError. An
// ember::Error (tensor math given wrong shapes, dtypes, devices or indices) as
// ValueError, by the translator module.cc registers. Always with ember's message.

#include <pybind11/pybind11.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ember::python {

[[noreturn]] inline void Raise(const absl::Status& status) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      throw pybind11::value_error(message);
    case absl::StatusCode::kNotFound:
      PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
      throw pybind11::error_already_set();
    default:
      throw std::runtime_error(message);
  }
}

template <typename T>
T ValueOrRaise(absl::StatusOr<T> result) {
  if (!result.ok()) Raise(result.status());
  return *std::move(result);
}

void BindCuda(pybind11::module_& m);
void BindDistributed(pybind11::module_& m);
void BindTokenizer(pybind11::module_& m);
void BindTensor(pybind11::module_& m);
void BindNn(pybind11::module_& m);
void BindMemory(pybind11::module_& m);
void BindReductions(pybind11::module_& m);
void BindCreation(pybind11::module_& m);
void BindIndexing(pybind11::module_& m);
void BindRandom(pybind11::module_& m);

}  // namespace ember::python

#endif  // EMBER_PYTHON_STATUS_H_
