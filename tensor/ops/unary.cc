#include "tensor/ops/unary.h"

#include "kernels/cpu/unary.h"
#include "tensor/ops/internal/float_dtype.h"

namespace ember::ops {
namespace {

namespace cpu = kernels::cpu;

// The dtype a kernel runs in: f64 stays f64, the other floats compute in f32.
template <typename Kernel>
Tensor Unary(const char* op, const Tensor& x, const Kernel& kernel) {
  const DType compute = internal::FloatComputeDType(op, x);
  const Tensor in = x.To(compute).Contiguous();
  Tensor out = Empty(x.shape(), compute);
  kernel(compute, in.numel(), in.raw_data(), out.raw_data());
  return out.To(x.dtype());
}

Tensor Backward(const char* op, const Tensor& a, const Tensor& grad_out,
                void (*kernel)(DType, int64_t, const void*, const void*, void*)) {
  const DType compute = internal::FloatComputeDType(op, a);
  EMBER_CHECK(a.shape() == grad_out.shape(), op, ": grad_out of shape ",
              ShapeToString(grad_out.shape()), " does not match the input's shape ",
              ShapeToString(a.shape()));
  EMBER_CHECK(a.dtype() == grad_out.dtype(), op, ": grad_out has dtype ",
              DTypeName(grad_out.dtype()), " but the input has ", DTypeName(a.dtype()));
  const Tensor in = a.To(compute).Contiguous();
  const Tensor g = grad_out.To(compute).Contiguous();
  Tensor out = Empty(a.shape(), compute);
  kernel(compute, in.numel(), in.raw_data(), g.raw_data(), out.raw_data());
  return out.To(a.dtype());
}

}  // namespace

Tensor Neg(const Tensor& x) { return Unary("neg", x, cpu::Neg); }
Tensor Abs(const Tensor& x) { return Unary("abs", x, cpu::Abs); }
Tensor Exp(const Tensor& x) { return Unary("exp", x, cpu::Exp); }
Tensor Log(const Tensor& x) { return Unary("log", x, cpu::Log); }
Tensor Sqrt(const Tensor& x) { return Unary("sqrt", x, cpu::Sqrt); }
Tensor Rsqrt(const Tensor& x) { return Unary("rsqrt", x, cpu::Rsqrt); }
Tensor Reciprocal(const Tensor& x) { return Unary("reciprocal", x, cpu::Reciprocal); }
Tensor Square(const Tensor& x) { return Unary("square", x, cpu::Square); }
Tensor Tanh(const Tensor& x) { return Unary("tanh", x, cpu::Tanh); }
Tensor Sigmoid(const Tensor& x) { return Unary("sigmoid", x, cpu::Sigmoid); }
Tensor Relu(const Tensor& x) { return Unary("relu", x, cpu::Relu); }
Tensor GeluTanh(const Tensor& x) { return Unary("gelu_tanh", x, cpu::GeluTanh); }
Tensor GeluErf(const Tensor& x) { return Unary("gelu_erf", x, cpu::GeluErf); }

Tensor Pow(const Tensor& x, double exponent) {
  return Unary("pow", x, [exponent](DType dtype, int64_t n, const void* in, void* out) {
    cpu::PowScalar(dtype, n, in, exponent, out);
  });
}

Tensor ReluBackward(const Tensor& x, const Tensor& grad_out) {
  return Backward("relu_backward", x, grad_out, cpu::ReluBackward);
}
Tensor GeluTanhBackward(const Tensor& x, const Tensor& grad_out) {
  return Backward("gelu_tanh_backward", x, grad_out, cpu::GeluTanhBackward);
}
Tensor GeluErfBackward(const Tensor& x, const Tensor& grad_out) {
  return Backward("gelu_erf_backward", x, grad_out, cpu::GeluErfBackward);
}
Tensor TanhBackward(const Tensor& y, const Tensor& grad_out) {
  return Backward("tanh_backward", y, grad_out, cpu::TanhBackward);
}
Tensor SigmoidBackward(const Tensor& y, const Tensor& grad_out) {
  return Backward("sigmoid_backward", y, grad_out, cpu::SigmoidBackward);
}

}  // namespace ember::ops
