// Every unary kernel, on every compiled SIMD target, against the float64 reference:
// sizes that leave SIMD tails, sizes that split across threads, both dtypes.

#include "kernels/unary.h"

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reference/unary.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

namespace ref = ::ember::kernels::reference;

using Kernel = std::function<void(DType, int64_t, const void*, void*)>;
using BackwardKernel = std::function<void(DType, int64_t, const void*, const void*, void*)>;

// Allowed error: |got - ref| <= rtol |ref| + atol, per dtype. Exact ops (one IEEE
// rounding) must equal the correctly rounded reference.
struct Tolerance {
  double rtol32, atol32, rtol64, atol64;
};
constexpr Tolerance kExact = {0, 0, 0, 0};
constexpr Tolerance kOneRounding = {1.2e-7, 0, 2.3e-16, 0};  // two roundings: 1 ulp
constexpr Tolerance kMath = {1e-6, 1e-37, 1e-14, 1e-300};    // Highway's Exp/Log/Tanh
// Several roundings; near GELU's left tail, 1 + tanh(u) cancels in f32 (as in PyTorch).
constexpr Tolerance kComposed = {3e-6, 4e-6, 3e-14, 1e-13};
// std::erfc in double, then rounded. In f64 the tail of erfc (and the zero of
// GELU's derivative near x = -0.75) amplify a last-bit difference in the argument.
constexpr Tolerance kErf = {1.2e-7, 0, 1e-13, 1e-15};

const std::vector<int64_t> kSizes = {0, 1, 3, 7, 8, 9, 15, 16, 17, 33, 100, 1000, 70001};

bool Close(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rtol * std::fabs(want) + atol;
}

template <typename T>
void CheckUnary(const char* name, const Kernel& kernel, double (*reference)(double), double lo,
                double hi, Tolerance tol) {
  const bool f32 = std::is_same_v<T, float>;
  const double rtol = f32 ? tol.rtol32 : tol.rtol64, atol = f32 ? tol.atol32 : tol.atol64;
  std::mt19937 rng(17);
  ForEachTarget([&](const std::string& target) {
    for (int64_t n : kSizes) {
      const std::vector<T> in = RandomVector<T>(n, lo, hi, rng);
      std::vector<T> out(n, T(-12345));
      kernel(kDTypeOf<T>, n, in.data(), out.data());
      for (int64_t i = 0; i < n; ++i) {
        const double want = reference(in[i]);
        const double want_rounded = static_cast<T>(want);
        ASSERT_TRUE(rtol == 0 && atol == 0
                        ? (out[i] == want_rounded || (std::isnan(want) && std::isnan(out[i])))
                        : Close(out[i], want, rtol, atol))
            << name << " " << DTypeName(kDTypeOf<T>) << " on " << target << ", n=" << n
            << ", x=" << in[i] << ": got " << out[i] << ", want " << want;
      }
    }
  });
}

template <typename T>
void CheckBackward(const char* name, const BackwardKernel& kernel,
                   double (*reference)(double, double), double (*forward)(double), double lo,
                   double hi, Tolerance tol) {
  const bool f32 = std::is_same_v<T, float>;
  const double rtol = f32 ? tol.rtol32 : tol.rtol64, atol = f32 ? tol.atol32 : tol.atol64;
  std::mt19937 rng(23);
  ForEachTarget([&](const std::string& target) {
    for (int64_t n : kSizes) {
      std::vector<T> a = RandomVector<T>(n, lo, hi, rng);
      if (forward != nullptr) {
        for (T& v : a) v = static_cast<T>(forward(v));  // backward from the output y
      }
      const std::vector<T> g = RandomVector<T>(n, -2, 2, rng);
      std::vector<T> out(n);
      kernel(kDTypeOf<T>, n, a.data(), g.data(), out.data());
      for (int64_t i = 0; i < n; ++i) {
        const double want = reference(a[i], g[i]);
        ASSERT_TRUE(Close(out[i], want, rtol, atol))
            << name << " " << DTypeName(kDTypeOf<T>) << " on " << target << ", n=" << n
            << ", a=" << a[i] << ", g=" << g[i] << ": got " << out[i] << ", want " << want;
      }
    }
  });
}

