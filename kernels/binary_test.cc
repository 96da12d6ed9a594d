// The binary family (arithmetic, maximum/minimum, pow, comparisons, Where): one table of
// cases on every CPU SIMD target this machine has and on CUDA
// (kernels/cuda/internal/backends.h). f32 and f64 against the float64 reference
// (kernels/reference/binary.h) with each of the CPU's row paths forced by the layout:
// both contiguous, a scalar operand, a row vector broadcast over rows, a column
// broadcast, transposed and randomly strided inputs; every dtype against the same
// scalar C++ operation in that type (one IEEE operation or a select: exact). The CUDA
// half skips, saying why, without a GPU.

#include "kernels/binary.h"

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
#include "kernels/reference/binary.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

namespace ref = ::ember::kernels::reference;
using cuda::internal::CudaBackend;

using Kernel = void (*)(DType, IntSpan, StridedIn, StridedIn, void*);

EMBER_BACKEND_TEST_SUITE(BinaryTest);

// ---- f32, f64 and bf16 against the float64 reference, on every row path ----

struct PathLayout {
  std::string name;
  Strides a, b;
};

// Strides over `shape` for each path, for operands a and b.
std::vector<PathLayout> PathLayouts(const Shape& shape, std::mt19937& rng) {
  const size_t n = shape.size();
  const Strides contiguous = ContiguousStrides(shape);
  std::vector<PathLayout> layouts = {{"contiguous", contiguous, contiguous},
                                     {"scalar b", contiguous, Strides(n, 0)},
                                     {"scalar a", Strides(n, 0), contiguous}};
  if (n >= 1) {
    Strides row(n, 0);
    row[n - 1] = 1;  // b has shape [last] and is broadcast over the rows
    layouts.push_back({"row vector b", contiguous, row});
  }
  if (n >= 2) {
    Strides column = contiguous;  // b has shape [..., m, 1]
    column[n - 1] = 0;
    for (size_t d = 0; d + 1 < n; ++d)
      column[d] = contiguous[d] / std::max<int64_t>(shape[n - 1], 1);
    layouts.push_back({"column b", contiguous, column});
    Strides transposed(n);  // a's memory is the reversed shape, row-major
    int64_t stride = 1;
    for (size_t d = 0; d < n; ++d) {
      transposed[d] = stride;
      stride *= shape[d];
    }
    layouts.push_back({"transposed a", transposed, contiguous});
  }
  Strides random_a(n), random_b(n);
  int64_t sa = 1, sb = 1;
  for (size_t d = n; d-- > 0;) {
    random_a[d] = rng() % 3 == 0 ? 0 : sa;
    random_b[d] = rng() % 3 == 0 ? 0 : sb * 2;  // every other element
    sa *= shape[d] + rng() % 2;
    sb *= shape[d];
  }
  layouts.push_back({"random strides", random_a, random_b});
  return layouts;
}

const std::vector<Shape> kShapes = {{},        {1},       {7},       {33},   {3, 5}, {4, 17},
                                    {2, 3, 9}, {65, 300}, {5, 1, 8}, {0, 4}, {3, 0}};

template <typename T>
std::vector<T> FloatValues(int64_t n, std::mt19937& rng, double lo, double hi, bool nans) {
  std::vector<T> v = RandomVector<T>(std::max<int64_t>(n, 1), lo, hi, rng);
  if (nans && v.size() > 3) v[v.size() / 2] = Convert<T>(NAN);
  return v;
}

struct ReferenceCase {
  const char* name;
  Kernel kernel;
  double (*reference)(double, double);
  double lo, hi;
  bool nans;
  double rtol32, rtol64;  // 0: the correctly rounded result (+ - * / are one IEEE operation)
};

