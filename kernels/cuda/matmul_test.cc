// Gemm and GemmBatched on both backends (ember's packed GEMM; cuBLAS) against the
// float64 reference, in the three layouts a Linear uses (A B, A B^T, A^T B), with a
// strided operand that cuBLAS cannot take directly, accumulating and not, and with
// k = 0; and, on CUDA, TF32 when SetAllowTf32 allows it. The CUDA half skips, saying
// why, without a GPU.

#include "kernels/reference/matmul.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/cuda/runtime.h"
#include "kernels/testing.h"

namespace ember::kernels::cuda {
namespace {

namespace ref = ::ember::kernels::reference;

// An operand of rows x cols in a buffer: element (i, j) at i * row_stride + j * col_stride.
struct Layout {
  int64_t row_stride, col_stride, span;
};
Layout RowMajor(int64_t rows, int64_t cols) { return {cols, 1, rows * cols}; }
Layout ColMajor(int64_t rows, int64_t cols) { return {1, rows, rows * cols}; }
Layout EveryOther(int64_t rows, int64_t cols) { return {2 * cols, 2, 2 * rows * cols}; }

template <typename B, typename T>
void CheckGemm(int64_t m, int64_t k, int64_t n, Layout la, Layout lb, bool accumulate) {
  std::mt19937 rng(m * 131 + k * 7 + n);
  const std::vector<T> a = RandomVector<T>(std::max<int64_t>(la.span, 1), -1, 1, rng);
  const std::vector<T> b = RandomVector<T>(std::max<int64_t>(lb.span, 1), -1, 1, rng);
  const int64_t ldc = n + 5;
  const std::vector<T> c0 = RandomVector<T>(m * ldc, -1, 1, rng);
  const typename B::Buffer da(a), db(b), dc(c0);
  B::Gemm(kDTypeOf<T>, m, k, n, {da.data(), la.row_stride, la.col_stride},
          {db.data(), lb.row_stride, lb.col_stride}, dc.data(), ldc, accumulate);
  const std::vector<T> got = dc.template ToHost<T>();
  std::vector<double> abs_sum;
  const std::vector<double> want = ref::Matmul(m, k, n, a.data(), la.row_stride, la.col_stride,
                                               b.data(), lb.row_stride, lb.col_stride, &abs_sum);
  const double eps = std::is_same_v<T, float> ? 1.2e-7 : 2.3e-16;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double expected = want[i * n + j] + (accumulate ? c0[i * ldc + j] : 0.0);
      const double bound = 2 * (k + 2) * eps * (abs_sum[i * n + j] + std::fabs(expected)) + 1e-300;
      ASSERT_LE(std::fabs(got[i * ldc + j] - expected), bound)
          << m << "x" << k << "x" << n << " at " << i << "," << j;
    }
    for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(got[i * ldc + j], c0[i * ldc + j]) << "padding";
  }
}

EMBER_BACKEND_TEST_SUITE(MatmulTest);

TYPED_TEST(MatmulTest, EveryLayoutMatchesTheReference) {
  using B = TypeParam;
  const std::vector<std::array<int64_t, 3>> shapes = {
      {1, 1, 1}, {7, 13, 5}, {64, 768, 96}, {130, 65, 257}, {3, 0, 4}};
  for (const auto& [m, k, n] : shapes) {
    for (bool accumulate : {false, true}) {
      CheckGemm<B, float>(m, k, n, RowMajor(m, k), RowMajor(k, n), accumulate);  // A B
      CheckGemm<B, float>(m, k, n, RowMajor(m, k), ColMajor(k, n), accumulate);  // A B^T
      CheckGemm<B, float>(m, k, n, ColMajor(m, k), RowMajor(k, n), accumulate);  // A^T B
      CheckGemm<B, double>(m, k, n, ColMajor(m, k), ColMajor(k, n), accumulate);
      CheckGemm<B, double>(m, k, n, EveryOther(m, k), RowMajor(k, n), accumulate);  // copied
    }
  }
}

