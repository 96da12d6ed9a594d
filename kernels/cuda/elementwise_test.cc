// The elementwise families (unary, binary, AdamW) on both backends, one table of cases
// each: the unary functions and their backwards against the float64 reference with
// the CPU tests' tolerances; the binary ops, comparisons and Where against the same
// scalar C++ operation in the same type (one IEEE operation or select: exact) on
// broadcast and strided layouts in every dtype they take; pow against pow in double;
// AdamW over five steps against PyTorch's update computed in double, the gradient
// scaled (clipping's factor) on some. The CUDA half
// skips, saying why, without a GPU.

#include <cmath>
#include <cstring>
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

namespace ember::kernels::cuda {
namespace {

namespace ref = ::ember::kernels::reference;

EMBER_BACKEND_TEST_SUITE(ElementwiseTest);

// |got - want| <= rtol |want| + atol, per dtype.
struct Tolerance {
  double rtol32, atol32, rtol64, atol64;
};
constexpr Tolerance kExact = {0, 0, 0, 0};
constexpr Tolerance kOneRounding = {1.2e-7, 0, 2.3e-16, 0};
constexpr Tolerance kMath = {1e-6, 1e-37, 1e-14, 1e-300};  // exp/log/tanh: <= 2 ulp
constexpr Tolerance kComposed = {3e-6, 4e-6, 3e-14, 1e-13};
constexpr Tolerance kErf = {1.2e-7, 0, 1e-13, 1e-15};

bool Close(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rtol * std::fabs(want) + atol;
}

using Forward = std::function<void(DType, int64_t, const void*, void*)>;
using BackwardFn = std::function<void(DType, int64_t, const void*, const void*, void*)>;

struct UnaryCase {
  const char* name;
  Forward kernel;
  std::function<double(double)> reference;
  double lo, hi;
  Tolerance tol;
};

const std::vector<int64_t> kSizes = {0, 1, 7, 256, 257, 100003};

template <typename B, typename T>
void CheckUnary(const UnaryCase& c) {
  const bool f32 = std::is_same_v<T, float>;
  const double rtol = f32 ? c.tol.rtol32 : c.tol.rtol64, atol = f32 ? c.tol.atol32 : c.tol.atol64;
  std::mt19937 rng(17);
  for (int64_t n : kSizes) {
    const std::vector<T> in = RandomVector<T>(n, c.lo, c.hi, rng);
    const typename B::Buffer device_in(in), device_out(n * sizeof(T));
    c.kernel(kDTypeOf<T>, n, device_in.data(), device_out.data());
    const std::vector<T> out = device_out.template ToHost<T>();
    for (int64_t i = 0; i < n; ++i) {
      const double want = c.reference(in[i]);
      const bool ok = rtol == 0 && atol == 0 ? (out[i] == static_cast<T>(want) ||
                                                (std::isnan(want) && std::isnan(out[i])))
                                             : Close(out[i], want, rtol, atol);
      ASSERT_TRUE(ok) << c.name << " " << DTypeName(kDTypeOf<T>) << ", n=" << n << ", x=" << in[i]
                      << ": got " << out[i] << ", want " << want;
    }
  }
}

TYPED_TEST(ElementwiseTest, EveryUnaryFunctionMatchesTheReference) {
  using B = TypeParam;
  auto pow = [](double p) {
    return [p](DType d, int64_t n, const void* in, void* out) { B::PowScalar(d, n, in, p, out); };
  };
  const std::vector<UnaryCase> cases = {
      {"neg", B::Neg, ref::Neg, -5, 5, kExact},
      {"abs", B::Abs, ref::Abs, -5, 5, kExact},
      {"exp", B::Exp, ref::Exp, -80, 80, kMath},
      {"log", B::Log, ref::Log, 1e-6, 1e6, kMath},
      {"sqrt", B::Sqrt, ref::Sqrt, 0, 1e4, kExact},
      {"rsqrt", B::Rsqrt, ref::Rsqrt, 1e-4, 1e4, kOneRounding},
      {"reciprocal", B::Reciprocal, ref::Reciprocal, 0.01, 100, kExact},
      {"square", B::Square, ref::Square, -100, 100, kExact},
      {"tanh", B::Tanh, ref::Tanh, -10, 10, kMath},
      {"sigmoid", B::Sigmoid, ref::Sigmoid, -30, 30, kComposed},
      {"relu", B::Relu, ref::Relu, -5, 5, kExact},
      {"gelu_tanh", B::GeluTanh, ref::GeluTanh, -8, 8, kComposed},
      {"gelu_erf", B::GeluErf, ref::GeluErf, -8, 8, kErf},
      {"pow 3", pow(3), [](double x) { return ref::Pow(x, 3); }, -20, 20, kComposed},
      {"pow 0.5", pow(0.5), ref::Sqrt, 0, 100, kExact},
      {"pow 1.7", pow(1.7), [](double x) { return ref::Pow(x, 1.7); }, 0, 100, kMath},
  };
  for (const UnaryCase& c : cases) {
    CheckUnary<B, float>(c);
    CheckUnary<B, double>(c);
  }
}

TYPED_TEST(ElementwiseTest, EveryUnaryBackwardMatchesTheReference) {
  using B = TypeParam;
  struct Case {
    const char* name;
    BackwardFn kernel;
    double (*reference)(double saved, double g);
    double (*saved)(double x);  // what the backward is given: x, or the forward's output
    Tolerance tol;
  };
  const std::vector<Case> cases = {
      {"relu", B::ReluBackward, ref::ReluBackward, [](double x) { return x; }, kExact},
      {"tanh", B::TanhBackward, ref::TanhBackward, ref::Tanh, kComposed},
      {"sigmoid", B::SigmoidBackward, ref::SigmoidBackward, ref::Sigmoid, kComposed},
      {"gelu_tanh", B::GeluTanhBackward, ref::GeluTanhBackward, [](double x) { return x; },
       kComposed},
      {"gelu_erf", B::GeluErfBackward, ref::GeluErfBackward, [](double x) { return x; }, kErf},
  };
  std::mt19937 rng(3);
  for (const Case& c : cases) {
    for (int64_t n : kSizes) {
      std::vector<double> x = RandomVector<double>(n, -6, 6, rng);
      const std::vector<double> g = RandomVector<double>(n, -2, 2, rng);
      for (double& xi : x) xi = c.saved(xi);
      const typename B::Buffer device_x(x), device_g(g), device_out(n * sizeof(double));
      c.kernel(DType::kF64, n, device_x.data(), device_g.data(), device_out.data());
      const std::vector<double> out = device_out.template ToHost<double>();
      for (int64_t i = 0; i < n; ++i) {
        const double want = c.reference(x[i], g[i]);
        ASSERT_TRUE(Close(out[i], want, 10 * c.tol.rtol64, 10 * c.tol.atol64 + 1e-15))
            << c.name << " n=" << n << " saved=" << x[i] << ": got " << out[i] << ", want " << want;
      }
    }
  }
}

// ---- binary ops ----

struct Layout {
  Shape shape;
  Strides a, b;
  int64_t a_span, b_span;
};

const std::vector<Layout> kLayouts = {
    {{1000}, {1}, {1}, 1000, 1000},                  // contiguous
    {{64, 33}, {33, 1}, {0, 1}, 64 * 33, 33},        // a row broadcast over rows
    {{16, 128}, {128, 1}, {0, 1}, 16 * 128, 128},    // the same in 16-byte vectors
    {{40, 96}, {96, 1}, {1, 0}, 40 * 96, 40},        // b [40, 1]: one value per row
    {{64, 33}, {33, 1}, {0, 0}, 64 * 33, 1},         // tensor-scalar
    {{33, 64}, {1, 33}, {64, 1}, 64 * 33, 64 * 33},  // a transposed
    {{2, 3, 4, 5}, {60, 20, 5, 1}, {0, 5, 0, 1}, 120, 20},
    {{}, {}, {}, 1, 1},
    {{0, 3}, {3, 1}, {3, 1}, 0, 0},
};

std::vector<unsigned char> Values(DType dtype, int64_t n, std::mt19937& rng) {
  std::vector<unsigned char> bytes(n * ItemSize(dtype));
  std::uniform_real_distribution<double> value(-50, 50);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < n; ++i) {
      // Some NaNs and repeated small integers, so that comparisons see ties.
      const double v = i % 17 == 3 ? NAN : (i % 5 == 0 ? std::round(value(rng) / 10) : value(rng));
      const T t = Convert<T>(IsFloatingPoint(kDTypeOf<T>) ? v : std::fabs(v));
      std::memcpy(&bytes[i * sizeof(T)], &t, sizeof(T));
    }
  });
  return bytes;
}

