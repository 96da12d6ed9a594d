#include "tensor/ops/binary.h"

#include "kernels/binary.h"
#include "tensor/ops/internal/backend.h"

namespace ember::ops {
namespace {

using Kernel =
    internal::Kernel<void(DType, IntSpan, kernels::StridedIn, kernels::StridedIn, void*)>;

// A 0-d tensor holding `value` as `dtype`, on `device`.
Tensor ScalarTensor(const Scalar& value, DType dtype, Device device) {
  Tensor t = Empty({}, dtype, device);
  t.Fill(value);
  return t;
}

// The dtype of `t` op `s`: t's, but f32 for a floating Scalar with an integer tensor.
DType WithScalar(const Tensor& t, const Scalar& s) {
  return s.is_floating_point() && !IsFloatingPoint(t.dtype()) ? DType::kF32 : t.dtype();
}

// The dtype the kernel is given: f16 computes in f32, and bf16 too in a comparison (the
// arithmetic kernels read and write bf16 themselves).
DType KernelDType(DType dtype, bool comparison) {
  if (dtype == DType::kBF16 && !comparison) return dtype;
  return dtype == DType::kBF16 || dtype == DType::kF16 ? DType::kF32 : dtype;
}

// Broadcasts a and b (same dtype) and runs the kernel into a new tensor of out_dtype.
Tensor Run(const char* op, const Tensor& a, const Tensor& b, const Kernel& kernel,
           bool comparison) {
  const Device device = internal::SameDevice(op, {a, b});
  EMBER_CHECK(a.dtype() == b.dtype(), op, ": dtypes differ (", DTypeName(a.dtype()), " of shape ",
              ShapeToString(a.shape()), " and ", DTypeName(b.dtype()), " of shape ",
              ShapeToString(b.shape()), "); convert one with To()");
  const Shape shape = BroadcastShapes(a.shape(), b.shape(), op);
  const DType compute = KernelDType(a.dtype(), comparison);
  const Tensor x = a.To(compute).Expand(shape), y = b.To(compute).Expand(shape);
  Tensor out = Empty(shape, comparison ? DType::kBool : compute, device);
  kernel.On(device)(compute, shape, {x.raw_data(), x.strides()}, {y.raw_data(), y.strides()},
                    out.raw_data());
  return comparison ? out : out.To(a.dtype());
}

Tensor Arithmetic(const char* op, const Tensor& a, const Tensor& b, const Kernel& kernel) {
  return Run(op, a, b, kernel, /*comparison=*/false);
}

Tensor Arithmetic(const char* op, const Tensor& a, const Scalar& b, const Kernel& kernel) {
  const DType dtype = WithScalar(a, b);
  return Run(op, a.To(dtype), ScalarTensor(b, dtype, a.device()), kernel, false);
}

Tensor Arithmetic(const char* op, const Scalar& a, const Tensor& b, const Kernel& kernel) {
  const DType dtype = WithScalar(b, a);
  return Run(op, ScalarTensor(a, dtype, b.device()), b.To(dtype), kernel, false);
}

Tensor Compare(const char* op, const Tensor& a, const Tensor& b, const Kernel& kernel) {
  return Run(op, a, b, kernel, /*comparison=*/true);
}

Tensor Compare(const char* op, const Tensor& a, const Scalar& b, const Kernel& kernel) {
  const DType dtype = WithScalar(a, b);
  return Run(op, a.To(dtype), ScalarTensor(b, dtype, a.device()), kernel, true);
}

}  // namespace

Tensor Add(const Tensor& a, const Tensor& b) { return Arithmetic("add", a, b, EMBER_KERNEL(Add)); }
Tensor Sub(const Tensor& a, const Tensor& b) { return Arithmetic("sub", a, b, EMBER_KERNEL(Sub)); }
Tensor Mul(const Tensor& a, const Tensor& b) { return Arithmetic("mul", a, b, EMBER_KERNEL(Mul)); }
Tensor Div(const Tensor& a, const Tensor& b) { return Arithmetic("div", a, b, EMBER_KERNEL(Div)); }
Tensor Pow(const Tensor& a, const Tensor& b) { return Arithmetic("pow", a, b, EMBER_KERNEL(Pow)); }
Tensor Maximum(const Tensor& a, const Tensor& b) {
  return Arithmetic("maximum", a, b, EMBER_KERNEL(Maximum));
}
Tensor Minimum(const Tensor& a, const Tensor& b) {
  return Arithmetic("minimum", a, b, EMBER_KERNEL(Minimum));
}

Tensor Add(const Tensor& a, const Scalar& b) { return Arithmetic("add", a, b, EMBER_KERNEL(Add)); }
Tensor Sub(const Tensor& a, const Scalar& b) { return Arithmetic("sub", a, b, EMBER_KERNEL(Sub)); }
Tensor Sub(const Scalar& a, const Tensor& b) { return Arithmetic("sub", a, b, EMBER_KERNEL(Sub)); }
Tensor Mul(const Tensor& a, const Scalar& b) { return Arithmetic("mul", a, b, EMBER_KERNEL(Mul)); }
Tensor Div(const Tensor& a, const Scalar& b) { return Arithmetic("div", a, b, EMBER_KERNEL(Div)); }
Tensor Div(const Scalar& a, const Tensor& b) { return Arithmetic("div", a, b, EMBER_KERNEL(Div)); }
Tensor Maximum(const Tensor& a, const Scalar& b) {
  return Arithmetic("maximum", a, b, EMBER_KERNEL(Maximum));
}
Tensor Minimum(const Tensor& a, const Scalar& b) {
  return Arithmetic("minimum", a, b, EMBER_KERNEL(Minimum));
}

void MulInPlace(const Tensor& x, const Scalar& b) {
  if (x.is_contiguous() && (x.dtype() == DType::kF32 || x.dtype() == DType::kF64)) {
    // An elementwise kernel reads element i before it writes element i: out may be a.
    const Tensor scalar = ScalarTensor(b, x.dtype(), x.device());
    EMBER_KERNEL(Mul).On(x.device())(x.dtype(), x.shape(), {x.raw_data(), x.strides()},
                                     {scalar.raw_data(), Strides(x.dim(), 0)}, x.raw_data());
    return;
  }
  x.CopyFrom(Mul(x, b));
}

Tensor Eq(const Tensor& a, const Tensor& b) { return Compare("eq", a, b, EMBER_KERNEL(Eq)); }
Tensor Ne(const Tensor& a, const Tensor& b) { return Compare("ne", a, b, EMBER_KERNEL(Ne)); }
Tensor Lt(const Tensor& a, const Tensor& b) { return Compare("lt", a, b, EMBER_KERNEL(Lt)); }
Tensor Le(const Tensor& a, const Tensor& b) { return Compare("le", a, b, EMBER_KERNEL(Le)); }
Tensor Gt(const Tensor& a, const Tensor& b) { return Compare("gt", a, b, EMBER_KERNEL(Gt)); }
Tensor Ge(const Tensor& a, const Tensor& b) { return Compare("ge", a, b, EMBER_KERNEL(Ge)); }
Tensor Eq(const Tensor& a, const Scalar& b) { return Compare("eq", a, b, EMBER_KERNEL(Eq)); }
Tensor Ne(const Tensor& a, const Scalar& b) { return Compare("ne", a, b, EMBER_KERNEL(Ne)); }
Tensor Lt(const Tensor& a, const Scalar& b) { return Compare("lt", a, b, EMBER_KERNEL(Lt)); }
Tensor Le(const Tensor& a, const Scalar& b) { return Compare("le", a, b, EMBER_KERNEL(Le)); }
Tensor Gt(const Tensor& a, const Scalar& b) { return Compare("gt", a, b, EMBER_KERNEL(Gt)); }
Tensor Ge(const Tensor& a, const Scalar& b) { return Compare("ge", a, b, EMBER_KERNEL(Ge)); }

Tensor Where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  const Device device = internal::SameDevice("where", {condition, a, b});
  EMBER_CHECK(condition.dtype() == DType::kBool, "where: condition must be bool, got ",
              DTypeName(condition.dtype()));
  EMBER_CHECK(a.dtype() == b.dtype(), "where: dtypes differ (", DTypeName(a.dtype()), " and ",
              DTypeName(b.dtype()), ")");
  const Shape shape = BroadcastShapes({condition.shape(), a.shape(), b.shape()}, "where");
  const Tensor c = condition.Expand(shape), x = a.Expand(shape), y = b.Expand(shape);
  Tensor out = Empty(shape, a.dtype(), device);
  EMBER_KERNEL(Where).On(device)(a.dtype(), shape, {c.raw_data(), c.strides()},
                                 {x.raw_data(), x.strides()}, {y.raw_data(), y.strides()},
                                 out.raw_data());
  return out;
}

Tensor MaskedFill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  EMBER_CHECK(BroadcastShapes(mask.shape(), x.shape(), "masked_fill") == x.shape(),
              "masked_fill: mask of shape ", ShapeToString(mask.shape()),
              " cannot be broadcast to the input's shape ", ShapeToString(x.shape()));
  return Where(mask, ScalarTensor(value, x.dtype(), x.device()), x);
}

}  // namespace ember::ops
