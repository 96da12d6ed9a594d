// kernels/unary.h on the GPU: the same functions of one element, mapped over the
// array in 16-byte vectors (internal::MapRows), in the precision of the dtype (f32 or
// f64; bf16 in f32) with CUDA's correctly rounded arithmetic and its libdevice math
// (expf, tanhf: <= 2 ulp).

#include <cuda_runtime.h>

#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/unary.h"

namespace ember::kernels::cuda {
namespace {

using internal::DispatchFloatOrBf16;

// out = op(in), as one row of n (internal::MapRows: 16-byte vectors per thread).
template <typename Op>
void Unary(const char* name, DType dtype, int64_t n, const void* in, void* out, Op op) {
  if (n == 0) return;
  DispatchFloatOrBf16(name, dtype, [&](auto type) {
    using T = decltype(type);
    internal::MapRows<1>(1, n, internal::RowInputs<T, 1>{{{static_cast<const T*>(in), 0, 1}}},
                         static_cast<T*>(out), op);
  });
  EMBER_CUDA_CHECK_LAUNCH(name);
}

// grad_in = grad_out * derivative(saved), saved being the forward's input or output.
template <typename Op>
struct TimesDerivative {
  Op derivative;
  template <typename T>
  __device__ T operator()(T saved, T grad_out) const {
    return grad_out * derivative(saved);
  }
};

template <typename Op>
void Backward(const char* name, DType dtype, int64_t n, const void* saved, const void* grad_out,
              void* grad_in, Op derivative) {
  if (n == 0) return;
  DispatchFloatOrBf16(name, dtype, [&](auto type) {
    using T = decltype(type);
    internal::MapRows<2>(1, n,
                         internal::RowInputs<T, 2>{{{static_cast<const T*>(saved), 0, 1},
                                                    {static_cast<const T*>(grad_out), 0, 1}}},
                         static_cast<T*>(grad_in), TimesDerivative<Op>{derivative});
  });
  EMBER_CUDA_CHECK_LAUNCH(name);
}

// The functions, generic over float and double (the overloads of CUDA's math library
// pick expf or exp).
#define EMBER_UNARY_OP(Name, expression) \
  struct Name##Op {                      \
    template <typename T>                \
    __device__ T operator()(T x) const { \
      return expression;                 \
    }                                    \
  };

EMBER_UNARY_OP(Neg, -x)
EMBER_UNARY_OP(Abs, fabs(x))
EMBER_UNARY_OP(Exp, exp(x))
EMBER_UNARY_OP(Log, log(x))
EMBER_UNARY_OP(Sqrt, sqrt(x))
EMBER_UNARY_OP(Rsqrt, T(1) / sqrt(x))
EMBER_UNARY_OP(Reciprocal, T(1) / x)
EMBER_UNARY_OP(Square, x* x)
EMBER_UNARY_OP(Tanh, tanh(x))
EMBER_UNARY_OP(Sigmoid, T(1) / (T(1) + exp(-x)))
EMBER_UNARY_OP(Relu, (isnan(x) || x > T(0)) ? x : T(0))
EMBER_UNARY_OP(Cube, x* x* x)
// x sigmoid(2u) with u = sqrt(2/pi) (x + 0.044715 x^3): 0.5 x (1 + tanh u) without
// the tanh.
EMBER_UNARY_OP(GeluTanh,
               x / (T(1) + exp(T(-2 * 0.7978845608028654) * (x + T(0.044715) * x * x * x))))
// x Phi(x) = 0.5 x erfc(-x / sqrt 2), in double as on the CPU.
EMBER_UNARY_OP(GeluErf, T(0.5 * double(x) * erfc(-double(x) * 0.7071067811865476)))
// In double, rounded once, as on the CPU.
EMBER_UNARY_OP(Sin, T(sin(double(x))))
EMBER_UNARY_OP(Cos, T(cos(double(x))))
// Derivatives (the factor of grad_out).
EMBER_UNARY_OP(ReluDerivative, x > T(0) ? T(1) : T(0))
EMBER_UNARY_OP(TanhDerivative, T(1) - x * x)     // from y = tanh x
EMBER_UNARY_OP(SigmoidDerivative, x*(T(1) - x))  // from y = sigmoid x
#undef EMBER_UNARY_OP

// 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2), t = tanh(u).
struct GeluTanhDerivativeOp {
  template <typename T>
  __device__ T operator()(T x) const {
    const T k = T(0.7978845608028654);
    const T t = tanh(k * (x + T(0.044715) * x * x * x));
    return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3 * 0.044715) * x * x);
  }
};

