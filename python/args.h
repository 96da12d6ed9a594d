#ifndef EMBER_PYTHON_ARGS_H_
#define EMBER_PYTHON_ARGS_H_

// What the bindings share to read Python's arguments as PyTorch takes them: dtypes by
// name and buffer format, devices as strings or objects, shapes as f(2, 3) or f((2, 3)),
// numbers as Scalars, NumPy buffers as tensors, and the dtype/device/requires_grad
// keywords every creation function ends with.

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "tensor/creation.h"
#include "tensor/tensor.h"

namespace ember::python {

// PyTorch's name of a dtype, and its buffer-protocol format (none: NumPy has no
// bfloat16).
struct DTypeInfo {
  DType dtype;
  const char* name;
  const char* format;
};
const DTypeInfo& Info(DType dtype);
// Every dtype ember has, for the module's attributes (ember.float32, ...).
absl::Span<const DTypeInfo> AllDTypes();

// A buffer's element format ("f", "<f", "l", ...) as a dtype; ValueError if none fits.
DType DTypeOfFormat(const std::string& format, pybind11::ssize_t itemsize);

// None, a Device, or a string such as "cpu" or "cuda:0".
std::optional<Device> DeviceArg(const pybind11::object& device);

// A shape given as f(2, 3) or f((2, 3)) or f([2, 3]).
std::vector<int64_t> ShapeArg(const pybind11::args& args);

Scalar ScalarOf(const pybind11::handle& value);
bool IsNumber(const pybind11::handle& value);

// Python numbers and (nested) sequences of them (one-element tensors count as numbers),
// as FromList takes them; a TypeError for anything else.
NestedList Nested(const pybind11::handle& data);

// A tensor over the buffer of `array`, sharing its memory (torch.from_numpy); the
// array stays alive while any tensor uses it.
Tensor FromBuffer(const pybind11::buffer& array);

// A creation function's last step: to `dtype` and `device` (None: as made), then
// requires_grad.
Tensor Finish(Tensor t, const pybind11::object& dtype, const pybind11::object& device,
              bool requires_grad);

}  // namespace ember::python

#endif  // EMBER_PYTHON_ARGS_H_
