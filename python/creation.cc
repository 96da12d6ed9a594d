// Creation in PyTorch's names: ember.tensor (always a copy, of numbers, nested
// sequences, buffers such as NumPy arrays, or a tensor), from_numpy (sharing the array's
// memory), zeros, ones, full and arange, each ending with dtype=, device= and
// requires_grad= (random.cc has the random ones).

#include "tensor/creation.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "python/args.h"
#include "python/status.h"

namespace py = pybind11;
namespace ag = ::ember::autograd;

namespace ember::python {
namespace {

// torch.tensor: always a copy, of numbers, sequences, arrays or a tensor.
Tensor NewTensor(const py::object& data, const py::object& dtype, const py::object& device,
                 bool requires_grad) {
  Tensor t;
  if (py::isinstance<Tensor>(data)) {
    t = ag::Detach(data.cast<const Tensor&>()).Clone();
  } else if (py::isinstance<py::buffer>(data) && !IsNumber(data)) {
    t = FromBuffer(data.cast<py::buffer>()).Clone();
  } else {
    std::optional<DType> as;
    if (!dtype.is_none()) as = dtype.cast<DType>();
    t = FromList(Nested(data), as);
  }
  return Finish(t, dtype, device, requires_grad);
}

}  // namespace

void BindCreation(py::module_& m) {
  m.def("tensor", &NewTensor, py::arg("data"), py::kw_only(), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "from_numpy", [](const py::buffer& array) { return FromBuffer(array); }, py::arg("array"));
  auto sized = [&m](const char* name, auto make) {
    m.def(
        name,
        [make](const py::args& shape, const py::object& dtype, const py::object& device,
               bool requires_grad) {
          const DType d = dtype.is_none() ? DType::kF32 : dtype.cast<DType>();
          return Finish(make(ShapeArg(shape), d), py::none(), device, requires_grad);
        },
        py::kw_only(), py::arg("dtype") = py::none(), py::arg("device") = py::none(),
        py::arg("requires_grad") = false);
  };
  sized("zeros", [](const std::vector<int64_t>& shape, DType d) { return Zeros(shape, d); });
  sized("ones", [](const std::vector<int64_t>& shape, DType d) { return Ones(shape, d); });
  m.def(
      "full",
      [](const std::vector<int64_t>& shape, const py::object& value, const py::object& dtype,
         const py::object& device, bool requires_grad) {
        const Scalar v = ScalarOf(value);
        const DType d = !dtype.is_none()                   ? dtype.cast<DType>()
                        : v.kind() == Scalar::Kind::kFloat ? DType::kF32
                        : v.kind() == Scalar::Kind::kInt   ? DType::kI64
                                                           : DType::kBool;
        return Finish(Full(shape, v, d), py::none(), device, requires_grad);
      },
      py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "arange",
      [](const py::object& a, const py::object& b, const py::object& step, const py::object& dtype,
         const py::object& device, bool requires_grad) {
        Tensor t =
            b.is_none() ? Arange(ScalarOf(a)) : Arange(ScalarOf(a), ScalarOf(b), ScalarOf(step));
        return Finish(t, dtype, device, requires_grad);
      },
      py::arg("start"), py::arg("end") = py::none(), py::arg("step") = 1, py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none(),
      py::arg("requires_grad") = false);
}

}  // namespace ember::python
