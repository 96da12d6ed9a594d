// The reductions (sum, max, min, argmax and variance over rows; sums down columns; the
// sum of squares): one table of cases on every CPU SIMD target this machine has and on
// CUDA (kernels/cuda/internal/backends.h), against long-double references
// (kernels/reference/reduce.h), in f32 and f64: rows of every SIMD tail, one row, many
// rows, rows shorter and longer than a CUDA block, padded rows, a row with a NaN. Each
// sum is held to two bounds: the error analysis of the CPU's pairwise sum and a
// relative bound on the summed magnitudes (the CUDA kernels sum in double). The CUDA
// half skips, saying why, without a GPU.

#include "kernels/reduce.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/reference/reduce.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

namespace ref = ::ember::kernels::reference;
using cpu::kSumBlock;

struct RowShape {
  int64_t rows, n;
};
// Every SIMD tail and pairwise block edge in 3 rows; then one row, many rows, rows of a
// CUDA block (1024) and past it, the GPT-2 vocabulary.
const std::vector<RowShape> kShapes = {{3, 1},    {3, 2},     {3, 7},     {3, 8},    {3, 9},
                                       {3, 31},   {3, 64},    {3, 511},   {3, 512},  {3, 513},
                                       {3, 1000}, {3, 5000},  {3, 50257}, {1, 1},    {1, 1000},
                                       {70, 256}, {5, 50257}, {300, 33},  {2, 1024}, {2, 1025}};

template <typename T>
constexpr double kEps = std::is_same_v<T, float> ? 0x1p-24 : 0x1p-53;
template <typename T>
constexpr double kRelative = std::is_same_v<T, float> ? 2e-6 : 1e-13;

// |got - want| within both bounds.
#define EXPECT_WITHIN(got, want, bound1, bound2, ...) \
  EXPECT_LE(std::fabs((got) - (want)), std::min((bound1), (bound2))) << __VA_ARGS__

EMBER_BACKEND_TEST_SUITE(ReduceTest);

template <typename B, typename T>
void CheckRows(const std::string& path, std::mt19937& rng) {
  constexpr double eps = kEps<T>, rel = kRelative<T>;
  for (const RowShape& s : kShapes) {
    const int64_t rows = s.rows, n = s.n, ld = n + 5;  // rows apart by more than their length
    std::vector<T> x = RandomVector<T>(rows * ld, -3, 5, rng);
    const bool nan_row = rows > 1 && n > 3;
    if (nan_row) x[ld + n / 2] = NAN;  // row 1 has a NaN
    const typename B::Buffer dx(x), sum(rows * sizeof(T)), max(rows * sizeof(T)),
        min(rows * sizeof(T)), var(rows * sizeof(T)), argmax(rows * sizeof(int64_t));
    B::SumRows(kDTypeOf<T>, rows, n, dx.data(), ld, sum.data());
    B::MaxRows(kDTypeOf<T>, rows, n, dx.data(), ld, max.data());
    B::MinRows(kDTypeOf<T>, rows, n, dx.data(), ld, min.data());
    B::ArgMaxRows(kDTypeOf<T>, rows, n, dx.data(), ld, argmax.template as<int64_t>());
    B::VarRows(kDTypeOf<T>, rows, n, dx.data(), ld, 1, var.data());
    const std::vector<T> got_sum = sum.template ToHost<T>(), got_max = max.template ToHost<T>(),
                         got_min = min.template ToHost<T>(), got_var = var.template ToHost<T>();
    const std::vector<int64_t> got_argmax = argmax.template ToHost<int64_t>();
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x.data() + r * ld;
      const std::string where = std::string(DTypeName(kDTypeOf<T>)) + " on " + path + ", [" +
                                std::to_string(rows) + ", " + std::to_string(n) + "], row " +
                                std::to_string(r);
      if (r == 1 && nan_row) {  // NaN wins, as in PyTorch
        EXPECT_TRUE(std::isnan(got_sum[r]) && std::isnan(got_max[r]) && std::isnan(got_min[r]))
            << where;
        EXPECT_EQ(got_argmax[r], n / 2) << where;
        continue;
      }
      // Pairwise: per-lane runs of at most kSumBlock / 2 adds, then a log-depth tree.
      const double abs_sum = static_cast<double>(ref::AbsSum(row, n));
      const double want_sum = static_cast<double>(ref::Sum(row, n));
      EXPECT_WITHIN(got_sum[r], want_sum, (kSumBlock / 2 + 64) * eps * abs_sum,
                    rel * (std::fabs(want_sum) + abs_sum), where << " sum");
      EXPECT_EQ(got_max[r], ref::Max(row, n)) << where;
      EXPECT_EQ(got_min[r], ref::Min(row, n)) << where;
      EXPECT_EQ(got_argmax[r], ref::ArgMax(row, n)) << where;
      if (n > 1) {
        const double want = static_cast<double>(ref::Var(row, n, 1));
        // Accumulated in double: f32 rounds once at the end; f64 sums n terms.
        const double var_bound = std::is_same_v<T, float> ? 4 * eps * want : (n + 4) * eps * want;
        EXPECT_WITHIN(got_var[r], want, var_bound, rel * want, where << " var");
      }
    }
  }
}