TYPED_TEST(MatmulTest, BatchesStridedOrScatteredMatchTheReference) {
  using B = TypeParam;
  const int64_t batches = 6, m = 17, k = 9, n = 11;
  std::mt19937 rng(12);
  const std::vector<float> a = RandomVector<float>(batches * m * k, -1, 1, rng);
  const std::vector<float> b = RandomVector<float>(batches * k * n, -1, 1, rng);
  const typename B::Buffer da(a), db(b);
  std::vector<int64_t> a_strided(batches), b_strided(batches), a_scattered(batches),
      b_scattered(batches);
  for (int64_t i = 0; i < batches; ++i) {
    a_strided[i] = i * m * k;
    b_strided[i] = i * k * n;
    a_scattered[i] = ((i * 5) % batches) * m * k;  // a permutation: one call per product
    b_scattered[i] = ((i * 5) % batches) * k * n;
  }
  for (bool scattered : {false, true}) {
    const std::vector<int64_t>& ao = scattered ? a_scattered : a_strided;
    const std::vector<int64_t>& bo = scattered ? b_scattered : b_strided;
    const typename B::Buffer dc(batches * m * n * sizeof(float));
    B::GemmBatched(DType::kF32, batches, m, k, n, {da.data(), k, 1}, ao.data(), {db.data(), n, 1},
                   bo.data(), dc.data(), n, m * n, false);
    const std::vector<float> got = dc.template ToHost<float>();
    for (int64_t i = 0; i < batches; ++i) {
      std::vector<double> abs_sum;
      const std::vector<double> want =
          ref::Matmul(m, k, n, a.data() + ao[i], k, 1, b.data() + bo[i], n, 1, &abs_sum);
      for (int64_t e = 0; e < m * n; ++e) {
        ASSERT_NEAR(got[i * m * n + e], want[e], 2 * (k + 2) * 1.2e-7 * abs_sum[e])
            << "batch " << i << (scattered ? " (scattered)" : " (strided)");
      }
    }
  }
}

// SetAllowTf32: off, f32 products as above; on, products within TF32's rounding (each
// input to a 10-bit mantissa: a relative error of 2^-11 rounding, 2^-10 truncating)
// and far from f32's, so that the switch is seen to reach cuBLAS.
TEST(MatmulTf32Test, Tf32IsOptInAndWithinItsRounding) {
  using B = internal::CudaBackend;
  if (const std::string why = B::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  const int64_t m = 128, k = 1024, n = 128;
  std::mt19937 rng(5);
  const std::vector<float> a = RandomVector<float>(m * k, -1, 1, rng);
  const std::vector<float> b = RandomVector<float>(k * n, -1, 1, rng);
  std::vector<double> abs_sum;
  const std::vector<double> want = ref::Matmul(m, k, n, a.data(), k, 1, b.data(), n, 1, &abs_sum);
  const B::Buffer da(a), db(b), dc(m * n * sizeof(float));
  double error[2] = {0, 0};  // the largest |got - want| / sum |a b|, without and with TF32
  for (bool tf32 : {false, true}) {
    SetAllowTf32(tf32);
    B::Gemm(DType::kF32, m, k, n, {da.data(), k, 1}, {db.data(), n, 1}, dc.data(), n, false);
    SetAllowTf32(false);
    const std::vector<float> got = dc.ToHost<float>();
    for (int64_t e = 0; e < m * n; ++e) {
      error[tf32] = std::max(error[tf32], std::fabs(got[e] - want[e]) / abs_sum[e]);
    }
  }
  EXPECT_FALSE(AllowTf32());
  EXPECT_LE(error[0], 2 * (k + 2) * 1.2e-7);
  EXPECT_LE(error[1], 2 * 0x1p-10 + 2 * (k + 2) * 1.2e-7);
  EXPECT_GT(error[1], 10 * error[0]) << "TF32 allowed, but the products are f32's";
}

}  // namespace
}  // namespace ember::kernels::cuda