#define CHECK_UNARY(Name, lo, hi, tol)                       \
  TEST(UnaryTest, Name) {                                    \
    CheckUnary<float>(#Name, Name, ref::Name, lo, hi, tol);  \
    CheckUnary<double>(#Name, Name, ref::Name, lo, hi, tol); \
  }

CHECK_UNARY(Neg, -10, 10, kExact)
CHECK_UNARY(Abs, -10, 10, kExact)
CHECK_UNARY(Square, -10, 10, kExact)
CHECK_UNARY(Sqrt, 0, 100, kExact)
CHECK_UNARY(Reciprocal, 0.01, 100, kExact)
CHECK_UNARY(Relu, -10, 10, kExact)
CHECK_UNARY(Rsqrt, 0.01, 100, kOneRounding)
CHECK_UNARY(Exp, -80, 80, kMath)
CHECK_UNARY(Log, 1e-30, 1e30, kMath)
CHECK_UNARY(Tanh, -12, 12, kMath)
CHECK_UNARY(Sigmoid, -30, 30, kComposed)
CHECK_UNARY(GeluTanh, -12, 12, kComposed)
CHECK_UNARY(GeluErf, -12, 12, kErf)

#define CHECK_BACKWARD(Name, forward, lo, hi, tol)                       \
  TEST(UnaryBackwardTest, Name) {                                        \
    CheckBackward<float>(#Name, Name, ref::Name, forward, lo, hi, tol);  \
    CheckBackward<double>(#Name, Name, ref::Name, forward, lo, hi, tol); \
  }

CHECK_BACKWARD(ReluBackward, nullptr, -5, 5, kExact)
CHECK_BACKWARD(TanhBackward, ref::Tanh, -5, 5, kComposed)
CHECK_BACKWARD(SigmoidBackward, ref::Sigmoid, -10, 10, kComposed)
CHECK_BACKWARD(GeluTanhBackward, nullptr, -8, 8, kComposed)
CHECK_BACKWARD(GeluErfBackward, nullptr, -8, 8, kErf)

TEST(UnaryTest, PowScalarForEveryExponentPath) {
  for (double p : {2.0, 3.0, 0.5, -0.5, -1.0, 0.0, 1.0, 1.7, -2.25}) {
    std::mt19937 rng(5);
    for (int64_t n : kSizes) {
      const std::vector<float> in = RandomVector<float>(n, 0.1, 10, rng);
      std::vector<float> out(n);
      PowScalar(DType::kF32, n, in.data(), p, out.data());
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_TRUE(Close(out[i], ref::Pow(in[i], p), 2.4e-7, 0)) << "p=" << p << " x=" << in[i];
      }
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double x = nan, y = 0;
  PowScalar(DType::kF64, 1, &x, 0.0, &y);
  EXPECT_EQ(y, 1.0);  // pow(NaN, 0) = 1, as torch.pow
}

TEST(UnaryTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  std::vector<float> in = {nan, -inf, inf, -0.0f, -100.0f, 100.0f}, out(6);
  Relu(DType::kF32, 6, in.data(), out.data());
  EXPECT_TRUE(std::isnan(out[0]));  // NaN propagates, as torch.relu
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], inf);
  Sigmoid(DType::kF32, 6, in.data(), out.data());
  EXPECT_EQ(out[4], 0.0f);  // no NaN from inf / inf
  EXPECT_EQ(out[5], 1.0f);
  Exp(DType::kF32, 6, in.data(), out.data());
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], inf);
  Tanh(DType::kF32, 6, in.data(), out.data());
  EXPECT_EQ(out[4], -1.0f);
  EXPECT_EQ(out[5], 1.0f);
}

TEST(UnaryTest, InPlaceAndBadDType) {
  std::vector<double> x = {1, 4, 9};
  Sqrt(DType::kF64, 3, x.data(), x.data());
  EXPECT_EQ(x, (std::vector<double>{1, 2, 3}));
  int32_t i = 3;
  EXPECT_THROW(Exp(DType::kI32, 1, &i, &i), Error);
}

}  // namespace
}  // namespace ember::kernels::cpu
