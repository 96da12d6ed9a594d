// The unary functions and their backwards: one table of cases on every CPU SIMD target
// this machine has and on CUDA (kernels/cuda/internal/backends.h), against the float64
// reference (kernels/reference/unary.h), in f32, f64 and bf16 (whose results must also be
// the f32 kernel's, rounded once), at sizes that leave SIMD tails,
// split across threads and fill several CUDA blocks. The CUDA half skips, saying why,
// without a GPU.

#include "kernels/unary.h"

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/reference/unary.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

namespace ref = ::ember::kernels::reference;
using cuda::internal::CudaBackend;

// Allowed error: |got - ref| <= rtol |ref| + atol, per dtype. Exact ops (one IEEE
// rounding) must equal the correctly rounded reference.
struct Tolerance {
  double rtol32, atol32, rtol64, atol64;
};
constexpr Tolerance kExact = {0, 0, 0, 0};
constexpr Tolerance kOneRounding = {1.2e-7, 0, 2.3e-16, 0};  // two roundings: 1 ulp
constexpr Tolerance kMath = {1e-6, 1e-37, 1e-14, 1e-300};    // exp/log/tanh: <= 2 ulp
// Several roundings; near GELU's left tail, 1 + tanh(u) cancels in f32 (as in PyTorch).
constexpr Tolerance kComposed = {3e-6, 4e-6, 3e-14, 1e-13};
// f32 (and bf16): a Chebyshev fit of erfc (fractional error 1.2e-7) in f32 lanes, a few
// ulps, as kComposed's; f64: std::erfc in double, then rounded. In f64 the tail of erfc
// (and the zero of GELU's derivative near x = -0.75) amplify a last-bit difference in
// the argument.
constexpr Tolerance kErf = {kComposed.rtol32, kComposed.atol32, 1e-13, 1e-15};

const std::vector<int64_t> kSizes = {0,  1,  3,   7,   8,   9,    15,    16,
                                     17, 33, 100, 256, 257, 1000, 70001, 100003};

bool Close(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rtol * std::fabs(want) + atol;
}

using Forward = std::function<void(DType, int64_t, const void*, void*)>;
using Backward = std::function<void(DType, int64_t, const void*, const void*, void*)>;

struct ForwardCase {
  const char* name;
  Forward kernel;
  std::function<double(double)> reference;
  double lo, hi;
  Tolerance tol;
};

// The bound of a case in T: bf16 computes in f32 and rounds once, so f32's bound plus
// one bf16 rounding.
template <typename T>
Tolerance In(const Tolerance& tol) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    return {tol.rtol32 + kBf16Roundoff, tol.atol32, 0, 0};
  } else {
    return tol;
  }
}

// Whether an exact op's result is the reference rounded to T (NaN for NaN).
template <typename T>
bool RoundedFrom(T got, double want) {
  const double g = Convert<double>(got);
  return std::isnan(want) ? std::isnan(g) : g == Convert<double>(Convert<T>(want));
}

// A bf16 kernel against the same kernel in f32 on the widened inputs: its results must be
// those, rounded once to bf16 (the arithmetic is f32's).
void ExpectF32RoundedOnce(const std::string& what, const std::vector<BFloat16>& got,
                          const std::vector<float>& f32) {
  for (size_t i = 0; i < got.size(); ++i) {
    const BFloat16 want = BFloat16::FromFloat(f32[i]);
    ASSERT_TRUE(got[i].bits == want.bits || (std::isnan(f32[i]) && std::isnan(got[i].ToFloat())))
        << what << ", element " << i << ": got " << got[i].ToFloat() << ", f32 " << f32[i];
  }
}

template <typename T>
std::vector<float> Widened(const std::vector<T>& v) {
  std::vector<float> out;
  for (const T& x : v) out.push_back(Convert<float>(x));
  return out;
}

