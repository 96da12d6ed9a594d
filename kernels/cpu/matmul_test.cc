// Gemm on every compiled SIMD target against the float64 triple loop: edge sizes
// around the register tile and cache blocks, transposed and padded operands,
// accumulation, and independence from the thread count.

#include "kernels/matmul.h"

#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/internal/fp_mode.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/reference/matmul.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

struct Case {
  int64_t m, k, n;
  bool a_transposed, b_transposed;
  int64_t pad;  // extra elements per row of each operand's memory
};

template <typename T>
void CheckGemm(const Case& c, bool accumulate, std::mt19937& rng, const std::string& target) {
  std::uniform_real_distribution<double> dist(-1, 1);
  // A is stored [m, k] row-major or, transposed, [k, m]; likewise B.
  const int64_t a_rows = c.a_transposed ? c.k : c.m, a_cols = c.a_transposed ? c.m : c.k;
  const int64_t b_rows = c.b_transposed ? c.n : c.k, b_cols = c.b_transposed ? c.k : c.n;
  const int64_t lda = a_cols + c.pad, ldb = b_cols + c.pad, ldc = c.n + c.pad;
  std::vector<T> a(std::max<int64_t>(a_rows * lda, 1)), b(std::max<int64_t>(b_rows * ldb, 1));
  for (T& v : a) v = static_cast<T>(dist(rng));
  for (T& v : b) v = static_cast<T>(dist(rng));
  std::vector<T> out(std::max<int64_t>(c.m * ldc, 1));
  for (T& v : out) v = static_cast<T>(dist(rng));
  const std::vector<T> before = out;
  const MatrixIn ma = c.a_transposed ? MatrixIn{a.data(), 1, lda} : MatrixIn{a.data(), lda, 1};
  const MatrixIn mb = c.b_transposed ? MatrixIn{b.data(), 1, ldb} : MatrixIn{b.data(), ldb, 1};
  Gemm(kDTypeOf<T>, c.m, c.k, c.n, ma, mb, out.data(), ldc, accumulate);
  std::vector<double> scale;
  const std::vector<double> want =
      reference::Matmul(c.m, c.k, c.n, static_cast<const T*>(ma.data), ma.row_stride, ma.col_stride,
                        static_cast<const T*>(mb.data), mb.row_stride, mb.col_stride, &scale);
  // The classic bound for a sum of k rounded products: |error| <= k eps sum |a b|.
  const double eps = std::is_same_v<T, float> ? 0x1p-24 : 0x1p-53;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const double got = out[i * ldc + j];
      if (j >= c.n) {  // padding is never written
        ASSERT_EQ(got, before[i * ldc + j]);
        continue;
      }
      const double initial = accumulate ? static_cast<double>(before[i * ldc + j]) : 0.0;
      const double expected = initial + want[i * c.n + j];
      const double bound = (c.k + 2) * eps * (scale[i * c.n + j] + std::fabs(initial)) + 1e-300;
      ASSERT_LE(std::fabs(got - expected), bound)
          << DTypeName(kDTypeOf<T>) << " on " << target << ": m=" << c.m << " k=" << c.k
          << " n=" << c.n << " at (" << i << ", " << j << ")" << (accumulate ? " accumulate" : "");
    }
  }
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (int64_t m : {1, 5, 6, 7, 13, 97, 200}) {
    for (int64_t n : {1, 15, 16, 17, 33, 70}) {
      for (int64_t k : {0, 1, 3, 255, 256, 300}) {
        cases.push_back({m, k, n, (m + n) % 2 == 0, (m + k) % 3 == 0, (n + k) % 2});
      }
    }
  }
  cases.push_back({9, 5, 2100, false, false, 0});  // more columns than one packed block
  // A row-major A read in place (at most 4 panels of B), over several blocks of depth,
  // with a last sliver of 1 to 7 rows, and just past the in-place width (packed again).
  for (int64_t m : {97, 131}) {
    for (int64_t n : {70, 192, 193}) cases.push_back({m, 800, n, false, n % 2 == 0, m % 3});
  }
  return cases;
}

TEST(GemmTest, MatchesTheTripleLoopOnEveryTarget) {
  std::mt19937 rng(8);
  const std::vector<Case> cases = Cases();
  ForEachTarget([&](const std::string& target) {
    for (const Case& c : cases) {
      CheckGemm<float>(c, /*accumulate=*/false, rng, target);
      CheckGemm<double>(c, /*accumulate=*/c.m % 2 == 1, rng, target);
    }
  });
}

