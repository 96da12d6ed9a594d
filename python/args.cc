#include "python/args.h"

#include <pybind11/stl.h>

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "python/status.h"

namespace py = pybind11;
namespace ag = ::ember::autograd;

namespace ember::python {
namespace {

constexpr DTypeInfo kDTypes[] = {
    {DType::kF32, "float32", "f"},       {DType::kF64, "float64", "d"},
    {DType::kBF16, "bfloat16", nullptr}, {DType::kF16, "float16", "e"},
    {DType::kI32, "int32", "i"},         {DType::kI64, "int64", "q"},
    {DType::kU8, "uint8", "B"},          {DType::kU16, "uint16", "H"},
    {DType::kBool, "bool", "?"},
};

}  // namespace

absl::Span<const DTypeInfo> AllDTypes() { return kDTypes; }

const DTypeInfo& Info(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return info;
  }
  throw std::logic_error("a dtype with no Python name");
}

DType DTypeOfFormat(const std::string& format, py::ssize_t itemsize) {
  const size_t order = format.find_first_not_of("@=<>!");  // a byte-order prefix, if any
  const char code = order != std::string::npos && order + 1 == format.size() ? format[order] : 'x';
  switch (code) {
    case 'f':
      return DType::kF32;
    case 'd':
      return DType::kF64;
    case 'e':
      return DType::kF16;
    case 'B':
      return DType::kU8;
    case 'H':
      return DType::kU16;
    case '?':
      return DType::kBool;
    case 'i':
    case 'l':
    case 'q':
      if (itemsize == 4) return DType::kI32;
      if (itemsize == 8) return DType::kI64;
      break;
  }
  throw py::value_error(absl::StrCat("an array of format '", format, "' (", itemsize,
                                     " bytes an element) has no ember dtype"));
}

std::optional<Device> DeviceArg(const py::object& device) {
  if (device.is_none()) return std::nullopt;
  if (py::isinstance<Device>(device)) return device.cast<Device>();
  return ValueOrRaise(ParseDevice(device.cast<std::string>()));
}

std::vector<int64_t> ShapeArg(const py::args& args) {
  if (args.size() == 1 && !py::isinstance<py::int_>(args[0]))
    return args[0].cast<std::vector<int64_t>>();
  return args.cast<std::vector<int64_t>>();
}

Scalar ScalarOf(const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return Scalar(value.cast<bool>());
  if (py::isinstance<py::int_>(value)) return Scalar(value.cast<int64_t>());
  if (py::isinstance<py::float_>(value)) return Scalar(value.cast<double>());
  throw py::type_error(
      absl::StrCat("expected a Tensor or a number, got ",
                   py::str(py::type::of(value).attr("__name__")).cast<std::string>()));
}

bool IsNumber(const py::handle& value) {
  return py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value) ||
         py::isinstance<py::float_>(value);
}

NestedList Nested(const py::handle& data) {
  if (IsNumber(data)) return NestedList(ScalarOf(data));
  if (py::isinstance<Tensor>(data)) {
    const Tensor& t = data.cast<const Tensor&>();
    EMBER_CHECK(t.numel() == 1, "tensor(): a list may hold one-element tensors, not one of shape ",
                ShapeToString(t.shape()));
    return NestedList(IsFloatingPoint(t.dtype()) ? Scalar(t.item<double>())
                                                 : Scalar(t.item<int64_t>()));
  }
  if (!py::isinstance<py::sequence>(data) || py::isinstance<py::str>(data)) {
    throw py::type_error(
        absl::StrCat("tensor(): expected a number or a sequence, got ",
                     py::str(py::type::of(data).attr("__name__")).cast<std::string>()));
  }
  std::vector<NestedList> items;
  for (const py::handle item : data.cast<py::sequence>()) items.push_back(Nested(item));
  return NestedList(std::move(items));
}

Tensor FromBuffer(const py::buffer& array) {
  const py::buffer_info info = array.request(/*writable=*/false);
  if (info.readonly) {
    throw py::value_error(
        "from_numpy: the array is read-only (ember may write to it); pass a copy");
  }
  const DType dtype = DTypeOfFormat(info.format, info.itemsize);
  std::vector<int64_t> shape(info.shape.begin(), info.shape.end()), strides;
  int64_t extent = info.itemsize;  // bytes from the first element to the end of the last
  for (size_t d = 0; d < shape.size(); ++d) {
    if (info.strides[d] < 0 || info.strides[d] % info.itemsize != 0) {
      throw py::value_error(
          absl::StrCat("from_numpy: stride ", info.strides[d], " of dimension ", d,
                       " is negative or not a multiple of the element size; pass a copy"));
    }
    strides.push_back(info.strides[d] / info.itemsize);
    if (shape[d] == 0) extent = 0;
    if (extent > 0) extent += (shape[d] - 1) * info.strides[d];
  }
  // The array stays alive while any tensor uses its memory; dropping it needs the GIL.
  auto owner = std::shared_ptr<void>(array.inc_ref().ptr(), [](void* object) {
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(object));
  });
  return Tensor(Storage::Borrow(info.ptr, extent, Device::Cpu(), std::move(owner)), 0, shape,
                strides, dtype);
}

Tensor Finish(Tensor t, const py::object& dtype, const py::object& device, bool requires_grad) {
  if (!dtype.is_none() && t.dtype() != dtype.cast<DType>()) t = t.To(dtype.cast<DType>());
  if (const std::optional<Device> d = DeviceArg(device); d && t.device() != *d) t = t.To(*d);
  if (requires_grad) ag::SetRequiresGrad(t);
  return t;
}

}  // namespace ember::python
