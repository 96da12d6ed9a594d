// kernels/cuda's elementwise families (unary.cu, binary.cu, adamw.cu): the unary
// functions against the float64 reference with the CPU tests' tolerances; the binary
// ops, comparisons and Where against kernels/cpu bit for bit (both are single IEEE
// operations or selects) on broadcast and strided layouts in every dtype they take;
// AdamW against kernels/cpu over several steps. Skips, saying why, without a GPU.

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/adamw.h"
#include "kernels/cpu/binary.h"
#include "kernels/cpu/internal/testing.h"
#include "kernels/cuda/internal/testing.h"
#include "kernels/cuda/kernels.h"
#include "kernels/reference/unary.h"

namespace ember::kernels::cuda {
namespace {

namespace ref = ::ember::kernels::reference;
using internal::DeviceBuffer;

// |got - want| <= rtol |want| + atol, per dtype.
struct Tolerance {
  double rtol32, atol32, rtol64, atol64;
};
constexpr Tolerance kExact = {0, 0, 0, 0};
constexpr Tolerance kOneRounding = {1.2e-7, 0, 2.3e-16, 0};
constexpr Tolerance kMath = {1e-6, 1e-37, 1e-14, 1e-300};  // CUDA's exp/log/tanh: <= 2 ulp
constexpr Tolerance kComposed = {3e-6, 4e-6, 3e-14, 1e-13};
constexpr Tolerance kErf = {1.2e-7, 0, 1e-13, 1e-15};

bool Close(double got, double want, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rtol * std::fabs(want) + atol;
}

using Forward = std::function<void(DType, int64_t, const void*, void*)>;
using Backward = std::function<void(DType, int64_t, const void*, const void*, void*)>;

struct UnaryCase {
  const char* name;
  Forward kernel;
  std::function<double(double)> reference;
  double lo, hi;
  Tolerance tol;
};

const std::vector<int64_t> kSizes = {0, 1, 7, 256, 257, 100003};

template <typename T>
void CheckUnary(const UnaryCase& c) {
  const bool f32 = std::is_same_v<T, float>;
  const double rtol = f32 ? c.tol.rtol32 : c.tol.rtol64, atol = f32 ? c.tol.atol32 : c.tol.atol64;
  std::mt19937 rng(17);
  for (int64_t n : kSizes) {
    const std::vector<T> in = cpu::internal::RandomVector<T>(n, c.lo, c.hi, rng);
    const DeviceBuffer device_in(in), device_out(n * sizeof(T));
    c.kernel(kDTypeOf<T>, n, device_in.data(), device_out.data());
    const std::vector<T> out = device_out.ToHost<T>();
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

TEST(CudaUnaryTest, EveryFunctionMatchesTheReference) {
  EMBER_SKIP_WITHOUT_CUDA();
  auto pow = [](double p) {
    return [p](DType d, int64_t n, const void* in, void* out) { PowScalar(d, n, in, p, out); };
  };
  const std::vector<UnaryCase> cases = {
      {"neg", Neg, ref::Neg, -5, 5, kExact},
      {"abs", Abs, ref::Abs, -5, 5, kExact},
      {"exp", Exp, ref::Exp, -80, 80, kMath},
      {"log", Log, ref::Log, 1e-6, 1e6, kMath},
      {"sqrt", Sqrt, ref::Sqrt, 0, 1e4, kExact},
      {"rsqrt", Rsqrt, ref::Rsqrt, 1e-4, 1e4, kOneRounding},
      {"reciprocal", Reciprocal, ref::Reciprocal, 0.01, 100, kExact},
      {"square", Square, ref::Square, -100, 100, kExact},
      {"tanh", Tanh, ref::Tanh, -10, 10, kMath},
      {"sigmoid", Sigmoid, ref::Sigmoid, -30, 30, kComposed},
      {"relu", Relu, ref::Relu, -5, 5, kExact},
      {"gelu_tanh", GeluTanh, ref::GeluTanh, -8, 8, kComposed},
      {"gelu_erf", GeluErf, ref::GeluErf, -8, 8, kErf},
      {"pow 3", pow(3), [](double x) { return ref::Pow(x, 3); }, -20, 20, kComposed},
      {"pow 0.5", pow(0.5), ref::Sqrt, 0, 100, kExact},
      {"pow 1.7", pow(1.7), [](double x) { return ref::Pow(x, 1.7); }, 0, 100, kMath},
  };
  for (const UnaryCase& c : cases) {
    CheckUnary<float>(c);
    CheckUnary<double>(c);
  }
}

TEST(CudaUnaryTest, EveryBackwardMatchesTheReference) {
  EMBER_SKIP_WITHOUT_CUDA();
  struct Case {
    const char* name;
    Backward kernel;
    double (*reference)(double saved, double g);
    double (*saved)(double x);  // what the backward is given: x, or the forward's output
    Tolerance tol;
  };
  const std::vector<Case> cases = {
      {"relu", ReluBackward, ref::ReluBackward, [](double x) { return x; }, kExact},
      {"tanh", TanhBackward, ref::TanhBackward, ref::Tanh, kComposed},
      {"sigmoid", SigmoidBackward, ref::SigmoidBackward, ref::Sigmoid, kComposed},
      {"gelu_tanh", GeluTanhBackward, ref::GeluTanhBackward, [](double x) { return x; }, kComposed},
      {"gelu_erf", GeluErfBackward, ref::GeluErfBackward, [](double x) { return x; }, kErf},
  };
  std::mt19937 rng(3);
  for (const Case& c : cases) {
    for (int64_t n : kSizes) {
      std::vector<double> x = cpu::internal::RandomVector<double>(n, -6, 6, rng);
      const std::vector<double> g = cpu::internal::RandomVector<double>(n, -2, 2, rng);
      for (double& xi : x) xi = c.saved(xi);
      const DeviceBuffer device_x(x), device_g(g), device_out(n * sizeof(double));
      c.kernel(DType::kF64, n, device_x.data(), device_g.data(), device_out.data());
      const std::vector<double> out = device_out.ToHost<double>();
      for (int64_t i = 0; i < n; ++i) {
        const double want = c.reference(x[i], g[i]);
        ASSERT_TRUE(Close(out[i], want, 10 * c.tol.rtol64, 10 * c.tol.atol64 + 1e-15))
            << c.name << " n=" << n << " saved=" << x[i] << ": got " << out[i] << ", want " << want;
      }
    }
  }
}

// ---- binary ops: bit for bit against kernels/cpu ----

struct Layout {
  Shape shape;
  Strides a, b;
  int64_t a_span, b_span;
};

const std::vector<Layout> kLayouts = {
    {{1000}, {1}, {1}, 1000, 1000},                  // contiguous
    {{64, 33}, {33, 1}, {0, 1}, 64 * 33, 33},        // a row broadcast over rows
    {{64, 33}, {33, 1}, {0, 0}, 64 * 33, 1},         // tensor-scalar
    {{33, 64}, {1, 33}, {64, 1}, 64 * 33, 64 * 33},  // a transposed
    {{2, 3, 4, 5}, {60, 20, 5, 1}, {0, 5, 0, 1}, 120, 20},
    {{}, {}, {}, 1, 1},
    {{0, 3}, {3, 1}, {3, 1}, 0, 0},
};

using BinaryKernel = void (*)(DType, IntSpan, StridedIn, StridedIn, void*);

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

void CheckBinary(const char* name, BinaryKernel cpu_kernel, BinaryKernel cuda_kernel,
                 const std::vector<DType>& dtypes, DType out_dtype_or_same) {
  std::mt19937 rng(11);
  for (DType dtype : dtypes) {
    const DType out_dtype = out_dtype_or_same == DType::kBF16 ? dtype : out_dtype_or_same;
    for (const Layout& l : kLayouts) {
      const std::vector<unsigned char> a = Values(dtype, std::max<int64_t>(l.a_span, 1), rng);
      const std::vector<unsigned char> b = Values(dtype, std::max<int64_t>(l.b_span, 1), rng);
      std::vector<unsigned char> expected(NumElements(l.shape) * ItemSize(out_dtype));
      cpu_kernel(dtype, l.shape, {a.data(), l.a}, {b.data(), l.b}, expected.data());
      const DeviceBuffer da(a), db(b), dout(expected.size());
      cuda_kernel(dtype, l.shape, {da.data(), l.a}, {db.data(), l.b}, dout.data());
      EXPECT_EQ(dout.ToHost<unsigned char>(), expected)
          << name << " " << DTypeName(dtype) << " " << ShapeToString(l.shape);
    }
  }
}

TEST(CudaBinaryTest, ArithmeticMatchesTheCpuBitForBit) {
  EMBER_SKIP_WITHOUT_CUDA();
  const std::vector<DType> all = {DType::kF32, DType::kF64, DType::kI32,
                                  DType::kI64, DType::kU8,  DType::kU16};
  const std::vector<DType> floats = {DType::kF32, DType::kF64};
  constexpr DType kSame = DType::kBF16;  // (marker: the output has the input's dtype)
  CheckBinary("add", cpu::Add, Add, all, kSame);
  CheckBinary("sub", cpu::Sub, Sub, all, kSame);
  CheckBinary("mul", cpu::Mul, Mul, all, kSame);
  CheckBinary("maximum", cpu::Maximum, Maximum, all, kSame);
  CheckBinary("minimum", cpu::Minimum, Minimum, all, kSame);
  CheckBinary("div", cpu::Div, Div, floats, kSame);
}

// pow is the one binary op that is not a single IEEE operation: CUDA's powf and
// glibc's may round differently, so it is checked against pow in double.
TEST(CudaBinaryTest, PowMatchesTheReference) {
  EMBER_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(21);
  const int64_t n = 10000;
  const std::vector<float> a = cpu::internal::RandomVector<float>(n, 0, 10, rng);
  const std::vector<float> b = cpu::internal::RandomVector<float>(n, -3, 3, rng);
  const Shape shape = {n};
  const Strides strides = {1};
  const DeviceBuffer da(a), db(b), dout(n * sizeof(float));
  Pow(DType::kF32, shape, {da.data(), strides}, {db.data(), strides}, dout.data());
  const std::vector<float> out = dout.ToHost<float>();
  for (int64_t i = 0; i < n; ++i) {
    const double want = std::pow(static_cast<double>(a[i]), static_cast<double>(b[i]));
    ASSERT_TRUE(Close(out[i], want, kMath.rtol32, kMath.atol32))
        << a[i] << "^" << b[i] << ": got " << out[i] << ", want " << want;
  }
}

TEST(CudaBinaryTest, ComparisonsAndWhereMatchTheCpu) {
  EMBER_SKIP_WITHOUT_CUDA();
  const std::vector<DType> dtypes = {DType::kF32, DType::kF64, DType::kI32, DType::kI64,
                                     DType::kU8,  DType::kU16, DType::kBool};
  CheckBinary("eq", cpu::Eq, Eq, dtypes, DType::kBool);
  CheckBinary("ne", cpu::Ne, Ne, dtypes, DType::kBool);
  CheckBinary("lt", cpu::Lt, Lt, dtypes, DType::kBool);
  CheckBinary("le", cpu::Le, Le, dtypes, DType::kBool);
  CheckBinary("gt", cpu::Gt, Gt, dtypes, DType::kBool);
  CheckBinary("ge", cpu::Ge, Ge, dtypes, DType::kBool);
  std::mt19937 rng(2);
  for (DType dtype : kAllDTypes) {
    for (const Layout& l : kLayouts) {
      const std::vector<unsigned char> a = Values(dtype, std::max<int64_t>(l.a_span, 1), rng);
      const std::vector<unsigned char> b = Values(dtype, std::max<int64_t>(l.b_span, 1), rng);
      std::vector<unsigned char> condition(std::max<int64_t>(l.b_span, 1));
      for (unsigned char& c : condition) c = rng() % 2;
      std::vector<unsigned char> expected(NumElements(l.shape) * ItemSize(dtype));
      cpu::Where(dtype, l.shape, {condition.data(), l.b}, {a.data(), l.a}, {b.data(), l.b},
                 expected.data());
      const DeviceBuffer dc(condition), da(a), db(b), dout(expected.size());
      Where(dtype, l.shape, {dc.data(), l.b}, {da.data(), l.a}, {db.data(), l.b}, dout.data());
      EXPECT_EQ(dout.ToHost<unsigned char>(), expected) << "where " << DTypeName(dtype);
    }
  }
}

TEST(CudaBinaryTest, WrongDTypesAreErrorsNamingTheKernel) {
  const Shape shape = {2};
  const Strides strides = {1};
  try {
    Div(DType::kI32, shape, {nullptr, strides}, {nullptr, strides}, nullptr);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Div"), std::string::npos) << e.what();
  }
}

// ---- AdamW ----

TEST(CudaAdamWTest, FiveStepsMatchTheCpu) {
  EMBER_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(8);
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{100003}}) {
    std::vector<float> p = cpu::internal::RandomVector<float>(n, -1, 1, rng);
    std::vector<float> m(n, 0), v(n, 0);
    const DeviceBuffer dp(p), dm(m), dv(v);
    for (int64_t step = 1; step <= 5; ++step) {
      const std::vector<float> g = cpu::internal::RandomVector<float>(n, -1, 1, rng);
      const AdamWHyper hyper{1e-2, 0.9, 0.95, 1e-8, 0.1, step};
      cpu::AdamWStep(DType::kF32, n, p.data(), g.data(), m.data(), v.data(), hyper);
      const DeviceBuffer dg(g);
      AdamWStep(DType::kF32, n, dp.data(), dg.data(), dm.data(), dv.data(), hyper);
    }
    const std::vector<float> gp = dp.ToHost<float>(), gm = dm.ToHost<float>(),
                             gv = dv.ToHost<float>();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(gp[i], p[i], 1e-6 + 1e-5 * std::fabs(p[i])) << "p[" << i << "], n=" << n;
      ASSERT_NEAR(gm[i], m[i], 1e-6 * std::fabs(m[i]) + 1e-9) << "m[" << i << "]";
      ASSERT_NEAR(gv[i], v[i], 1e-6 * std::fabs(v[i]) + 1e-12) << "v[" << i << "]";
    }
  }
}

}  // namespace
}  // namespace ember::kernels::cuda