template <typename B, typename T>
void CheckAgainstReference(const std::string& path, const ReferenceCase& c, std::mt19937& rng) {
  // bf16 computes in f32 and rounds once: exact ops are the reference rounded to bf16.
  const bool bf16 = std::is_same_v<T, BFloat16>;
  const double rtol = std::is_same_v<T, double> ? c.rtol64
                      : bf16 && c.rtol32 > 0    ? c.rtol32 + kBf16Roundoff
                                                : c.rtol32;
  for (const Shape& shape : kShapes) {
    for (const PathLayout& layout : PathLayouts(shape, rng)) {
      const std::vector<T> a =
          FloatValues<T>(SpanElements(shape, layout.a), rng, c.lo, c.hi, c.nans);
      const std::vector<T> b =
          FloatValues<T>(SpanElements(shape, layout.b), rng, c.lo, c.hi, c.nans);
      const int64_t n = std::max<int64_t>(NumElements(shape), 1);
      const typename B::Buffer da(a), db(b), dout(std::vector<T>(n, Convert<T>(-7.0)));
      c.kernel(kDTypeOf<T>, shape, {da.data(), layout.a}, {db.data(), layout.b}, dout.data());
      const std::vector<T> out = dout.template ToHost<T>();
      const std::vector<double> want =
          ref::Binary(shape, a.data(), layout.a, b.data(), layout.b, c.reference);
      for (size_t i = 0; i < want.size(); ++i) {
        const double w = Convert<double>(Convert<T>(want[i])), got = Convert<double>(out[i]);
        const bool ok = std::isnan(w)
                            ? std::isnan(got)
                            : (rtol == 0 ? got == w : std::fabs(got - w) <= rtol * std::fabs(w));
        ASSERT_TRUE(ok) << c.name << " " << DTypeName(kDTypeOf<T>) << " on " << path << ", shape "
                        << ShapeToString(shape) << ", " << layout.name << ", element " << i
                        << ": got " << got << ", want " << w;
      }
    }
  }
}

TYPED_TEST(BinaryTest, FloatOpsMatchTheReferenceOnEveryPath) {
  using B = TypeParam;
  // std::pow in the dtype itself on the CPU (2 ulp); CUDA's powf within kMath's 1e-6.
  const double pow32 = std::is_same_v<B, CudaBackend> ? 1e-6 : 2.4e-7;
  const std::vector<ReferenceCase> cases = {
      {"add", B::Add, ref::Add, -10, 10, false, 0, 0},
      {"sub", B::Sub, ref::Sub, -10, 10, false, 0, 0},
      {"mul", B::Mul, ref::Mul, -10, 10, false, 0, 0},
      {"div", B::Div, ref::Div, -10, 10, false, 0, 0},
      {"maximum", B::Maximum, ref::Maximum, -10, 10, true, 0, 0},
      {"minimum", B::Minimum, ref::Minimum, -10, 10, true, 0, 0},
      {"pow", B::Pow, ref::Pow, 0.1, 4, false, pow32, 4.5e-16},
  };
  std::mt19937 rng(99);
  cuda::internal::ForEachPathAndFloatOrBf16<B>([&](const std::string& path, auto type) {
    for (const ReferenceCase& c : cases) CheckAgainstReference<B, decltype(type)>(path, c, rng);
  });
}

// pow over negative exponents too, against pow in double.
TYPED_TEST(BinaryTest, PowMatchesTheReference) {
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
    ASSERT_LE(std::fabs(out[i] - want), 1e-6 * std::fabs(want) + 1e-37)
        << a[i] << "^" << b[i] << ": got " << out[i] << ", want " << want;
  }
}

// ---- every dtype against the scalar operation in that type ----

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
// (T a, T b) -> T, or -> bool when `comparison`), on every path of backend B.
template <typename B, typename Op>
void CheckScalarOp(const char* name, Kernel kernel, const std::vector<DType>& dtypes,
                   bool comparison, Op op) {
  std::mt19937 rng(11);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
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
                << name << " " << DTypeName(dtype) << " on " << path << ", "
                << ShapeToString(l.shape);
          }
        }
      });
    }
  });
}

TYPED_TEST(BinaryTest, ArithmeticInEveryDTypeIsTheScalarOperation) {
  using B = TypeParam;
  const std::vector<DType> all = {DType::kF32, DType::kF64, DType::kI32,
                                  DType::kI64, DType::kU8,  DType::kU16};
  const std::vector<DType> floats = {DType::kF32, DType::kF64};
  // In T, as the kernels compute: u8 + u8 is an int that wraps when cast back.
  CheckScalarOp<B>("add", B::Add, all, false, [](auto a, auto b) { return decltype(a)(a + b); });
  CheckScalarOp<B>("sub", B::Sub, all, false, [](auto a, auto b) { return decltype(a)(a - b); });
  CheckScalarOp<B>("mul", B::Mul, all, false, [](auto a, auto b) { return decltype(a)(a * b); });
  CheckScalarOp<B>("div", B::Div, floats, false, [](auto a, auto b) { return decltype(a)(a / b); });
  // NaN wins, as torch.maximum.
  CheckScalarOp<B>("maximum", B::Maximum, all, false,
                   [](auto a, auto b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); });
  CheckScalarOp<B>("minimum", B::Minimum, all, false,
                   [](auto a, auto b) { return a != a ? a : (b != b ? b : (a < b ? a : b)); });
}