template <typename B, typename T>
void CheckForward(const std::string& path, const ForwardCase& c, std::mt19937& rng) {
  const bool f64 = std::is_same_v<T, double>;
  const Tolerance tol = In<T>(c.tol);
  const double rtol = f64 ? tol.rtol64 : tol.rtol32, atol = f64 ? tol.atol64 : tol.atol32;
  const bool exact = c.tol.rtol32 == 0 && c.tol.atol32 == 0;
  for (int64_t n : kSizes) {
    const std::vector<T> in = RandomVector<T>(n, c.lo, c.hi, rng);
    const typename B::Buffer device_in(in), device_out(n * sizeof(T));
    c.kernel(kDTypeOf<T>, n, device_in.data(), device_out.data());
    const std::vector<T> out = device_out.template ToHost<T>();
    for (int64_t i = 0; i < n; ++i) {
      const double want = c.reference(Convert<double>(in[i]));
      const bool ok =
          exact ? RoundedFrom(out[i], want) : Close(Convert<double>(out[i]), want, rtol, atol);
      ASSERT_TRUE(ok) << c.name << " " << DTypeName(kDTypeOf<T>) << " on " << path << ", n=" << n
                      << ", x=" << Convert<double>(in[i]) << ": got " << Convert<double>(out[i])
                      << ", want " << want;
    }
    if constexpr (std::is_same_v<T, BFloat16>) {
      const typename B::Buffer wide_in(Widened(in)), wide_out(n * sizeof(float));
      c.kernel(DType::kF32, n, wide_in.data(), wide_out.data());
      ExpectF32RoundedOnce(std::string(c.name) + " on " + path + ", n=" + std::to_string(n), out,
                           wide_out.template ToHost<float>());
    }
  }
}

EMBER_BACKEND_TEST_SUITE(UnaryTest);

TYPED_TEST(UnaryTest, EveryFunctionMatchesTheReference) {
  using B = TypeParam;
  auto pow = [](double p) {
    return [p](DType d, int64_t n, const void* in, void* out) { B::PowScalar(d, n, in, p, out); };
  };
  const std::vector<ForwardCase> cases = {
      {"neg", B::Neg, ref::Neg, -10, 10, kExact},
      {"abs", B::Abs, ref::Abs, -10, 10, kExact},
      {"square", B::Square, ref::Square, -100, 100, kExact},
      {"sqrt", B::Sqrt, ref::Sqrt, 0, 1e4, kExact},
      {"reciprocal", B::Reciprocal, ref::Reciprocal, 0.01, 100, kExact},
      {"relu", B::Relu, ref::Relu, -10, 10, kExact},
      {"rsqrt", B::Rsqrt, ref::Rsqrt, 1e-4, 1e4, kOneRounding},
      {"exp", B::Exp, ref::Exp, -80, 80, kMath},
      {"log", B::Log, ref::Log, 1e-30, 1e30, kMath},
      {"tanh", B::Tanh, ref::Tanh, -12, 12, kMath},
      {"sigmoid", B::Sigmoid, ref::Sigmoid, -30, 30, kComposed},
      {"gelu_tanh", B::GeluTanh, ref::GeluTanh, -12, 12, kComposed},
      {"gelu_erf", B::GeluErf, ref::GeluErf, -12, 12, kErf},
      {"sin", B::Sin, ref::Sin, -1e5, 1e5, kOneRounding},  // far past a SIMD sine's range
      {"cos", B::Cos, ref::Cos, -1e5, 1e5, kOneRounding},
      {"pow 3", pow(3), [](double x) { return ref::Pow(x, 3); }, -20, 20, kComposed},
      {"pow 0.5", pow(0.5), ref::Sqrt, 0, 100, kExact},
      {"pow 1.7", pow(1.7), [](double x) { return ref::Pow(x, 1.7); }, 0, 100, kMath},
  };
  std::mt19937 rng(17);
  cuda::internal::ForEachPathAndFloatOrBf16<B>([&](const std::string& path, auto type) {
    for (const ForwardCase& c : cases) CheckForward<B, decltype(type)>(path, c, rng);
  });
}