// Phi(x) + x phi(x), in double.
struct GeluErfDerivativeOp {
  template <typename T>
  __device__ T operator()(T x) const {
    const double d = x;
    const double phi = exp(-0.5 * d * d) * 0.3989422804014327;
    return T(0.5 * erfc(-d * 0.7071067811865476) + d * phi);
  }
};

struct PowOp {
  double exponent;
  template <typename T>
  __device__ T operator()(T x) const {
    return T(pow(double(x), exponent));
  }
};

}  // namespace

void Neg(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Neg", dtype, n, in, out, NegOp{});
}
void Abs(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Abs", dtype, n, in, out, AbsOp{});
}
void Exp(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Exp", dtype, n, in, out, ExpOp{});
}
void Log(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Log", dtype, n, in, out, LogOp{});
}
void Sqrt(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Sqrt", dtype, n, in, out, SqrtOp{});
}
void Rsqrt(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Rsqrt", dtype, n, in, out, RsqrtOp{});
}
void Reciprocal(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Reciprocal", dtype, n, in, out, ReciprocalOp{});
}
void Square(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Square", dtype, n, in, out, SquareOp{});
}
void Tanh(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Tanh", dtype, n, in, out, TanhOp{});
}
void Sigmoid(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Sigmoid", dtype, n, in, out, SigmoidOp{});
}
void Relu(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Relu", dtype, n, in, out, ReluOp{});
}
void GeluTanh(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::GeluTanh", dtype, n, in, out, GeluTanhOp{});
}
void GeluErf(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::GeluErf", dtype, n, in, out, GeluErfOp{});
}
void Sin(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Sin", dtype, n, in, out, SinOp{});
}
void Cos(DType dtype, int64_t n, const void* in, void* out) {
  Unary("kernels::cuda::Cos", dtype, n, in, out, CosOp{});
}

// The exact forms the CPU uses for these exponents (PyTorch's too); pow in double
// otherwise (pow(x, 0) = 1 even for NaN, pow(x, 1) = x).
void PowScalar(DType dtype, int64_t n, const void* in, double exponent, void* out) {
  constexpr char kName[] = "kernels::cuda::PowScalar";
  if (exponent == 2) return Unary(kName, dtype, n, in, out, SquareOp{});
  if (exponent == 3) return Unary(kName, dtype, n, in, out, CubeOp{});
  if (exponent == 0.5) return Unary(kName, dtype, n, in, out, SqrtOp{});
  if (exponent == -0.5) return Unary(kName, dtype, n, in, out, RsqrtOp{});
  if (exponent == -1) return Unary(kName, dtype, n, in, out, ReciprocalOp{});
  Unary(kName, dtype, n, in, out, PowOp{exponent});
}

void ReluBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  Backward("kernels::cuda::ReluBackward", dtype, n, x, grad_out, grad_in, ReluDerivativeOp{});
}
void GeluTanhBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  Backward("kernels::cuda::GeluTanhBackward", dtype, n, x, grad_out, grad_in,
           GeluTanhDerivativeOp{});
}
void GeluErfBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  Backward("kernels::cuda::GeluErfBackward", dtype, n, x, grad_out, grad_in, GeluErfDerivativeOp{});
}
void TanhBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in) {
  Backward("kernels::cuda::TanhBackward", dtype, n, y, grad_out, grad_in, TanhDerivativeOp{});
}
void SigmoidBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in) {
  Backward("kernels::cuda::SigmoidBackward", dtype, n, y, grad_out, grad_in, SigmoidDerivativeOp{});
}

}  // namespace ember::kernels::cuda
