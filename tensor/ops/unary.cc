#include "tensor/ops/unary.h"

#include "kernels/unary.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"

namespace ember::ops {
namespace {

using UnaryKernel = internal::Kernel<void(DType, int64_t, const void*, void*)>;
using BackwardKernel = internal::Kernel<void(DType, int64_t, const void*, const void*, void*)>;

// The kernel is given f64, f32 or bf16 (which it computes in f32); f16 is converted to f32.
Tensor Unary(const char* op, const Tensor& x, const UnaryKernel& kernel) {
  const DType compute = internal::FloatOrBf16DType(op, x);
  const Tensor in = x.To(compute).Contiguous();
  Tensor out = Empty(x.shape(), compute, x.device());
  kernel.On(x.device())(compute, in.numel(), in.raw_data(), out.raw_data());
  return out.To(x.dtype());
}

Tensor Backward(const char* op, const Tensor& a, const Tensor& grad_out,
                const BackwardKernel& kernel) {
  const Device device = internal::SameDevice(op, {a, grad_out});
  const DType compute = internal::FloatOrBf16DType(op, a);
  EMBER_CHECK(a.shape() == grad_out.shape(), op, ": grad_out of shape ",
              ShapeToString(grad_out.shape()), " does not match the input's shape ",
              ShapeToString(a.shape()));
  EMBER_CHECK(a.dtype() == grad_out.dtype(), op, ": grad_out has dtype ",
              DTypeName(grad_out.dtype()), " but the input has ", DTypeName(a.dtype()));
  const Tensor in = a.To(compute).Contiguous();
  const Tensor g = grad_out.To(compute).Contiguous();
  Tensor out = Empty(a.shape(), compute, device);
  kernel.On(device)(compute, in.numel(), in.raw_data(), g.raw_data(), out.raw_data());
  return out.To(a.dtype());
}

}  // namespace

Tensor Neg(const Tensor& x) { return Unary("neg", x, EMBER_KERNEL(Neg)); }
Tensor Abs(const Tensor& x) { return Unary("abs", x, EMBER_KERNEL(Abs)); }
Tensor Exp(const Tensor& x) { return Unary("exp", x, EMBER_KERNEL(Exp)); }
Tensor Log(const Tensor& x) { return Unary("log", x, EMBER_KERNEL(Log)); }
Tensor Sqrt(const Tensor& x) { return Unary("sqrt", x, EMBER_KERNEL(Sqrt)); }
Tensor Rsqrt(const Tensor& x) { return Unary("rsqrt", x, EMBER_KERNEL(Rsqrt)); }
Tensor Reciprocal(const Tensor& x) { return Unary("reciprocal", x, EMBER_KERNEL(Reciprocal)); }
Tensor Square(const Tensor& x) { return Unary("square", x, EMBER_KERNEL(Square)); }
Tensor Tanh(const Tensor& x) { return Unary("tanh", x, EMBER_KERNEL(Tanh)); }
Tensor Sigmoid(const Tensor& x) { return Unary("sigmoid", x, EMBER_KERNEL(Sigmoid)); }
Tensor Relu(const Tensor& x) { return Unary("relu", x, EMBER_KERNEL(Relu)); }
Tensor GeluTanh(const Tensor& x) { return Unary("gelu_tanh", x, EMBER_KERNEL(GeluTanh)); }
Tensor GeluErf(const Tensor& x) { return Unary("gelu_erf", x, EMBER_KERNEL(GeluErf)); }
Tensor Sin(const Tensor& x) { return Unary("sin", x, EMBER_KERNEL(Sin)); }
Tensor Cos(const Tensor& x) { return Unary("cos", x, EMBER_KERNEL(Cos)); }

Tensor Pow(const Tensor& x, double exponent) {
  const DType compute = internal::FloatOrBf16DType("pow", x);
  const Tensor in = x.To(compute).Contiguous();
  Tensor out = Empty(x.shape(), compute, x.device());
  EMBER_KERNEL(PowScalar).On(x.device())(compute, in.numel(), in.raw_data(), exponent,
                                         out.raw_data());
  return out.To(x.dtype());
}

Tensor ReluBackward(const Tensor& x, const Tensor& grad_out) {
  return Backward("relu_backward", x, grad_out, EMBER_KERNEL(ReluBackward));
}
Tensor GeluTanhBackward(const Tensor& x, const Tensor& grad_out) {
  return Backward("gelu_tanh_backward", x, grad_out, EMBER_KERNEL(GeluTanhBackward));
}
Tensor GeluErfBackward(const Tensor& x, const Tensor& grad_out) {
  return Backward("gelu_erf_backward", x, grad_out, EMBER_KERNEL(GeluErfBackward));
}
Tensor TanhBackward(const Tensor& y, const Tensor& grad_out) {
  return Backward("tanh_backward", y, grad_out, EMBER_KERNEL(TanhBackward));
}
Tensor SigmoidBackward(const Tensor& y, const Tensor& grad_out) {
  return Backward("sigmoid_backward", y, grad_out, EMBER_KERNEL(SigmoidBackward));
}

}  // namespace ember::ops
