// Binary kernels on every compiled SIMD target against the float64 reference, with
// each row path forced by the layout: both contiguous, a scalar operand, a row
// vector broadcast over rows, a column broadcast (constant along each row), and
// transposed / padded / randomly strided inputs.

#include "kernels/binary.h"

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reference/binary.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

namespace ref = ::ember::kernels::reference;

using Kernel = std::function<void(DType, IntSpan, StridedIn, StridedIn, void*)>;

struct Layout {
  std::string name;
  Strides a, b;
};

// Strides over `shape` for each path, for operands a and b.
std::vector<Layout> Layouts(const Shape& shape, std::mt19937& rng) {
  const size_t n = shape.size();
  const Strides contiguous = ContiguousStrides(shape);
  std::vector<Layout> layouts = {{"contiguous", contiguous, contiguous},
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
std::vector<T> Values(int64_t n, std::mt19937& rng, double lo, double hi, bool nans) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(std::max<int64_t>(n, 1));
  for (T& x : v) x = static_cast<T>(dist(rng));
  if (nans && v.size() > 3) v[v.size() / 2] = NAN;
  return v;
}

// ulps: 0 demands the correctly rounded result (the ops are single IEEE operations,
// and float64 then rounding to f32 is correct rounding for + - * /).
template <typename T>
void Check(const char* name, const Kernel& kernel, double (*reference)(double, double), double lo,
           double hi, bool nans, double rtol) {
  std::mt19937 rng(99);
  ForEachTarget([&](const std::string& target) {
    for (const Shape& shape : kShapes) {
      for (const Layout& layout : Layouts(shape, rng)) {
        const std::vector<T> a = Values<T>(SpanElements(shape, layout.a), rng, lo, hi, nans);
        const std::vector<T> b = Values<T>(SpanElements(shape, layout.b), rng, lo, hi, nans);
        std::vector<T> out(std::max<int64_t>(NumElements(shape), 1), T(-7));
        kernel(kDTypeOf<T>, shape, {a.data(), layout.a}, {b.data(), layout.b}, out.data());
        const std::vector<double> want =
            ref::Binary(shape, a.data(), layout.a, b.data(), layout.b, reference);
        for (size_t i = 0; i < want.size(); ++i) {
          const double w = static_cast<T>(want[i]);
          const bool ok =
              std::isnan(w)
                  ? std::isnan(out[i])
                  : (rtol == 0 ? out[i] == w : std::fabs(out[i] - w) <= rtol * std::fabs(w));
          ASSERT_TRUE(ok) << name << " " << DTypeName(kDTypeOf<T>) << " on " << target << ", shape "
                          << ShapeToString(shape) << ", " << layout.name << ", element " << i
                          << ": got " << out[i] << ", want " << w;
        }
      }
    }
  });
}

#define CHECK_BINARY(Name, lo, hi, nans, rtol32, rtol64)         \
  TEST(BinaryTest, Name) {                                       \
    Check<float>(#Name, Name, ref::Name, lo, hi, nans, rtol32);  \
    Check<double>(#Name, Name, ref::Name, lo, hi, nans, rtol64); \
  }
CHECK_BINARY(Add, -10, 10, false, 0, 0)
CHECK_BINARY(Sub, -10, 10, false, 0, 0)
CHECK_BINARY(Mul, -10, 10, false, 0, 0)
CHECK_BINARY(Div, -10, 10, false, 0, 0)
CHECK_BINARY(Maximum, -10, 10, true, 0, 0)
CHECK_BINARY(Minimum, -10, 10, true, 0, 0)
CHECK_BINARY(Pow, 0.1, 4, false, 2.4e-7, 4.5e-16)  // std::pow in the dtype itself

TEST(BinaryTest, IntegerArithmeticBroadcasts) {
  const std::vector<int32_t> a = {1, 2, 3, 4, 5, 6};  // [2, 3]
  const std::vector<int32_t> b = {10, 20, 30};        // [3], broadcast over rows
  std::vector<int32_t> out(6);
  Add(DType::kI32, {2, 3}, {a.data(), {3, 1}}, {b.data(), {0, 1}}, out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{11, 22, 33, 14, 25, 36}));
  Mul(DType::kI32, {2, 3}, {a.data(), {1, 2}}, {b.data(), {0, 1}}, out.data());  // a transposed
  EXPECT_EQ(out, (std::vector<int32_t>{10, 60, 150, 20, 80, 180}));
  const std::vector<uint8_t> x = {250, 3}, y = {10, 5};
  std::vector<uint8_t> z(2);
  Add(DType::kU8, {2}, {x.data(), {1}}, {y.data(), {1}}, z.data());
  EXPECT_EQ(z, (std::vector<uint8_t>{4, 8}));  // wraps, as torch.uint8
  EXPECT_THROW(Div(DType::kI32, {2}, {a.data(), {1}}, {b.data(), {1}}, out.data()), Error);
}

TEST(BinaryTest, ComparisonsAndWhere) {
  const std::vector<float> a = {1, 5, NAN, 2};  // [2, 2]
  const std::vector<float> b = {2, 2};          // [2], broadcast
  std::vector<uint8_t> raw(4);
  bool* out = reinterpret_cast<bool*>(raw.data());
  Lt(DType::kF32, {2, 2}, {a.data(), {2, 1}}, {b.data(), {0, 1}}, out);
  EXPECT_EQ(std::vector<bool>(out, out + 4), (std::vector<bool>{true, false, false, false}));
  Ne(DType::kF32, {2, 2}, {a.data(), {2, 1}}, {b.data(), {0, 1}}, out);
  EXPECT_EQ(std::vector<bool>(out, out + 4), (std::vector<bool>{true, true, true, false}));
  Ge(DType::kF32, {2, 2}, {a.data(), {2, 1}}, {b.data(), {0, 1}}, out);
  EXPECT_EQ(std::vector<bool>(out, out + 4), (std::vector<bool>{false, true, false, true}));
  const std::vector<int64_t> i = {3, -1, 7};
  const int64_t zero = 0;
  Gt(DType::kI64, {3}, {i.data(), {1}}, {&zero, {0}}, out);
  EXPECT_EQ(std::vector<bool>(out, out + 3), (std::vector<bool>{true, false, true}));
  // Where(a > 0, a, -inf) over a [3] condition broadcast to [2, 3]: masked fill.
  const bool condition[3] = {true, false, true};
  const std::vector<double> values = {1, 2, 3, 4, 5, 6};
  const double fill = -INFINITY;
  std::vector<double> filled(6);
  Where(DType::kF64, {2, 3}, {condition, {0, 1}}, {values.data(), {3, 1}}, {&fill, {0, 0}},
        filled.data());
  EXPECT_EQ(filled, (std::vector<double>{1, -INFINITY, 3, 4, -INFINITY, 6}));
  EXPECT_THROW(Eq(DType::kBF16, {1}, {a.data(), {1}}, {a.data(), {1}}, out), Error);
}

}  // namespace
}  // namespace ember::kernels::cpu
