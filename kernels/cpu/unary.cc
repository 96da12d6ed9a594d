// Elementwise unary kernels (see unary.h), with Highway's dynamic dispatch: this file
// is compiled once per SIMD target, and each call runs the best target the CPU has.

#include "kernels/unary.h"

#include <cmath>

#include "kernels/cpu/internal/dispatch.h"

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

using internal::HWY_NAMESPACE::ExpNonPositive;
using internal::HWY_NAMESPACE::Map;
using internal::HWY_NAMESPACE::StableSigmoid;

// sqrt(2 / pi) and the cubic coefficient of GPT-2's GELU.
constexpr double kGeluBeta = 0.7978845608028654;
constexpr double kGeluKappa = 0.044715;

constexpr double kSqrtHalf = 0.70710678118654752440;    // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)

// out[i] = f(d, in[i]) over n contiguous elements, split across the pool; bf16 computed
// in f32 (Map).
template <class F>
void UnaryMap(const char* op, DType dtype, int64_t n, const void* in, void* out, const F& f) {
  DispatchFloatOrBf16(op, dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(n, 1,
                    [&](int64_t b, int64_t e) { Map(e - b, At<T>(out, b), f, At<T>(in, b)); });
  });
}

// grad_in[i] = f(d, a[i], grad_out[i]), a being the forward's input or output.
template <class F>
void BackwardMap(const char* op, DType dtype, int64_t n, const void* a, const void* grad_out,
                 void* grad_in, const F& f) {
  DispatchFloatOrBf16(op, dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(n, 1, [&](int64_t b, int64_t e) {
      Map(e - b, At<T>(grad_in, b), f, At<T>(a, b), At<T>(grad_out, b));
    });
  });
}

// out[i] = f(a[i], g[i]) in double, for the ops with no SIMD form (g may be null).
template <typename F>
void ScalarMap(const char* op, DType dtype, int64_t n, const void* a, const void* g, void* out,
               const F& f) {
  DispatchFloatOrBf16(op, dtype, [&](auto type) {
    using T = decltype(type);
    const T* x = At<T>(a);
    const T* grad = At<T>(g);
    T* y = At<T>(out);
    ParallelForWork(n, 4, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        y[i] = Convert<T>(f(Convert<double>(x[i]), grad ? Convert<double>(grad[i]) : 0.0));
      }
    });
  });
}

void Neg(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("neg", dtype, n, in, out, [](auto, auto x) { return hn::Neg(x); });
}
void Abs(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("abs", dtype, n, in, out, [](auto, auto x) { return hn::Abs(x); });
}
void Exp(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("exp", dtype, n, in, out, [](auto d, auto x) { return hn::Exp(d, x); });
}
void Log(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("log", dtype, n, in, out, [](auto d, auto x) { return hn::Log(d, x); });
}
void Sqrt(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("sqrt", dtype, n, in, out, [](auto, auto x) { return hn::Sqrt(x); });
}
void Rsqrt(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("rsqrt", dtype, n, in, out,
           [](auto d, auto x) { return hn::Div(hn::Set(d, 1), hn::Sqrt(x)); });
}
void Reciprocal(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("reciprocal", dtype, n, in, out,
           [](auto d, auto x) { return hn::Div(hn::Set(d, 1), x); });
}
void Square(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("square", dtype, n, in, out, [](auto, auto x) { return hn::Mul(x, x); });
}
void Tanh(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("tanh", dtype, n, in, out, [](auto d, auto x) { return hn::Tanh(d, x); });
}
void Sigmoid(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("sigmoid", dtype, n, in, out, [](auto d, auto x) { return StableSigmoid(d, x); });
}
// x < 0 ? 0 : x, so that NaN passes through (as torch.relu), unlike max(x, 0).
void Relu(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("relu", dtype, n, in, out,
           [](auto d, auto x) { return hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x); });
}
// GPT-2's GELU, 0.5 x (1 + tanh u) with u = sqrt(2/pi) (x + 0.044715 x^3), computed
// as x sigmoid(2u): the same function (1 + tanh u = 2 sigmoid(2u)), with one exp
// instead of a tanh and no cancellation in 1 + tanh.
void GeluTanh(DType dtype, int64_t n, const void* in, void* out) {
  UnaryMap("gelu_tanh", dtype, n, in, out, [](auto d, auto x) {
    return hn::Mul(x, StableSigmoid(d, hn::Mul(hn::Set(d, 2 * kGeluBeta),
                                               hn::MulAdd(hn::Mul(hn::Set(d, kGeluKappa), x),
                                                          hn::Mul(x, x), x))));
  });
}
// Phi(x) = 0.5 erfc(-x / sqrt 2), the normal CDF, in f32 lanes, and e^(-x^2 / 2) beside
// it (`gauss`). With a = |x| / sqrt 2, Numerical Recipes' Chebyshev fit (fractional
// error below 1.2e-7 for every a >= 0):
//   erfc(a) = t exp(-a^2 - 1.26551223 + t P(t)),  t = 1 / (1 + a / 2),
// and Phi(x) = erfc(a) / 2 for x < 0, 1 - erfc(a) / 2 otherwise. a^2 = x^2 / 2 is carried
// as hi + lo (lo from an FMA) and exp(-hi) taken apart from the rest: the left tail's
// relative error stays a few ulps, where one rounding of x^2 would cost x^2 ulps. The
// rest, p - lo, lies in [-1.27, 1e-7] (p is the fit's exponent past -a^2; |lo| <= 2^-25
// x^2), where ExpNonPositive's reduction holds (n = 0 above 0); and exp(-lo) = 1 - lo to
// f32's precision (lo^2 < 2^-40 wherever e^(-x^2 / 2) is not 0).
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V NormalCdf(D d, V x, V& gauss) {
  const V half = hn::Set(d, 0.5);
  const V sq = hn::Mul(x, x);
  const V hi = hn::Mul(sq, half), lo = hn::Mul(hn::MulSub(x, x, sq), half);
  const V t =
      hn::Div(hn::Set(d, 1), hn::MulAdd(hn::Abs(x), hn::Set(d, 0.5 * kSqrtHalf), hn::Set(d, 1)));
  V p = hn::Set(d, 0.17087277);
  for (const double c : {-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
                         0.37409196, 1.00002368, -1.26551223}) {
    p = hn::MulAdd(p, t, hn::Set(d, c));
  }
  const V e_hi = ExpNonPositive(d, hn::Neg(hi));
  gauss = hn::NegMulAdd(e_hi, lo, e_hi);
  const V half_erfc = hn::Mul(hn::Mul(half, t), hn::Mul(e_hi, ExpNonPositive(d, hn::Sub(p, lo))));
  return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), half_erfc, hn::Sub(hn::Set(d, 1), half_erfc));
}