TYPED_TEST(UnaryTest, EveryBackwardMatchesTheReference) {
  using B = TypeParam;
  struct Case {
    const char* name;
    Backward kernel;
    double (*reference)(double saved, double g);
    double (*saved)(double x);  // what the backward is given: x, or the forward's output
    double lo, hi;
    Tolerance tol;
  };
  const auto identity = [](double x) { return x; };
  const std::vector<Case> cases = {
      {"relu", B::ReluBackward, ref::ReluBackward, identity, -6, 6, kExact},
      {"tanh", B::TanhBackward, ref::TanhBackward, ref::Tanh, -6, 6, kComposed},
      {"sigmoid", B::SigmoidBackward, ref::SigmoidBackward, ref::Sigmoid, -10, 10, kComposed},
      {"gelu_tanh", B::GeluTanhBackward, ref::GeluTanhBackward, identity, -8, 8, kComposed},
      {"gelu_erf", B::GeluErfBackward, ref::GeluErfBackward, identity, -8, 8, kErf},
  };
  // CUDA's tanh, exp and erf are not Highway's: its bounds are ten times the CPU's.
  const double slack = std::is_same_v<B, CudaBackend> ? 10 : 1;
  std::mt19937 rng(23);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    for (const Case& c : cases) {
      auto check = [&](auto tag) {
        using T = decltype(tag);
        const bool f64 = std::is_same_v<T, double>;
        const Tolerance tol = In<T>(c.tol);
        const double rtol = slack * (f64 ? tol.rtol64 : tol.rtol32);
        const double atol = slack * (f64 ? tol.atol64 : tol.atol32) + (slack > 1 ? 1e-15 : 0);
        for (int64_t n : kSizes) {
          std::vector<T> saved = RandomVector<T>(n, c.lo, c.hi, rng);
          for (T& v : saved) v = Convert<T>(c.saved(Convert<double>(v)));
          const std::vector<T> g = RandomVector<T>(n, -2, 2, rng);
          const typename B::Buffer device_saved(saved), device_g(g), device_out(n * sizeof(T));
          c.kernel(kDTypeOf<T>, n, device_saved.data(), device_g.data(), device_out.data());
          const std::vector<T> out = device_out.template ToHost<T>();
          for (int64_t i = 0; i < n; ++i) {
            const double s = Convert<double>(saved[i]), gi = Convert<double>(g[i]);
            const double want = c.reference(s, gi);
            ASSERT_TRUE(Close(Convert<double>(out[i]), want, rtol, atol))
                << c.name << " backward " << DTypeName(kDTypeOf<T>) << " on " << path << ", n=" << n
                << ", saved=" << s << ", g=" << gi << ": got " << Convert<double>(out[i])
                << ", want " << want;
          }
          if constexpr (std::is_same_v<T, BFloat16>) {
            const typename B::Buffer wide_saved(Widened(saved)), wide_g(Widened(g)),
                wide_out(n * sizeof(float));
            c.kernel(DType::kF32, n, wide_saved.data(), wide_g.data(), wide_out.data());
            ExpectF32RoundedOnce(std::string(c.name) + " backward on " + path, out,
                                 wide_out.template ToHost<float>());
          }
        }
      };
      check(float());
      check(double());
      check(BFloat16());
    }
  });
}

// x^p through each of PowScalar's paths (square, cube, sqrt, rsqrt, reciprocal, one,
// identity, the general pow), against pow in double; pow(NaN, 0) = 1 as torch.pow.
TYPED_TEST(UnaryTest, PowScalarForEveryExponentPath) {
  using B = TypeParam;
  // The CPU's powf is within 2 ulp; CUDA's table held its pow to kMath.
  const double rtol = std::is_same_v<B, CudaBackend> ? kMath.rtol32 : 2.4e-7;
  std::mt19937 rng(5);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    for (double p : {2.0, 3.0, 0.5, -0.5, -1.0, 0.0, 1.0, 1.7, -2.25}) {
      for (int64_t n : kSizes) {
        const std::vector<float> in = RandomVector<float>(n, 0.1, 10, rng);
        const typename B::Buffer device_in(in), device_out(n * sizeof(float));
        B::PowScalar(DType::kF32, n, device_in.data(), p, device_out.data());
        const std::vector<float> out = device_out.template ToHost<float>();
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_TRUE(Close(out[i], ref::Pow(in[i], p), rtol, 0))
              << "p=" << p << " on " << path << ", x=" << in[i] << ": got " << out[i];
        }
      }
    }
    const typename B::Buffer nan(std::vector<double>{std::numeric_limits<double>::quiet_NaN()}),
        out(sizeof(double));
    B::PowScalar(DType::kF64, 1, nan.data(), 0.0, out.data());
    EXPECT_EQ(out.template ToHost<double>()[0], 1.0) << path;
  });
}

TEST(UnaryCpuTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  std::vector<float> in = {nan, -inf, inf, -0.0f, -100.0f, 100.0f}, out(6);
  cpu::Relu(DType::kF32, 6, in.data(), out.data());
  EXPECT_TRUE(std::isnan(out[0]));  // NaN propagates, as torch.relu
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], inf);
  cpu::Sigmoid(DType::kF32, 6, in.data(), out.data());
  EXPECT_EQ(out[4], 0.0f);  // no NaN from inf / inf
  EXPECT_EQ(out[5], 1.0f);
  cpu::Exp(DType::kF32, 6, in.data(), out.data());
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], inf);
  cpu::Tanh(DType::kF32, 6, in.data(), out.data());
  EXPECT_EQ(out[4], -1.0f);
  EXPECT_EQ(out[5], 1.0f);
}

TEST(UnaryCpuTest, InPlaceAndBadDType) {
  std::vector<double> x = {1, 4, 9};
  cpu::Sqrt(DType::kF64, 3, x.data(), x.data());
  EXPECT_EQ(x, (std::vector<double>{1, 2, 3}));
  int32_t i = 3;
  EXPECT_THROW(cpu::Exp(DType::kI32, 1, &i, &i), Error);
}

}  // namespace
}  // namespace ember::kernels