// The expected output of `op` over a layout: op applied to each pair of elements in the
// same C++ type, written contiguous as R (T itself, or bool for a comparison).
template <typename T, typename R, typename Op>
std::vector<unsigned char> Expected(const Layout& l, const void* a, const void* b, Op op) {
  std::vector<unsigned char> out(NumElements(l.shape) * sizeof(R));
  int64_t i = 0;
  for (NdIndexIterator it(l.shape); !it.done(); it.Next(), ++i) {
    const R r = op(static_cast<const T*>(a)[FlatIndex(it.index(), l.a)],
                   static_cast<const T*>(b)[FlatIndex(it.index(), l.b)]);
    std::memcpy(&out[i * sizeof(R)], &r, sizeof(R));
  }
  return out;
}

using BinaryKernel = void (*)(DType, IntSpan, StridedIn, StridedIn, void*);

// IEEE leaves the bits of a NaN that an operation makes to the hardware (x86 gives
// 0x7fc00000 or 0xffc00000, CUDA 0x7fffffff), so every float NaN is made the one quiet
// NaN before two results are compared byte for byte.
template <typename T>
std::vector<unsigned char> SameNaNs(std::vector<unsigned char> bytes) {
  if constexpr (std::is_floating_point_v<T>) {
    for (size_t at = 0; at + sizeof(T) <= bytes.size(); at += sizeof(T)) {
      T v;
      std::memcpy(&v, bytes.data() + at, sizeof(T));
      if (std::isnan(v)) {
        v = std::numeric_limits<T>::quiet_NaN();
        std::memcpy(bytes.data() + at, &v, sizeof(T));
      }
    }
  }
  return bytes;
}