TYPED_TEST(BinaryTest, ComparisonsAndWhereAreTheScalarOperation) {
  using B = TypeParam;
  const std::vector<DType> dtypes = {DType::kF32, DType::kF64, DType::kI32, DType::kI64,
                                     DType::kU8,  DType::kU16, DType::kBool};
  CheckScalarOp<B>("eq", B::Eq, dtypes, true, [](auto a, auto b) { return a == b; });
  CheckScalarOp<B>("ne", B::Ne, dtypes, true, [](auto a, auto b) { return a != b; });
  CheckScalarOp<B>("lt", B::Lt, dtypes, true, [](auto a, auto b) { return a < b; });
  CheckScalarOp<B>("le", B::Le, dtypes, true, [](auto a, auto b) { return a <= b; });
  CheckScalarOp<B>("gt", B::Gt, dtypes, true, [](auto a, auto b) { return a > b; });
  CheckScalarOp<B>("ge", B::Ge, dtypes, true, [](auto a, auto b) { return a >= b; });
  std::mt19937 rng(2);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
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
        EXPECT_EQ(dout.template ToHost<unsigned char>(), expected)
            << "where " << DTypeName(dtype) << " on " << path;
      }
    }
  });
}

TYPED_TEST(BinaryTest, WrongDTypesAreErrorsNamingTheOp) {
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

// ---- hand-derived cases ----

TEST(BinaryCpuTest, IntegerArithmeticBroadcasts) {
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6};  // [2, 3]
  const std::vector<int32_t> b = {10, 20, 30};        // [3], broadcast over rows
  std::vector<int32_t> out(6);
  cpu::Add(DType::kI32, {2, 3}, {a.data(), {3, 1}}, {b.data(), {0, 1}}, out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{11, 22, 33, 14, 25, 36}));
  cpu::Mul(DType::kI32, {2, 3}, {a.data(), {1, 2}}, {b.data(), {0, 1}}, out.data());  // a^T
  EXPECT_EQ(out, (std::vector<int32_t>{10, 60, 150, 20, 80, 180}));
  const std::vector<uint8_t> x = {250, 3}, y = {10, 5};
  std::vector<uint8_t> z(2);
  cpu::Add(DType::kU8, {2}, {x.data(), {1}}, {y.data(), {1}}, z.data());
  EXPECT_EQ(z, (std::vector<uint8_t>{4, 8}));  // wraps, as torch.uint8
}

TEST(BinaryCpuTest, ComparisonsAndMaskedFill) {
  const std::vector<float> a = {1, 5, NAN, 2};  // [2, 2]
  const std::vector<float> b = {2, 2};          // [2], broadcast
  std::vector<uint8_t> raw(4);
  bool* out = reinterpret_cast<bool*>(raw.data());
  cpu::Lt(DType::kF32, {2, 2}, {a.data(), {2, 1}}, {b.data(), {0, 1}}, out);
  EXPECT_EQ(std::vector<bool>(out, out + 4), (std::vector<bool>{true, false, false, false}));
  cpu::Ne(DType::kF32, {2, 2}, {a.data(), {2, 1}}, {b.data(), {0, 1}}, out);
  EXPECT_EQ(std::vector<bool>(out, out + 4), (std::vector<bool>{true, true, true, false}));
  cpu::Ge(DType::kF32, {2, 2}, {a.data(), {2, 1}}, {b.data(), {0, 1}}, out);
  EXPECT_EQ(std::vector<bool>(out, out + 4), (std::vector<bool>{false, true, false, true}));
  const std::vector<int64_t> i = {3, -1, 7};
  const int64_t zero = 0;
  cpu::Gt(DType::kI64, {3}, {i.data(), {1}}, {&zero, {0}}, out);
  EXPECT_EQ(std::vector<bool>(out, out + 3), (std::vector<bool>{true, false, true}));
  // Where(a > 0, a, -inf) over a [3] condition broadcast to [2, 3]: masked fill.
  const bool condition[3] = {true, false, true};
  const std::vector<double> values = {1, 2, 3, 4, 5, 6};
  const double fill = -INFINITY;
  std::vector<double> filled(6);
  cpu::Where(DType::kF64, {2, 3}, {condition, {0, 1}}, {values.data(), {3, 1}}, {&fill, {0, 0}},
             filled.data());
  EXPECT_EQ(filled, (std::vector<double>{1, -INFINITY, 3, 4, -INFINITY, 6}));
  EXPECT_THROW(cpu::Eq(DType::kBF16, {1}, {a.data(), {1}}, {a.data(), {1}}, out), Error);
}

}  // namespace
}  // namespace ember::kernels