TYPED_TEST(ReduceTest, RowsMatchTheReference) {
  std::mt19937 rng(12);
  cuda::internal::ForEachPathAndFloat<TypeParam>(
      [&](const std::string& path, auto type) { CheckRows<TypeParam, decltype(type)>(path, rng); });
}

TYPED_TEST(ReduceTest, NaNWinsMaxAndArgMaxAsInPyTorch) {
  using B = TypeParam;
  const std::vector<float> x = {1, 5, NAN, 5, NAN, 2};
  const typename B::Buffer dx(x), max(sizeof(float)), argmax(sizeof(int64_t));
  B::MaxRows(DType::kF32, 1, 6, dx.data(), 6, max.data());
  B::ArgMaxRows(DType::kF32, 1, 6, dx.data(), 6, argmax.template as<int64_t>());
  EXPECT_TRUE(std::isnan(max.template ToHost<float>()[0]));
  EXPECT_EQ(argmax.template ToHost<int64_t>()[0], 2);
}

template <typename B, typename T>
void CheckColumns(const std::string& path, int64_t n, int64_t cols, std::mt19937& rng) {
  const int64_t ld = cols + 3;
  const std::vector<T> x = RandomVector<T>(std::max<int64_t>(n, 1) * ld, -10, 10, rng);
  const typename B::Buffer dx(x), out(std::vector<T>(cols, T(-1)));
  B::SumColumns(kDTypeOf<T>, n, cols, dx.data(), ld, out.data());
  const std::vector<T> got = out.template ToHost<T>();
  for (int64_t c = 0; c < cols; ++c) {
    long double want = 0, scale = 0;
    for (int64_t i = 0; i < n; ++i) {
      want += x[i * ld + c];
      scale += std::fabs(x[i * ld + c]);
    }
    const double w = static_cast<double>(want), s = static_cast<double>(scale);
    const double relative = kRelative<T> * (std::fabs(w) + s);
    const double bound = std::is_same_v<T, float> ? std::min(40 * 0x1p-24 * s, relative) : relative;
    ASSERT_LE(std::fabs(got[c] - w), bound) << DTypeName(kDTypeOf<T>) << " on " << path
                                            << ", n=" << n << " cols=" << cols << " column " << c;
  }
}

TYPED_TEST(ReduceTest, ColumnsMatchTheReference) {
  std::mt19937 rng(13);
  cuda::internal::ForEachPathAndFloat<TypeParam>([&](const std::string& path, auto type) {
    using T = decltype(type);
    for (int64_t n : {0, 1, 2, 16, 17, 100, 1000}) {
      for (int64_t cols : {1, 7, 8, 33, 768}) CheckColumns<TypeParam, T>(path, n, cols, rng);
    }
    for (const RowShape& s : kShapes) CheckColumns<TypeParam, T>(path, s.rows, s.n, rng);
  });
}

