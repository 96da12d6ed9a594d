// Reductions on every compiled SIMD target against long-double references.

#include "kernels/reduce.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/reference/reduce.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

namespace ref = ::ember::kernels::reference;

const std::vector<int64_t> kLengths = {1, 2, 7, 8, 9, 31, 64, 511, 512, 513, 1000, 5000, 50257};

template <typename T>
std::vector<T> Matrix(int64_t rows, int64_t ld, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(-3, 5);
  std::vector<T> x(rows * ld);
  for (T& v : x) v = static_cast<T>(dist(rng));
  return x;
}

template <typename T>
void CheckRows(const std::string& target, std::mt19937& rng) {
  const double eps = std::is_same_v<T, float> ? 0x1p-24 : 0x1p-53;
  for (int64_t n : kLengths) {
    const int64_t rows = 3, ld = n + 5;  // padded rows
    std::vector<T> x = Matrix<T>(rows, ld, rng);
    if (n > 3) x[ld + n / 2] = NAN;  // row 1 has a NaN
    std::vector<T> sum(rows), max(rows), min(rows), var(rows);
    std::vector<int64_t> argmax(rows);
    SumRows(kDTypeOf<T>, rows, n, x.data(), ld, sum.data());
    MaxRows(kDTypeOf<T>, rows, n, x.data(), ld, max.data());
    MinRows(kDTypeOf<T>, rows, n, x.data(), ld, min.data());
    ArgMaxRows(kDTypeOf<T>, rows, n, x.data(), ld, argmax.data());
    VarRows(kDTypeOf<T>, rows, n, x.data(), ld, 1, var.data());
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x.data() + r * ld;
      const std::string where = std::string(DTypeName(kDTypeOf<T>)) + " on " + target +
                                ", n=" + std::to_string(n) + ", row " + std::to_string(r);
      if (r == 1 && n > 3) {
        EXPECT_TRUE(std::isnan(sum[r]) && std::isnan(max[r]) && std::isnan(min[r])) << where;
        EXPECT_EQ(argmax[r], n / 2) << where;
        continue;
      }
      // Pairwise: per-lane runs of at most kSumBlock / 2 adds, then a log-depth tree.
      const double bound = (kSumBlock / 2 + 64) * eps * static_cast<double>(ref::AbsSum(row, n));
      EXPECT_NEAR(sum[r], static_cast<double>(ref::Sum(row, n)), bound) << where;
      EXPECT_EQ(max[r], ref::Max(row, n)) << where;
      EXPECT_EQ(min[r], ref::Min(row, n)) << where;
      EXPECT_EQ(argmax[r], ref::ArgMax(row, n)) << where;
      if (n > 1) {
        const double want = static_cast<double>(ref::Var(row, n, 1));
        // Accumulated in double: f32 rounds once at the end; f64 sums n terms.
        const double var_bound = std::is_same_v<T, float> ? 4 * eps * want : (n + 4) * eps * want;
        EXPECT_NEAR(var[r], want, var_bound) << where;
      }
    }
  }
}

TEST(ReduceTest, RowsMatchTheReferenceOnEveryTarget) {
  std::mt19937 rng(12);
  ForEachTarget([&](const std::string& target) {
    CheckRows<float>(target, rng);
    CheckRows<double>(target, rng);
  });
}

TEST(ReduceTest, SumOfSquaresMatchesTheReferenceAtAnyThreadCount) {
  std::mt19937 rng(13);
  ForEachTarget([&](const std::string& target) {
    for (int64_t n :
         {int64_t{0}, int64_t{1}, int64_t{9}, int64_t{513}, int64_t{50257}, int64_t{300001}}) {
      const std::vector<float> x = Matrix<float>(1, n, rng);
      const std::vector<double> y = Matrix<double>(1, n, rng);
      // Squares summed in the input type within blocks of kSumBlock, then in double.
      const double want_f32 = static_cast<double>(ref::SumSquares(x.data(), n));
      EXPECT_NEAR(SumSquares(DType::kF32, n, x.data()), want_f32, kSumBlock * 0x1p-24 * want_f32)
          << target << " " << n;
      const double want_f64 = static_cast<double>(ref::SumSquares(y.data(), n));
      EXPECT_NEAR(SumSquares(DType::kF64, n, y.data()), want_f64, (n + 4) * 0x1p-53 * want_f64)
          << target << " " << n;
      const int before = NumThreads();
      SetNumThreads(1);
      const double one = SumSquares(DType::kF32, n, x.data());
      SetNumThreads(3);
      EXPECT_EQ(SumSquares(DType::kF32, n, x.data()), one) << target << " " << n;
      SetNumThreads(before);
    }
  });
  int32_t i = 1;
  EXPECT_THROW(SumSquares(DType::kI32, 1, &i), Error);
}

TEST(ReduceTest, ColumnsMatchTheReference) {
  std::mt19937 rng(13);
  ForEachTarget([&](const std::string& target) {
    for (int64_t n : {0, 1, 2, 16, 17, 100, 1000}) {
      for (int64_t cols : {1, 7, 8, 33, 768}) {
        const int64_t ld = cols + 3;
        const std::vector<float> x = Matrix<float>(std::max<int64_t>(n, 1), ld, rng);
        std::vector<float> out(cols, -1);
        SumColumns(DType::kF32, n, cols, x.data(), ld, out.data());
        for (int64_t c = 0; c < cols; ++c) {
          long double want = 0, scale = 0;
          for (int64_t i = 0; i < n; ++i) {
            want += x[i * ld + c];
            scale += std::fabs(x[i * ld + c]);
          }
          ASSERT_NEAR(out[c], static_cast<double>(want), 40 * 0x1p-24 * static_cast<double>(scale))
              << target << " n=" << n << " cols=" << cols << " column " << c;
        }
      }
    }
  });
}

TEST(ReduceTest, LongSumsStayAccurate) {
  // Ten million times 0.1f: a running f32 sum drifts to about 1.09e6; pairwise
  // summation stays within a few ulps of the exact 10,000,000 * 0.1f.
  const int64_t n = 10'000'000;
  std::vector<float> x(n, 0.1f);
  float sum = 0;
  SumRows(DType::kF32, 1, n, x.data(), n, &sum);
  const double exact = n * static_cast<double>(0.1f);
  EXPECT_NEAR(sum, exact, exact * 1e-6);
  std::vector<float> columns(2);
  std::vector<float> tall(2 * n, 0.1f);
  SumColumns(DType::kF32, n, 2, tall.data(), 2, columns.data());
  EXPECT_NEAR(columns[0], exact, exact * 1e-6);
}

TEST(ReduceTest, EmptyRowsAndBadDTypes) {
  float out = -1;
  SumRows(DType::kF32, 1, 0, nullptr, 0, &out);
  EXPECT_EQ(out, 0.0f);
  EXPECT_THROW(MaxRows(DType::kF32, 1, 0, nullptr, 0, &out), Error);
  int32_t i = 0;
  EXPECT_THROW(SumRows(DType::kI32, 1, 1, &i, 1, &i), Error);
}

}  // namespace
}  // namespace ember::kernels::cpu