// An A of more than matmul.cc's kPackedABytes (4 MiB) is packed in pieces: of 2728
// rows, as many as one block of depth (384 floats) allows, and then of whole blocks of
// depth, as many as those rows allow. 2736 x 400 floats are rows 0-2727 at depths
// [0, 384) and [384, 400), then rows 2728-2735 at once. On one thread, so that no split
// shortens A; B wider than 4 panels on every target, so that A is packed rather than read
// in place.
TEST(GemmTest, PacksALargeAInPieces) {
  std::mt19937 rng(10);
  const int threads = NumThreads();
  SetNumThreads(1);
  CheckGemm<float>(Case{2736, 400, 193, false, true, 0}, /*accumulate=*/false, rng,
                   "the default target");
  CheckGemm<float>(Case{2736, 400, 193, true, false, 0}, /*accumulate=*/true, rng,
                   "the default target");
  SetNumThreads(threads);
}

TEST(GemmTest, AccumulatesIntoC) {
  std::mt19937 rng(9);
  for (const Case& c : {Case{13, 300, 17, false, true, 3}, Case{7, 0, 5, false, false, 0},
                        Case{131, 1000, 150, false, false, 1}}) {
    CheckGemm<float>(c, /*accumulate=*/true, rng, "best");
  }
}

// The pool splits C by rows where A is the bigger operand to pack twice (the first
// shape, A stored transposed as a weight gradient's dY^T) or where B's few panels would
// split unevenly (the second: 4 panels of 48 columns with AVX-512 on 3 threads), and by
// columns otherwise (the third, and the unpacked few-rows path of the fourth); each
// element is one thread's sum either way.
TEST(GemmTest, ResultsDoNotDependOnTheThreadCount) {
  for (auto [m, k, n, a_transposed] :
       {std::tuple<int64_t, int64_t, int64_t, bool>{600, 100, 250, true},
        {600, 100, 190, false},
        {20, 300, 1000, false},
        {3, 300, 1000, false}}) {
    std::mt19937 rng(10);
    std::uniform_real_distribution<float> dist(-1, 1);
    std::vector<float> a(m * k), b(k * n), c1(m * n), c3(m * n);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    const MatrixIn ma = a_transposed ? MatrixIn{a.data(), 1, m} : MatrixIn{a.data(), k, 1};
    const int threads = NumThreads();
    SetNumThreads(1);
    Gemm(DType::kF32, m, k, n, ma, {b.data(), n, 1}, c1.data(), n, false);
    SetNumThreads(3);
    Gemm(DType::kF32, m, k, n, ma, {b.data(), n, 1}, c3.data(), n, false);
    SetNumThreads(threads);
    EXPECT_EQ(c1, c3) << m << "x" << k << "x" << n;
  }
}

// Subnormal inputs read as 0 and subnormal results are 0 (internal/fp_mode.h: on Intel
// cores each one costs a microcode assist), and the caller's mode is back afterwards:
// an A of subnormals times ones, and normals whose products fall below the normal range
// (2^-126 in f32, 2^-1022 in f64), both 0 where IEEE arithmetic gives k of them.
template <typename T>
void CheckFlushed(T subnormal, T tiny) {
  ASSERT_NE(std::fpclassify(subnormal), FP_NORMAL);
  ASSERT_EQ(std::fpclassify(tiny * tiny), FP_SUBNORMAL);
  const int64_t m = 40, k = 8, n = 100;
  const DType dtype = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
  for (auto [a_value, b_value] : {std::pair{subnormal, T(1)}, {tiny, tiny}}) {
    std::vector<T> a(m * k, a_value), b(k * n, b_value), c(m * n, T(-1));
    const uint32_t before = internal::FpMode();
    Gemm(dtype, m, k, n, {a.data(), k, 1}, {b.data(), n, 1}, c.data(), n, false);
    EXPECT_EQ(internal::FpMode(), before);
    EXPECT_EQ(c, std::vector<T>(m * n, T(0))) << a_value << " x " << b_value << " gave " << c[0];
  }
}

TEST(GemmTest, FlushesSubnormalsToZero) {
#if defined(__x86_64__) || defined(__i386__)
  CheckFlushed<float>(1e-39f, 1e-20f);
  CheckFlushed<double>(1e-310, 1e-160);
#else
  GTEST_SKIP() << "subnormals are flushed on x86 only";
#endif
}

TEST(GemmTest, RejectsIntegerDTypes) {
  int32_t x = 1;
  EXPECT_THROW(Gemm(DType::kI32, 1, 1, 1, {&x, 1, 1}, {&x, 1, 1}, &x, 1, false), Error);
}

}  // namespace
}  // namespace ember::kernels::cpu