// Runs `kernel` on every layout and dtype in `dtypes` against `op` (a generic lambda:
// (T a, T b) -> T, or -> bool when `comparison`).
template <typename B, typename Op>
void CheckBinary(const char* name, BinaryKernel kernel, const std::vector<DType>& dtypes,
                 bool comparison, Op op) {
  std::mt19937 rng(11);
  for (DType dtype : dtypes) {
    VisitDType(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_arithmetic_v<T>) {
        for (const Layout& l : kLayouts) {
          const std::vector<unsigned char> a = Values(dtype, std::max<int64_t>(l.a_span, 1), rng);
          const std::vector<unsigned char> b = Values(dtype, std::max<int64_t>(l.b_span, 1), rng);
          const std::vector<unsigned char> expected =
              comparison ? Expected<T, bool>(l, a.data(), b.data(), op)
                         : Expected<T, T>(l, a.data(), b.data(), op);
          const typename B::Buffer da(a), db(b), dout(expected.size());
          kernel(dtype, l.shape, {da.data(), l.a}, {db.data(), l.b}, dout.data());
          const std::vector<unsigned char> got = dout.template ToHost<unsigned char>();
          EXPECT_EQ(comparison ? got : SameNaNs<T>(got),
                    comparison ? expected : SameNaNs<T>(expected))
              << name << " " << DTypeName(dtype) << " " << ShapeToString(l.shape);
        }
      }
    });
  }
}

TYPED_TEST(ElementwiseTest, BinaryArithmeticIsTheScalarOperation) {
  using B = TypeParam;
  const std::vector<DType> all = {DType::kF32, DType::kF64, DType::kI32,
                                  DType::kI64, DType::kU8,  DType::kU16};
  const std::vector<DType> floats = {DType::kF32, DType::kF64};
  // In T, as the kernels compute: u8 + u8 is an int that wraps when cast back.
  CheckBinary<B>("add", B::Add, all, false, [](auto a, auto b) { return decltype(a)(a + b); });
  CheckBinary<B>("sub", B::Sub, all, false, [](auto a, auto b) { return decltype(a)(a - b); });
  CheckBinary<B>("mul", B::Mul, all, false, [](auto a, auto b) { return decltype(a)(a * b); });
  CheckBinary<B>("div", B::Div, floats, false, [](auto a, auto b) { return decltype(a)(a / b); });
  // NaN wins, as torch.maximum.
  CheckBinary<B>("maximum", B::Maximum, all, false,
                 [](auto a, auto b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); });
  CheckBinary<B>("minimum", B::Minimum, all, false,
                 [](auto a, auto b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); });
}

TYPED_TEST(ElementwiseTest, ComparisonsAndWhereAreTheScalarOperation) {
  using B = TypeParam;
  const std::vector<DType> dtypes = {DType::kF32, DType::kF64, DType::kI32, DType::kI64,
                                     DType::kU8,  DType::kU16, DType::kBool};
  CheckBinary<B>("eq", B::Eq, dtypes, true, [](auto a, auto b) { return a == b; });
  CheckBinary<B>("ne", B::Ne, dtypes, true, [](auto a, auto b) { return a != b; });
  CheckBinary<B>("lt", B::Lt, dtypes, true, [](auto a, auto b) { return a < b; });
  CheckBinary<B>("le", B::Le, dtypes, true, [](auto a, auto b) { return a <= b; });
  CheckBinary<B>("gt", B::Gt, dtypes, true, [](auto a, auto b) { return a > b; });
  CheckBinary<B>("ge", B::Ge, dtypes, true, [](auto a, auto b) { return a >= b; });
  std::mt19937 rng(2);
  for (DType dtype : kAllDTypes) {
    for (const Layout& l : kLayouts) {
      const int64_t item = ItemSize(dtype);
      const std::vector<unsigned char> a = Values(dtype, std::max<int64_t>(l.a_span, 1), rng);
      const std::vector<unsigned char> b = Values(dtype, std::max<int64_t>(l.b_span, 1), rng);
      std::vector<unsigned char> condition(std::max<int64_t>(l.b_span, 1));
      for (unsigned char& c : condition) c = rng() % 2;
      std::vector<unsigned char> expected(NumElements(l.shape) * item);
      int64_t i = 0;
      for (NdIndexIterator it(l.shape); !it.done(); it.Next(), ++i) {
        const int64_t at_c = FlatIndex(it.index(), l.b);
        const unsigned char* from = condition[at_c] ? &a[FlatIndex(it.index(), l.a) * item]
                                                    : &b[FlatIndex(it.index(), l.b) * item];
        std::memcpy(&expected[i * item], from, item);
      }
      const typename B::Buffer dc(condition), da(a), db(b), dout(expected.size());
      B::Where(dtype, l.shape, {dc.data(), l.b}, {da.data(), l.a}, {db.data(), l.b}, dout.data());
      EXPECT_EQ(dout.template ToHost<unsigned char>(), expected) << "where " << DTypeName(dtype);
    }
  }
}