// x Phi(x): f32 and bf16 by NormalCdf, f64 by std::erfc.
void GeluErf(DType dtype, int64_t n, const void* in, void* out) {
  if (dtype == DType::kF64) {
    return ScalarMap("gelu_erf", dtype, n, in, nullptr, out,
                     [](double x, double) { return 0.5 * x * std::erfc(-x * kSqrtHalf); });
  }
  UnaryMap("gelu_erf", dtype, n, in, out, [](auto d, auto x) {
    decltype(x) gauss;
    return hn::Mul(x, NormalCdf(d, x, gauss));
  });
}

void Sin(DType dtype, int64_t n, const void* in, void* out) {
  ScalarMap("sin", dtype, n, in, nullptr, out, [](double x, double) { return std::sin(x); });
}
void Cos(DType dtype, int64_t n, const void* in, void* out) {
  ScalarMap("cos", dtype, n, in, nullptr, out, [](double x, double) { return std::cos(x); });
}

void PowScalar(DType dtype, int64_t n, const void* in, double exponent, void* out) {
  if (exponent == 2) return Square(dtype, n, in, out);
  if (exponent == 3) {
    return UnaryMap("pow", dtype, n, in, out,
                    [](auto, auto x) { return hn::Mul(hn::Mul(x, x), x); });
  }
  if (exponent == 0.5) return Sqrt(dtype, n, in, out);
  if (exponent == -0.5) return Rsqrt(dtype, n, in, out);
  if (exponent == -1) return Reciprocal(dtype, n, in, out);
  ScalarMap("pow", dtype, n, in, nullptr, out, [exponent](double x, double) {
    // pow(x, 0) is 1 even for NaN, and pow(x, 1) is x, as in PyTorch.
    return std::pow(x, exponent);
  });
}

void ReluBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  BackwardMap("relu_backward", dtype, n, x, grad_out, grad_in,
              [](auto d, auto a, auto g) { return hn::IfThenElseZero(hn::Gt(a, hn::Zero(d)), g); });
}
void TanhBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in) {
  BackwardMap("tanh_backward", dtype, n, y, grad_out, grad_in, [](auto d, auto a, auto g) {
    return hn::Mul(g, hn::NegMulAdd(a, a, hn::Set(d, 1)));
  });
}
void SigmoidBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in) {
  BackwardMap("sigmoid_backward", dtype, n, y, grad_out, grad_in, [](auto d, auto a, auto g) {
    return hn::Mul(g, hn::Mul(a, hn::Sub(hn::Set(d, 1), a)));
  });
}
// With s = sigmoid(2u): d/dx [x s] = s + 2 x s (1 - s) u', u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
void GeluTanhBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  BackwardMap("gelu_tanh_backward", dtype, n, x, grad_out, grad_in, [](auto d, auto x, auto g) {
    const auto x_sq = hn::Mul(x, x);
    const auto one = hn::Set(d, 1);
    const auto s =
        StableSigmoid(d, hn::Mul(hn::Set(d, 2 * kGeluBeta),
                                 hn::MulAdd(hn::Mul(hn::Set(d, kGeluKappa), x), x_sq, x)));
    const auto du =
        hn::Mul(hn::Set(d, 2 * kGeluBeta), hn::MulAdd(hn::Set(d, 3 * kGeluKappa), x_sq, one));
    return hn::Mul(g, hn::MulAdd(hn::Mul(hn::Mul(x, s), hn::Sub(one, s)), du, s));
  });
}
// d/dx [x Phi(x)] = Phi(x) + x phi(x), phi(x) = e^(-x^2 / 2) / sqrt(2 pi).
void GeluErfBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  if (dtype == DType::kF64) {
    return ScalarMap("gelu_erf_backward", dtype, n, x, grad_out, grad_in, [](double x, double g) {
      const double cdf = 0.5 * std::erfc(-x * kSqrtHalf);
      const double pdf = kInvSqrt2Pi * std::exp(-0.5 * x * x);
      return g * (cdf + x * pdf);
    });
  }
  BackwardMap("gelu_erf_backward", dtype, n, x, grad_out, grad_in, [](auto d, auto x, auto g) {
    decltype(x) gauss;
    const auto cdf = NormalCdf(d, x, gauss);
    return hn::Mul(g, hn::MulAdd(hn::Mul(x, hn::Set(d, kInvSqrt2Pi)), gauss, cdf));
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(Neg);
HWY_EXPORT(Abs);
HWY_EXPORT(Exp);
HWY_EXPORT(Log);
HWY_EXPORT(Sqrt);
HWY_EXPORT(Rsqrt);
HWY_EXPORT(Reciprocal);
HWY_EXPORT(Square);
HWY_EXPORT(Tanh);
HWY_EXPORT(Sigmoid);
HWY_EXPORT(Relu);
HWY_EXPORT(GeluTanh);
HWY_EXPORT(GeluErf);
HWY_EXPORT(PowScalar);
HWY_EXPORT(ReluBackward);
HWY_EXPORT(TanhBackward);
HWY_EXPORT(SigmoidBackward);
HWY_EXPORT(GeluTanhBackward);
HWY_EXPORT(GeluErfBackward);
HWY_EXPORT(Sin);
HWY_EXPORT(Cos);

void Neg(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Neg)(dtype, n, in, out);
}
void Abs(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Abs)(dtype, n, in, out);
}
void Exp(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Exp)(dtype, n, in, out);
}
void Log(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Log)(dtype, n, in, out);
}
void Sqrt(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Sqrt)(dtype, n, in, out);
}
void Rsqrt(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Rsqrt)(dtype, n, in, out);
}
void Reciprocal(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Reciprocal)(dtype, n, in, out);
}
void Square(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Square)(dtype, n, in, out);
}
void Tanh(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Tanh)(dtype, n, in, out);
}
void Sigmoid(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Sigmoid)(dtype, n, in, out);
}
void Relu(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Relu)(dtype, n, in, out);
}
void GeluTanh(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(GeluTanh)(dtype, n, in, out);
}
void GeluErf(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(GeluErf)(dtype, n, in, out);
}
void PowScalar(DType dtype, int64_t n, const void* in, double exponent, void* out) {
  HWY_DYNAMIC_DISPATCH(PowScalar)(dtype, n, in, exponent, out);
}
void ReluBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  HWY_DYNAMIC_DISPATCH(ReluBackward)(dtype, n, x, grad_out, grad_in);
}
void TanhBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in) {
  HWY_DYNAMIC_DISPATCH(TanhBackward)(dtype, n, y, grad_out, grad_in);
}
void SigmoidBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in) {
  HWY_DYNAMIC_DISPATCH(SigmoidBackward)(dtype, n, y, grad_out, grad_in);
}
void GeluTanhBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  HWY_DYNAMIC_DISPATCH(GeluTanhBackward)(dtype, n, x, grad_out, grad_in);
}
void GeluErfBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in) {
  HWY_DYNAMIC_DISPATCH(GeluErfBackward)(dtype, n, x, grad_out, grad_in);
}
void Sin(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Sin)(dtype, n, in, out);
}
void Cos(DType dtype, int64_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(Cos)(dtype, n, in, out);
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