TYPED_TEST(ReduceTest, SumOfSquaresMatchesTheReference) {
  using B = TypeParam;
  std::mt19937 rng(13);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    for (int64_t n :
         {int64_t{0}, int64_t{1}, int64_t{9}, int64_t{513}, int64_t{50257}, int64_t{300001}}) {
      const std::vector<float> x = RandomVector<float>(n, -3, 5, rng);
      const std::vector<double> y = RandomVector<double>(n, -3, 5, rng);
      const typename B::Buffer dx(x), dy(y), out(std::vector<double>{-1});
      auto sum_squares = [&](DType dtype, const void* data) {
        B::SumSquares(dtype, n, data, out.template as<double>());
        return out.template ToHost<double>()[0];
      };
      // The CPU squares in the input type within blocks of kSumBlock, then sums in double.
      const double want_f32 = static_cast<double>(ref::SumSquares(x.data(), n));
      EXPECT_WITHIN(sum_squares(DType::kF32, dx.data()), want_f32, kSumBlock * 0x1p-24 * want_f32,
                    kRelative<float> * want_f32, path << " f32 " << n);
      const double want_f64 = static_cast<double>(ref::SumSquares(y.data(), n));
      EXPECT_WITHIN(sum_squares(DType::kF64, dy.data()), want_f64, (n + 4) * 0x1p-53 * want_f64,
                    kRelative<double> * want_f64, path << " f64 " << n);
    }
  });
}

TEST(ReduceCpuTest, SumOfSquaresDoesNotDependOnTheThreadCount) {
  std::mt19937 rng(14);
  for (int64_t n : {int64_t{513}, int64_t{50257}, int64_t{300001}}) {
    const std::vector<float> x = RandomVector<float>(n, -3, 5, rng);
    const int before = cpu::NumThreads();
    cpu::SetNumThreads(1);
    double one = 0, three = 0;
    cpu::SumSquares(DType::kF32, n, x.data(), &one);
    cpu::SetNumThreads(3);
    cpu::SumSquares(DType::kF32, n, x.data(), &three);
    EXPECT_EQ(three, one) << n;
    cpu::SetNumThreads(before);
  }
}

TYPED_TEST(ReduceTest, LongSumsStayAccurate) {
  using B = TypeParam;
  // Ten million times 0.1f: a running f32 sum drifts to about 1.09e6; pairwise
  // summation (or a sum in double) stays within a few ulps of the exact 10,000,000 * 0.1f.
  const int64_t n = 10'000'000;
  const double exact = n * static_cast<double>(0.1f);
  const typename B::Buffer x(std::vector<float>(2 * n, 0.1f)), sum(sizeof(float)),
      columns(2 * sizeof(float));
  B::SumRows(DType::kF32, 1, n, x.data(), n, sum.data());
  EXPECT_NEAR(sum.template ToHost<float>()[0], exact, exact * 1e-6);
  B::SumColumns(DType::kF32, n, 2, x.data(), 2, columns.data());
  EXPECT_NEAR(columns.template ToHost<float>()[0], exact, exact * 1e-6);
}

TEST(ReduceCpuTest, EmptyRowsAndBadDTypes) {
  float out = -1;
  cpu::SumRows(DType::kF32, 1, 0, nullptr, 0, &out);
  EXPECT_EQ(out, 0.0f);
  EXPECT_THROW(cpu::MaxRows(DType::kF32, 1, 0, nullptr, 0, &out), Error);
  int32_t i = 0;
  EXPECT_THROW(cpu::SumRows(DType::kI32, 1, 1, &i, 1, &i), Error);
  double squares = 0;
  EXPECT_THROW(cpu::SumSquares(DType::kI32, 1, &i, &squares), Error);
}

}  // namespace
}  // namespace ember::kernels