// pow is not a single IEEE operation (libm's and CUDA's powf may round differently):
// checked against pow in double.
TYPED_TEST(ElementwiseTest, PowMatchesTheReference) {
  using B = TypeParam;
  std::mt19937 rng(21);
  const int64_t n = 10000;
  const std::vector<float> a = RandomVector<float>(n, 0, 10, rng);
  const std::vector<float> b = RandomVector<float>(n, -3, 3, rng);
  const Shape shape = {n};
  const Strides strides = {1};
  const typename B::Buffer da(a), db(b), dout(n * sizeof(float));
  B::Pow(DType::kF32, shape, {da.data(), strides}, {db.data(), strides}, dout.data());
  const std::vector<float> out = dout.template ToHost<float>();
  for (int64_t i = 0; i < n; ++i) {
    const double want = std::pow(static_cast<double>(a[i]), static_cast<double>(b[i]));
    ASSERT_TRUE(Close(out[i], want, kMath.rtol32, kMath.atol32))
        << a[i] << "^" << b[i] << ": got " << out[i] << ", want " << want;
  }
}

TYPED_TEST(ElementwiseTest, WrongDTypesAreErrorsNamingTheOp) {
  using B = TypeParam;
  const Shape shape = {2};
  const Strides strides = {1};
  try {
    B::Div(DType::kI32, shape, {nullptr, strides}, {nullptr, strides}, nullptr);
    FAIL() << "integer division was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("div"), std::string::npos) << e.what();
  }
}

// ---- AdamW ----

// Five steps of torch.optim.AdamW in double, against the f32 kernel.
TYPED_TEST(ElementwiseTest, AdamWFollowsPyTorchsUpdate) {
  using B = TypeParam;
  std::mt19937 rng(8);
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{100003}}) {
    std::vector<float> p = RandomVector<float>(n, -1, 1, rng);
    std::vector<double> want_p(p.begin(), p.end()), want_m(n, 0), want_v(n, 0);
    const typename B::Buffer dp(p), dm(std::vector<float>(n, 0)), dv(std::vector<float>(n, 0));
    const double lr = 1e-2, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, wd = 0.1;
    for (int64_t step = 1; step <= 5; ++step) {
      const std::vector<float> g = RandomVector<float>(n, -1, 1, rng);
      const typename B::Buffer dg(g);
      // Odd steps read the gradient scaled, as clipping would scale it.
      const double scale = step % 2 == 1 ? 0.375 : 1.0;
      B::AdamWStep(DType::kF32, n, dp.data(), dg.data(), dm.data(), dv.data(),
                   {lr, beta1, beta2, eps, wd, step, scale});
      for (int64_t i = 0; i < n; ++i) {
        const double gi = scale * g[i];
        want_p[i] *= 1 - lr * wd;
        want_m[i] = beta1 * want_m[i] + (1 - beta1) * gi;
        want_v[i] = beta2 * want_v[i] + (1 - beta2) * gi * gi;
        const double denom = std::sqrt(want_v[i]) / std::sqrt(1 - std::pow(beta2, step)) + eps;
        want_p[i] -= lr / (1 - std::pow(beta1, step)) * want_m[i] / denom;
      }
    }
    const std::vector<float> got_p = dp.template ToHost<float>();
    const std::vector<float> got_m = dm.template ToHost<float>();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(got_p[i], want_p[i], 2e-6 + 1e-5 * std::fabs(want_p[i])) << "p[" << i << "]";
      ASSERT_NEAR(got_m[i], want_m[i], 1e-6 * std::fabs(want_m[i]) + 1e-7) << "m[" << i << "]";
    }
  }
}

}  // namespace
}  // namespace ember::kernels::cuda
