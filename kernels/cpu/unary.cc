// Elementwise unary kernels (see unary.h), with Highway's dynamic dispatch: this file
// is compiled once per SIMD target, and each call runs the best target the CPU has.

#include "kernels/cpu/unary.h"

#include <cmath>

#include "base/error.h"
#include "kernels/cpu/internal/check.h"
#include "kernels/cpu/thread_pool.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/unary.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "kernels/cpu/internal/exp-inl.h"
#include "kernels/cpu/internal/map-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using internal::HWY_NAMESPACE::Map;
using internal::HWY_NAMESPACE::StableSigmoid;

// sqrt(2 / pi) and the cubic coefficient of GPT-2's GELU.
constexpr double kGeluBeta = 0.7978845608028654;
constexpr double kGeluKappa = 0.044715;

// One exported function per op and dtype (HWY_EXPORT needs plain functions).
#define EMBER_UNARY(Name, ...)                                                       \
  template <typename T>                                                              \
  void Name##Impl(int64_t n, const T* in, T* out) {                                  \
    Map(                                                                             \
        n, out, [](auto d, auto x) { return __VA_ARGS__; }, in);                     \
  }                                                                                  \
  void Name##F32(int64_t n, const float* in, float* out) { Name##Impl(n, in, out); } \
  void Name##F64(int64_t n, const double* in, double* out) { Name##Impl(n, in, out); }

EMBER_UNARY(Neg, hn::Neg(x))
EMBER_UNARY(Abs, hn::Abs(x))
EMBER_UNARY(Exp, hn::Exp(d, x))
EMBER_UNARY(Log, hn::Log(d, x))
EMBER_UNARY(Sqrt, hn::Sqrt(x))
EMBER_UNARY(Rsqrt, hn::Div(hn::Set(d, 1), hn::Sqrt(x)))
EMBER_UNARY(Reciprocal, hn::Div(hn::Set(d, 1), x))
EMBER_UNARY(Square, hn::Mul(x, x))
EMBER_UNARY(Cube, hn::Mul(hn::Mul(x, x), x))
EMBER_UNARY(Tanh, hn::Tanh(d, x))
EMBER_UNARY(Sigmoid, StableSigmoid(d, x))
// x < 0 ? 0 : x, so that NaN passes through (as torch.relu), unlike max(x, 0).
EMBER_UNARY(Relu, hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x))
// GPT-2's GELU, 0.5 x (1 + tanh u) with u = sqrt(2/pi) (x + 0.044715 x^3), computed
// as x sigmoid(2u): the same function (1 + tanh u = 2 sigmoid(2u)), with one exp
// instead of a tanh and no cancellation in 1 + tanh.
EMBER_UNARY(GeluTanh,
            hn::Mul(x, StableSigmoid(d, hn::Mul(hn::Set(d, 2 * kGeluBeta),
                                                hn::MulAdd(hn::Mul(hn::Set(d, kGeluKappa), x),
                                                           hn::Mul(x, x), x)))))
#undef EMBER_UNARY

// grad_in[i] = op(d, a[i], grad_out[i]).
#define EMBER_BACKWARD(Name, ...)                                            \
  template <typename T>                                                      \
  void Name##Impl(int64_t n, const T* a, const T* g, T* out) {               \
    Map(                                                                     \
        n, out, [](auto d, auto a, auto g) { return __VA_ARGS__; }, a, g);   \
  }                                                                          \
  void Name##F32(int64_t n, const float* a, const float* g, float* out) {    \
    Name##Impl(n, a, g, out);                                                \
  }                                                                          \
  void Name##F64(int64_t n, const double* a, const double* g, double* out) { \
    Name##Impl(n, a, g, out);                                                \
  }

EMBER_BACKWARD(ReluBackward, hn::IfThenElseZero(hn::Gt(a, hn::Zero(d)), g))
EMBER_BACKWARD(TanhBackward, hn::Mul(g, hn::NegMulAdd(a, a, hn::Set(d, 1))))
EMBER_BACKWARD(SigmoidBackward, hn::Mul(g, hn::Mul(a, hn::Sub(hn::Set(d, 1), a))))
// With s = sigmoid(2u): d/dx [x s] = s + 2 x s (1 - s) u', u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
EMBER_BACKWARD(GeluTanhBackward, [&] {
  const auto x = a;
  const auto x_sq = hn::Mul(x, x);
  const auto one = hn::Set(d, 1);
  const auto s = StableSigmoid(d, hn::Mul(hn::Set(d, 2 * kGeluBeta),
                                          hn::MulAdd(hn::Mul(hn::Set(d, kGeluKappa), x), x_sq, x)));
  const auto du =
      hn::Mul(hn::Set(d, 2 * kGeluBeta), hn::MulAdd(hn::Set(d, 3 * kGeluKappa), x_sq, one));
  return hn::Mul(g, hn::MulAdd(hn::Mul(hn::Mul(x, s), hn::Sub(one, s)), du, s));
}())
#undef EMBER_BACKWARD

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {
namespace {

// Below this many elements a loop stays on one thread.
constexpr int64_t kGrain = 32768;

template <typename T>
using UnaryFn = void (*)(int64_t, const T*, T*);
template <typename T>
using BackwardFn = void (*)(int64_t, const T*, const T*, T*);

void RunUnary(const char* op, DType dtype, int64_t n, const void* in, void* out, UnaryFn<float> f32,
              UnaryFn<double> f64) {
  internal::CheckFloatDType(op, dtype);
  ParallelFor(n, kGrain, [&](int64_t b, int64_t e) {
    if (dtype == DType::kF32) {
      f32(e - b, static_cast<const float*>(in) + b, static_cast<float*>(out) + b);
    } else {
      f64(e - b, static_cast<const double*>(in) + b, static_cast<double*>(out) + b);
    }
  });
}

void RunBackward(const char* op, DType dtype, int64_t n, const void* a, const void* g, void* out,
                 BackwardFn<float> f32, BackwardFn<double> f64) {
  internal::CheckFloatDType(op, dtype);
  ParallelFor(n, kGrain, [&](int64_t b, int64_t e) {
    if (dtype == DType::kF32) {
      f32(e - b, static_cast<const float*>(a) + b, static_cast<const float*>(g) + b,
          static_cast<float*>(out) + b);
    } else {
      f64(e - b, static_cast<const double*>(a) + b, static_cast<const double*>(g) + b,
          static_cast<double*>(out) + b);
    }
  });
}

// out[i] = fn(a[i], g[i]) in double, for the ops with no SIMD form (g may be null).
template <typename Fn>
void ScalarMap(const char* op, DType dtype, int64_t n, const void* a, const void* g, void* out,
               const Fn& fn) {
  internal::CheckFloatDType(op, dtype);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const T* x = static_cast<const T*>(a);
    const T* grad = static_cast<const T*>(g);
    T* y = static_cast<T*>(out);
    ParallelFor(n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        y[i] = static_cast<T>(
            fn(static_cast<double>(x[i]), grad ? static_cast<double>(grad[i]) : 0.0));
      }
    });
  };
  if (dtype == DType::kF32) {
    run(0.0f);
  } else {
    run(0.0);
  }
}

