// Tensors over memory as it lies, in PyTorch's names: ember.frombuffer (a tensor over
// any Python buffer's bytes), Tensor.as_strided (any shape and strides over the same
// storage) and Tensor.view(dtype) (the same bytes read as another dtype). Each is a view
// of memory, not a copy, so none records a gradient: on a tensor that requires grad
// while gradients are recorded they refuse, as DESIGN's rule for views asks.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "python/args.h"
#include "python/status.h"
#include "tensor/creation.h"

namespace py = pybind11;
namespace ag = ::ember::autograd;

namespace ember::python {
namespace {

void CheckNoGradient(const Tensor& t, const char* method) {
  EMBER_CHECK(!(ag::RequiresGrad(t) && ag::GradModeEnabled()), method,
              ": the result is a view of raw memory and records no gradient; call it on "
              ".detach() or under ember.no_grad()");
}

// torch.frombuffer: count elements of dtype from byte `offset` of the buffer (count -1:
// every whole element after offset), sharing its memory. A read-only buffer (bytes) is
// copied: ember's tensors are writable.
Tensor FrombufferTensor(const py::buffer& buffer, DType dtype, int64_t count, int64_t offset,
                        bool requires_grad) {
  const py::buffer_info info = buffer.request();
  const int64_t nbytes = info.size * info.itemsize, item = ItemSize(dtype);
  EMBER_CHECK(offset >= 0 && offset <= nbytes, "frombuffer: offset ", offset,
              " is outside the buffer's ", nbytes, " bytes");
  EMBER_CHECK(count == -1 || count >= 0, "frombuffer: count must be -1 or non-negative, got ",
              count);
  if (count == -1) {
    EMBER_CHECK((nbytes - offset) % item == 0, "frombuffer: the buffer's ", nbytes - offset,
                " bytes after offset ", offset, " are not a whole number of ", DTypeName(dtype),
                " elements (", item, " bytes each)");
    count = (nbytes - offset) / item;
  }
  EMBER_CHECK(offset + count * item <= nbytes, "frombuffer: ", count, " elements of ",
              DTypeName(dtype), " from offset ", offset, " need ", offset + count * item,
              " bytes; the buffer has ", nbytes);
  void* start = static_cast<char*>(info.ptr) + offset;
  Tensor t;
  if (info.readonly) {
    t = Empty({count}, dtype);
    if (count > 0) std::memcpy(t.raw_data(), start, count * item);
  } else {
    auto owner = std::shared_ptr<void>(buffer.inc_ref().ptr(), [](void* object) {
      py::gil_scoped_acquire gil;
      Py_DECREF(static_cast<PyObject*>(object));
    });
    t = Tensor(Storage::Borrow(start, count * item, Device::Cpu(), std::move(owner)), 0, {count},
               {1}, dtype);
  }
  if (requires_grad) ag::SetRequiresGrad(t);
  return t;
}

// Tensor.as_strided(size, stride, storage_offset): a view of t's storage; the offset
// counts elements from the storage's start (None: t's own).
Tensor AsStrided(const Tensor& t, const std::vector<int64_t>& size,
                 const std::vector<int64_t>& stride, std::optional<int64_t> storage_offset) {
  CheckNoGradient(t, "as_strided");
  return Tensor(t.storage(), storage_offset.value_or(t.offset_elements()), size, stride, t.dtype());
}

// Tensor.view(dtype): t's bytes as `dtype`. Of another size, as PyTorch: the last
// dimension must be contiguous and hold a whole number of new elements, and the other
// strides and the offset must be whole numbers of them; the last size scales by
// old / new itemsize.
Tensor ViewAsDType(const Tensor& t, DType dtype) {
  CheckNoGradient(t, "view(dtype)");
  const int64_t old_size = t.itemsize(), new_size = ItemSize(dtype);
  if (old_size == new_size) {
    return Tensor(t.storage(), t.offset_elements(), t.shape(), t.strides(), dtype);
  }
  const std::string what = absl::StrCat("view(", DTypeName(dtype), "): a ", DTypeName(t.dtype()),
                                        " tensor of shape ", ShapeToString(t.shape()));
  EMBER_CHECK(t.dim() > 0, what, ": a 0-d tensor can only be viewed as a dtype of its size");
  EMBER_CHECK(t.stride(-1) == 1 || t.size(-1) == 1, what,
              ": the last dimension must be contiguous (stride 1)");
  EMBER_CHECK(t.size(-1) * old_size % new_size == 0, what, ": its last dimension's ",
              t.size(-1) * old_size, " bytes are not a whole number of ", new_size,
              "-byte elements");
  EMBER_CHECK(t.offset_elements() * old_size % new_size == 0, what,
              ": its storage offset is not a whole number of ", new_size, "-byte elements");
  Shape shape(t.shape().begin(), t.shape().end());
  Strides strides(t.strides().begin(), t.strides().end());
  for (int64_t d = 0; d + 1 < t.dim(); ++d) {
    EMBER_CHECK(strides[d] * old_size % new_size == 0, what, ": stride ", strides[d],
                " of dimension ", d, " is not a whole number of ", new_size, "-byte elements");
    strides[d] = strides[d] * old_size / new_size;
  }
  shape.back() = shape.back() * old_size / new_size;
  strides.back() = 1;
  return Tensor(t.storage(), t.offset_elements() * old_size / new_size, shape, strides, dtype);
}

}  // namespace

void BindMemory(py::module_& m) {
  m.def("frombuffer", &FrombufferTensor, py::arg("buffer"), py::kw_only(), py::arg("dtype"),
        py::arg("count") = -1, py::arg("offset") = 0, py::arg("requires_grad") = false,
        "torch.frombuffer: a 1-d tensor over the buffer's bytes (shared; a read-only buffer "
        "is copied).");
  auto tensor = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  tensor.def("as_strided", &AsStrided, py::arg("size"), py::arg("stride"),
             py::arg("storage_offset") = py::none());
  tensor.def("storage_offset", &Tensor::offset_elements);
  tensor.def(
      "stride",
      [](const Tensor& t, const py::object& dim) -> py::object {
        if (dim.is_none()) {
          return py::tuple(py::cast(std::vector<int64_t>(t.strides().begin(), t.strides().end())));
        }
        return py::int_(t.stride(dim.cast<int64_t>()));
      },
      py::arg("dim") = py::none());
  // view(dtype) beside view(*shape): pybind11 tries this overload first.
  tensor.def("view", &ViewAsDType, py::arg("dtype"), py::prepend());
}

}  // namespace ember::python