constexpr double kSqrtHalf = 0.70710678118654752440;    // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)

}  // namespace

#define EMBER_DEFINE_UNARY(Name, name)                                  \
  HWY_EXPORT(Name##F32);                                                \
  HWY_EXPORT(Name##F64);                                                \
  void Name(DType dtype, int64_t n, const void* in, void* out) {        \
    RunUnary(name, dtype, n, in, out, &HWY_DYNAMIC_DISPATCH(Name##F32), \
             &HWY_DYNAMIC_DISPATCH(Name##F64));                         \
  }
EMBER_DEFINE_UNARY(Neg, "neg")
EMBER_DEFINE_UNARY(Abs, "abs")
EMBER_DEFINE_UNARY(Exp, "exp")
EMBER_DEFINE_UNARY(Log, "log")
EMBER_DEFINE_UNARY(Sqrt, "sqrt")
EMBER_DEFINE_UNARY(Rsqrt, "rsqrt")
EMBER_DEFINE_UNARY(Reciprocal, "reciprocal")
EMBER_DEFINE_UNARY(Square, "square")
EMBER_DEFINE_UNARY(Tanh, "tanh")
EMBER_DEFINE_UNARY(Sigmoid, "sigmoid")
EMBER_DEFINE_UNARY(Relu, "relu")
EMBER_DEFINE_UNARY(GeluTanh, "gelu_tanh")
#undef EMBER_DEFINE_UNARY

HWY_EXPORT(CubeF32);
HWY_EXPORT(CubeF64);

#define EMBER_DEFINE_BACKWARD(Name, name)                                                 \
  HWY_EXPORT(Name##F32);                                                                  \
  HWY_EXPORT(Name##F64);                                                                  \
  void Name(DType dtype, int64_t n, const void* a, const void* grad_out, void* grad_in) { \
    RunBackward(name, dtype, n, a, grad_out, grad_in, &HWY_DYNAMIC_DISPATCH(Name##F32),   \
                &HWY_DYNAMIC_DISPATCH(Name##F64));                                        \
  }
EMBER_DEFINE_BACKWARD(ReluBackward, "relu_backward")
EMBER_DEFINE_BACKWARD(TanhBackward, "tanh_backward")
EMBER_DEFINE_BACKWARD(SigmoidBackward, "sigmoid_backward")
EMBER_DEFINE_BACKWARD(GeluTanhBackward, "gelu_tanh_backward")
#undef EMBER_DEFINE_BACKWARD

void GeluErf(DType dtype, int64_t n, const void* in, void* out) {
  ScalarMap("gelu_erf", dtype, n, in, nullptr, out,
            [](double x, double) { return 0.5 * x * std::erfc(-x * kSqrtHalf); });
}

void GeluErfBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  ScalarMap("gelu_erf_backward", dtype, n, x, grad_out, grad_in, [](double x, double g) {
    const double cdf = 0.5 * std::erfc(-x * kSqrtHalf);
    const double pdf = kInvSqrt2Pi * std::exp(-0.5 * x * x);
    return g * (cdf + x * pdf);
  });
}

void PowScalar(DType dtype, int64_t n, const void* in, double exponent, void* out) {
  if (exponent == 2) return Square(dtype, n, in, out);
  if (exponent == 3) {
    return RunUnary("pow", dtype, n, in, out, &HWY_DYNAMIC_DISPATCH(CubeF32),
                    &HWY_DYNAMIC_DISPATCH(CubeF64));
  }
  if (exponent == 0.5) return Sqrt(dtype, n, in, out);
  if (exponent == -0.5) return Rsqrt(dtype, n, in, out);
  if (exponent == -1) return Reciprocal(dtype, n, in, out);
  ScalarMap("pow", dtype, n, in, nullptr, out, [exponent](double x, double) {
    // pow(x, 0) is 1 even for NaN, and pow(x, 1) is x, as in PyTorch.
    return std::pow(x, exponent);
  });
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
