// Gemm and GemmBatched: one table of cases on every CPU SIMD target this machine has and
// on CUDA (kernels/cuda/internal/backends.h), against the float64 triple loop of
// kernels/reference/matmul.h, in f32 and f64: edge sizes around the CPU's register tile
// and cache blocks, k = 0, the three layouts a Linear uses (A B, A B^T, A^T B), padded
// rows, an operand read every other element (which cuBLAS cannot take directly),
// accumulating and not; batches strided and scattered. Every result is held to the
// classic bound for a sum of k rounded products, whatever its order. The CUDA half
// skips, saying why, without a GPU.

#include "kernels/matmul.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/internal/fp_mode.h"
#include "kernels/cpu/internal/gemm_bf16.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/cuda/runtime.h"
#include "kernels/reference/matmul.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

namespace ref = ::ember::kernels::reference;

// How an operand of rows x cols lies in memory.
enum class Form { kRowMajor, kTransposed, kEveryOther };

struct Layout {
  int64_t row_stride, col_stride, span;
};

// `pad` extra elements per stored row.
Layout LayoutOf(Form form, int64_t rows, int64_t cols, int64_t pad) {
  switch (form) {
    case Form::kRowMajor:
      return {cols + pad, 1, rows * (cols + pad)};
    case Form::kTransposed:  // stored [cols, rows]
      return {1, rows + pad, cols * (rows + pad)};
    case Form::kEveryOther:
      return {2 * cols, 2, 2 * rows * cols};
  }
  return {};
}

struct Case {
  int64_t m, k, n;
  Form a, b;
  int64_t pad;  // extra elements per row of each operand's memory, C's too
};

std::string Describe(const Case& c) {
  const char* forms[] = {"row-major", "transposed", "every other"};
  return std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) + ", A " +
         forms[static_cast<int>(c.a)] + ", B " + forms[static_cast<int>(c.b)] + ", pad " +
         std::to_string(c.pad);
}

template <typename T>
constexpr double kEps = std::is_same_v<T, float> ? 0x1p-24 : 0x1p-53;

// With `bias`, GemmBias: C = A B + bias (a random [n]) instead of Gemm.
template <typename B, typename T>
void CheckGemm(const std::string& path, const Case& c, bool accumulate, std::mt19937& rng,
               bool bias = false) {
  const Layout la = LayoutOf(c.a, c.m, c.k, c.pad), lb = LayoutOf(c.b, c.k, c.n, c.pad);
  const int64_t ldc = c.n + c.pad;
  const std::vector<T> a = RandomVector<T>(std::max<int64_t>(la.span, 1), -1, 1, rng);
  const std::vector<T> b = RandomVector<T>(std::max<int64_t>(lb.span, 1), -1, 1, rng);
  const std::vector<T> before = RandomVector<T>(std::max<int64_t>(c.m * ldc, 1), -1, 1, rng);
  const std::vector<T> bias_values = RandomVector<T>(std::max<int64_t>(c.n, 1), -1, 1, rng);
  const typename B::Buffer da(a), db(b), dc(before), dbias(bias_values);
  if (bias) {
    B::GemmBias(kDTypeOf<T>, c.m, c.k, c.n, {da.data(), la.row_stride, la.col_stride},
                {db.data(), lb.row_stride, lb.col_stride}, dbias.data(), dc.data(), ldc);
  } else {
    B::Gemm(kDTypeOf<T>, c.m, c.k, c.n, {da.data(), la.row_stride, la.col_stride},
            {db.data(), lb.row_stride, lb.col_stride}, dc.data(), ldc, accumulate);
  }
  const std::vector<T> out = dc.template ToHost<T>();
  std::vector<double> scale;
  const std::vector<double> want =
      ref::Matmul(c.m, c.k, c.n, a.data(), la.row_stride, la.col_stride, b.data(), lb.row_stride,
                  lb.col_stride, &scale);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const double got = out[i * ldc + j];
      if (j >= c.n) {  // padding is never written
        ASSERT_EQ(got, before[i * ldc + j]) << path << ": " << Describe(c);
        continue;
      }
      const double initial = bias         ? static_cast<double>(bias_values[j])
                             : accumulate ? static_cast<double>(before[i * ldc + j])
                                          : 0.0;
      const double expected = initial + want[i * c.n + j];
      // |error| <= (k + 2) eps (sum |a b| + |c|), for any order of the sum.
      const double bound = (c.k + 2) * kEps<T> * (scale[i * c.n + j] + std::fabs(initial)) + 1e-300;
      ASSERT_LE(std::fabs(got - expected), bound)
          << DTypeName(kDTypeOf<T>) << " on " << path << ": " << Describe(c) << " at (" << i << ", "
          << j << ")" << (accumulate ? " accumulate" : "") << (bias ? " bias" : "");
    }
  }
}

// Sizes around the CPU's register tiles and cache blocks, in mixed layouts.
std::vector<Case> EdgeCases() {
  std::vector<Case> cases;
  for (int64_t m : {1, 5, 6, 7, 13, 97, 200}) {
    for (int64_t n : {1, 15, 16, 17, 33, 70}) {
      for (int64_t k : {0, 1, 3, 255, 256, 300}) {
        cases.push_back({m, k, n, (m + n) % 2 == 0 ? Form::kTransposed : Form::kRowMajor,
                         (m + k) % 3 == 0 ? Form::kTransposed : Form::kRowMajor, (n + k) % 2});
      }
    }
  }
  cases.push_back({9, 5, 2100, Form::kRowMajor, Form::kRowMajor, 0});  // past a packed block
  // A row-major A read in place (at most 4 panels of B), over several blocks of depth,
  // with a last sliver of 1 to 7 rows, and just past the in-place width (packed again).
  for (int64_t m : {97, 131}) {
    for (int64_t n : {70, 192, 193}) {
      cases.push_back(
          {m, 800, n, Form::kRowMajor, n % 2 == 0 ? Form::kTransposed : Form::kRowMajor, m % 3});
    }
  }
  return cases;
}

EMBER_BACKEND_TEST_SUITE(GemmTest);

TYPED_TEST(GemmTest, EdgeSizesMatchTheTripleLoop) {
  std::mt19937 rng(8);
  const std::vector<Case> cases = EdgeCases();
  cuda::internal::ForEachPath<TypeParam>([&](const std::string& path) {
    for (const Case& c : cases) {
      CheckGemm<TypeParam, float>(path, c, /*accumulate=*/false, rng);
      CheckGemm<TypeParam, double>(path, c, /*accumulate=*/c.m % 2 == 1, rng);
    }
  });
}

// C's rows padded (the padding never written), accumulating and not.
TYPED_TEST(GemmTest, EveryLayoutMatchesTheTripleLoop) {
  using F = Form;
  std::mt19937 rng(9);
  cuda::internal::ForEachPath<TypeParam>([&](const std::string& path) {
    for (const auto& [m, k, n] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 1}, {7, 13, 5}, {64, 768, 96}, {130, 65, 257}, {3, 0, 4}, {13, 300, 17}}) {
      // A Linear layer's product with its bias: x W^T + b (W stored [n, k]), any layout.
      CheckGemm<TypeParam, float>(path, {m, k, n, F::kRowMajor, F::kTransposed, 5}, false, rng,
                                  /*bias=*/true);
      CheckGemm<TypeParam, float>(path, {m, k, n, F::kEveryOther, F::kRowMajor, 0}, false, rng,
                                  /*bias=*/true);
      CheckGemm<TypeParam, double>(path, {m, k, n, F::kRowMajor, F::kTransposed, 3}, false, rng,
                                   /*bias=*/true);
      for (bool accumulate : {false, true}) {
        CheckGemm<TypeParam, float>(path, {m, k, n, F::kRowMajor, F::kRowMajor, 5}, accumulate,
                                    rng);  // A B
        CheckGemm<TypeParam, float>(path, {m, k, n, F::kRowMajor, F::kTransposed, 5}, accumulate,
                                    rng);  // A B^T
        CheckGemm<TypeParam, float>(path, {m, k, n, F::kTransposed, F::kRowMajor, 5}, accumulate,
                                    rng);  // A^T B
        CheckGemm<TypeParam, double>(path, {m, k, n, F::kTransposed, F::kTransposed, 5}, accumulate,
                                     rng);
        CheckGemm<TypeParam, double>(path, {m, k, n, F::kEveryOther, F::kRowMajor, 5}, accumulate,
                                     rng);
      }
    }
    // Accumulating over a deep product.
    CheckGemm<TypeParam, float>(path, {131, 1000, 150, F::kRowMajor, F::kRowMajor, 1},
                                /*accumulate=*/true, rng);
  });
}

TYPED_TEST(GemmTest, BatchesStridedOrScatteredMatchTheTripleLoop) {
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
        ASSERT_NEAR(got[i * m * n + e], want[e], (k + 2) * kEps<float> * abs_sum[e])
            << "batch " << i << (scattered ? " (scattered)" : " (strided)");
      }
    }
  }
}

// ---- bf16: f32 sums of bf16 products, C rounded once ----

// C (+)= A B for bf16 A, B, C laid out as `c` says, by gemm(c, a, la, b, lb, c_before, ldc,
// accumulate) (which returns C), against
// the float64 triple loop of the same bf16 values: within the f32 sum's bound plus one
// rounding of the result to bf16 (2^-8 relative).
// With `bias`, gemm adds the first n entries of c_before to every row instead (GemmBias),
// and with `product_rounded` it may round A B to bf16 before adding them (cuBLASLt's bf16
// epilogue: one more 2^-8 of |A B|).
template <typename Gemm>
void CheckBf16(const std::string& path, const Case& c, bool accumulate, std::mt19937& rng,
               const Gemm& gemm, bool bias = false, bool product_rounded = false) {
  const Layout la = LayoutOf(c.a, c.m, c.k, c.pad), lb = LayoutOf(c.b, c.k, c.n, c.pad);
  const int64_t ldc = c.n + c.pad;
  auto random = [&](int64_t n) {
    std::vector<BFloat16> v;
    for (float x : RandomVector<float>(std::max<int64_t>(n, 1), -1, 1, rng)) {
      v.push_back(BFloat16::FromFloat(x));
    }
    return v;
  };
  auto wide = [](const std::vector<BFloat16>& v) {
    std::vector<double> d;
    for (BFloat16 x : v) d.push_back(x.ToFloat());
    return d;
  };
  const std::vector<BFloat16> a = random(la.span), b = random(lb.span), before = random(c.m * ldc);
  const std::vector<BFloat16> out = gemm(c, a, la, b, lb, before, ldc, accumulate);
  std::vector<double> scale;
  const std::vector<double> wa = wide(a), wb = wide(b);
  const std::vector<double> want =
      ref::Matmul(c.m, c.k, c.n, wa.data(), la.row_stride, la.col_stride, wb.data(), lb.row_stride,
                  lb.col_stride, &scale);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const double got = out[i * ldc + j].ToFloat();
      if (j >= c.n) {  // padding is never written
        ASSERT_EQ(got, before[i * ldc + j].ToFloat()) << path << ": " << Describe(c);
        continue;
      }
      const double initial = (bias ? before[j] : before[i * ldc + j]).ToFloat();
      const double expected = (accumulate || bias ? initial : 0.0) + want[i * c.n + j];
      const double product = product_rounded ? 0x1p-8 * std::fabs(want[i * c.n + j]) : 0.0;
      const double bound = (c.k + 2) * kEps<float> * (scale[i * c.n + j] + std::fabs(initial)) +
                           0x1p-8 * std::fabs(expected) + product + 1e-30;
      ASSERT_LE(std::fabs(got - expected), bound)
          << "bf16 on " << path << ": " << Describe(c) << " at (" << i << ", " << j << ")"
          << (accumulate ? " accumulate" : "") << (bias ? " bias" : "");
    }
  }
}

// Sizes around the AVX512-BF16 tile (8 x 48) and its blocks of depth (384: odd depths
// leave a pair half empty), in every layout.
std::vector<Case> Bf16Cases() {
  std::vector<Case> cases;
  const Form forms[] = {Form::kRowMajor, Form::kTransposed, Form::kEveryOther};
  int64_t i = 0;
  for (int64_t m : {1, 7, 8, 9, 50}) {
    for (int64_t n : {1, 17, 48, 49, 100}) {
      for (int64_t k : {0, 1, 3, 64, 385}) {
        cases.push_back({m, k, n, forms[i % 3], forms[(i / 3) % 3], i % 2});
        ++i;
      }
    }
  }
  cases.push_back({131, 800, 193, Form::kRowMajor, Form::kTransposed, 0});  // x W^T
  cases.push_back({97, 800, 70, Form::kTransposed, Form::kRowMajor, 1});    // dY^T X
  // Row-major A whose depth leaves pairs past the 16-pair transposes (50 = 3 x 16 + 2).
  cases.push_back({50, 100, 49, Form::kRowMajor, Form::kRowMajor, 0});
  cases.push_back({9, 100, 48, Form::kRowMajor, Form::kTransposed, 1});
  return cases;
}

template <typename B>
std::vector<BFloat16> Bf16Gemm(const Case& c, const std::vector<BFloat16>& a, const Layout& la,
                               const std::vector<BFloat16>& b, const Layout& lb,
                               const std::vector<BFloat16>& before, int64_t ldc, bool accumulate) {
  const typename B::Buffer da(a), db(b), dc(before);
  B::Gemm(DType::kBF16, c.m, c.k, c.n, {da.data(), la.row_stride, la.col_stride},
          {db.data(), lb.row_stride, lb.col_stride}, dc.data(), ldc, accumulate);
  return dc.template ToHost<BFloat16>();
}

// GemmBias in bf16, the bias being c_before's first n entries.
template <typename B>
std::vector<BFloat16> Bf16GemmBias(const Case& c, const std::vector<BFloat16>& a, const Layout& la,
                                   const std::vector<BFloat16>& b, const Layout& lb,
                                   const std::vector<BFloat16>& before, int64_t ldc, bool) {
  const typename B::Buffer da(a), db(b), dc(before), bias(before);
  B::GemmBias(DType::kBF16, c.m, c.k, c.n, {da.data(), la.row_stride, la.col_stride},
              {db.data(), lb.row_stride, lb.col_stride}, bias.data(), dc.data(), ldc);
  return dc.template ToHost<BFloat16>();
}

TYPED_TEST(GemmTest, Bf16SumsInF32AndRoundsOnce) {
  using B = TypeParam;
  std::mt19937 rng(14);
  const std::vector<Case> cases = Bf16Cases();
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    for (size_t i = 0; i < cases.size(); ++i) {
      CheckBf16(path, cases[i], /*accumulate=*/i % 2 == 1, rng, Bf16Gemm<B>);
      if (i % 3 == 0) {
        CheckBf16(path, cases[i], /*accumulate=*/false, rng, Bf16GemmBias<B>, /*bias=*/true,
                  /*product_rounded=*/std::is_same_v<B, cuda::internal::CudaBackend>);
      }
    }
  });
}

// The AVX512-BF16 kernel itself, whatever Highway's target (the widening path is the
// other targets' in the table above).
TEST(GemmCpuTest, Bf16OnAvx512Bf16) {
  if (!cpu::internal::HasAvx512Bf16()) {
    GTEST_SKIP() << "this CPU has no avx512_bf16: its bf16 GEMM widens to f32 (checked above)";
  }
  std::mt19937 rng(15);
  const std::vector<Case> cases = Bf16Cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    CheckBf16("avx512_bf16", cases[i], /*accumulate=*/i % 2 == 0, rng,
              [](const Case& c, const std::vector<BFloat16>& a, const Layout& la,
                 const std::vector<BFloat16>& b, const Layout& lb, std::vector<BFloat16> out,
                 int64_t ldc, bool accumulate) {
                cpu::internal::GemmBf16Avx512(
                    c.m, c.k, c.n, reinterpret_cast<const uint16_t*>(a.data()), la.row_stride,
                    la.col_stride, reinterpret_cast<const uint16_t*>(b.data()), lb.row_stride,
                    lb.col_stride, out.data(), /*c_f32=*/false, ldc, accumulate);
                return out;
              });
  }
}

// bf16 operands into an f32 C (a master weight's gradient): the f32 sum's bound alone,
// with no bf16 rounding of C, on every target and CUDA.
TYPED_TEST(GemmTest, Bf16IntoF32KeepsTheF32Sums) {
  using B = TypeParam;
  std::mt19937 rng(16);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    for (const Case& c : Bf16Cases()) {
      const Layout la = LayoutOf(c.a, c.m, c.k, c.pad), lb = LayoutOf(c.b, c.k, c.n, c.pad);
      const int64_t ldc = c.n + c.pad;
      const bool accumulate = c.k % 2 == 1;
      std::vector<BFloat16> a, b;
      for (float x : RandomVector<float>(std::max<int64_t>(la.span, 1), -1, 1, rng))
        a.push_back(BFloat16::FromFloat(x));
      for (float x : RandomVector<float>(std::max<int64_t>(lb.span, 1), -1, 1, rng))
        b.push_back(BFloat16::FromFloat(x));
      const std::vector<float> before =
          RandomVector<float>(std::max<int64_t>(c.m * ldc, 1), -1, 1, rng);
      const typename B::Buffer da(a), db(b), dc(before);
      B::GemmBf16F32(c.m, c.k, c.n, {da.data(), la.row_stride, la.col_stride},
                     {db.data(), lb.row_stride, lb.col_stride}, dc.data(), ldc, accumulate);
      const std::vector<float> got = dc.template ToHost<float>();
      std::vector<double> wa, wb, scale;
      for (BFloat16 x : a) wa.push_back(x.ToFloat());
      for (BFloat16 x : b) wb.push_back(x.ToFloat());
      const std::vector<double> want =
          ref::Matmul(c.m, c.k, c.n, wa.data(), la.row_stride, la.col_stride, wb.data(),
                      lb.row_stride, lb.col_stride, &scale);
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = 0; j < ldc; ++j) {
          const double initial = before[i * ldc + j];
          if (j >= c.n) {
            ASSERT_EQ(got[i * ldc + j], initial) << path << ": " << Describe(c) << " padding";
            continue;
          }
          const double expected = (accumulate ? initial : 0.0) + want[i * c.n + j];
          ASSERT_LE(std::fabs(got[i * ldc + j] - expected),
                    (c.k + 2) * kEps<float> * (scale[i * c.n + j] + std::fabs(initial)) + 1e-30)
              << "bf16 into f32 on " << path << ": " << Describe(c) << " at (" << i << ", " << j
              << ")";
        }
      }
    }
  });
}

// SetAllowTf32: off, f32 products as above; on, products within TF32's rounding (each
// input to a 10-bit mantissa: a relative error of 2^-11 rounding, 2^-10 truncating)
// and far from f32's, so that the switch is seen to reach cuBLAS.
TEST(GemmCudaTest, Tf32IsOptInAndWithinItsRounding) {
  using B = cuda::internal::CudaBackend;
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
    cuda::SetAllowTf32(tf32);
    B::Gemm(DType::kF32, m, k, n, {da.data(), k, 1}, {db.data(), n, 1}, dc.data(), n, false);
    cuda::SetAllowTf32(false);
    const std::vector<float> got = dc.ToHost<float>();
    for (int64_t e = 0; e < m * n; ++e) {
      error[tf32] = std::max(error[tf32], std::fabs(got[e] - want[e]) / abs_sum[e]);
    }
  }
  EXPECT_FALSE(cuda::AllowTf32());
  EXPECT_LE(error[0], (k + 2) * kEps<float>);
  EXPECT_LE(error[1], 2 * 0x1p-10 + (k + 2) * kEps<float>);
  EXPECT_GT(error[1], 10 * error[0]) << "TF32 allowed, but the products are f32's";
}

// An A of more than matmul.cc's kPackedABytes (4 MiB) is packed in pieces: of 2728
// rows, as many as one block of depth (384 floats) allows, and then of whole blocks of
// depth, as many as those rows allow. 2736 x 400 floats are rows 0-2727 at depths
// [0, 384) and [384, 400), then rows 2728-2735 at once. On one thread, so that no split
// shortens A; B wider than 4 panels on every target, so that A is packed rather than read
// in place.
TEST(GemmCpuTest, PacksALargeAInPieces) {
  using B = cuda::internal::CpuBackend;
  std::mt19937 rng(10);
  const int threads = cpu::NumThreads();
  cpu::SetNumThreads(1);
  CheckGemm<B, float>("the default target", {2736, 400, 193, Form::kRowMajor, Form::kTransposed, 0},
                      /*accumulate=*/false, rng);
  CheckGemm<B, float>("the default target", {2736, 400, 193, Form::kTransposed, Form::kRowMajor, 0},
                      /*accumulate=*/true, rng);
  cpu::SetNumThreads(threads);
}

// The pool splits C by rows where A is the bigger operand to pack twice (the first
// shape, A stored transposed as a weight gradient's dY^T) or where B's few panels would
// split unevenly (the second: 4 panels of 48 columns with AVX-512 on 3 threads), and by
// columns otherwise (the third, and the unpacked few-rows path of the fourth); each
// element is one thread's sum either way.
TEST(GemmCpuTest, ResultsDoNotDependOnTheThreadCount) {
  for (auto [m, k, n, a_transposed] :
       {std::tuple<int64_t, int64_t, int64_t, bool>{600, 100, 250, true},
        {600, 100, 190, false},
        {20, 300, 1000, false},
        {3, 300, 1000, false}}) {
    std::mt19937 rng(10);
    const std::vector<float> a = RandomVector<float>(m * k, -1, 1, rng);
    const std::vector<float> b = RandomVector<float>(k * n, -1, 1, rng);
    std::vector<float> c1(m * n), c3(m * n);
    const MatrixIn ma = a_transposed ? MatrixIn{a.data(), 1, m} : MatrixIn{a.data(), k, 1};
    const int threads = cpu::NumThreads();
    cpu::SetNumThreads(1);
    cpu::Gemm(DType::kF32, m, k, n, ma, {b.data(), n, 1}, c1.data(), n, false);
    cpu::SetNumThreads(3);
    cpu::Gemm(DType::kF32, m, k, n, ma, {b.data(), n, 1}, c3.data(), n, false);
    cpu::SetNumThreads(threads);
    EXPECT_EQ(c1, c3) << m << "x" << k << "x" << n;
  }
}

// Subnormal inputs read as 0 and subnormal results are 0 (cpu/internal/fp_mode.h: on
// Intel cores each one costs a microcode assist), and the caller's mode is back
// afterwards: an A of subnormals times ones, and normals whose products fall below the
// normal range (2^-126 in f32, 2^-1022 in f64), both 0 where IEEE arithmetic gives k of
// them.
template <typename T>
void CheckFlushed(T subnormal, T tiny) {
  ASSERT_NE(std::fpclassify(subnormal), FP_NORMAL);
  ASSERT_EQ(std::fpclassify(tiny * tiny), FP_SUBNORMAL);
  const int64_t m = 40, k = 8, n = 100;
  for (auto [a_value, b_value] : {std::pair{subnormal, T(1)}, {tiny, tiny}}) {
    std::vector<T> a(m * k, a_value), b(k * n, b_value), c(m * n, T(-1));
    const uint32_t before = cpu::internal::FpMode();
    cpu::Gemm(kDTypeOf<T>, m, k, n, {a.data(), k, 1}, {b.data(), n, 1}, c.data(), n, false);
    EXPECT_EQ(cpu::internal::FpMode(), before);
    EXPECT_EQ(c, std::vector<T>(m * n, T(0))) << a_value << " x " << b_value << " gave " << c[0];
  }
}

TEST(GemmCpuTest, FlushesSubnormalsToZero) {
#if defined(__x86_64__) || defined(__i386__)
  CheckFlushed<float>(1e-39f, 1e-20f);
  CheckFlushed<double>(1e-310, 1e-160);
#else
  GTEST_SKIP() << "subnormals are flushed on x86 only";
#endif
}

TEST(GemmCpuTest, RejectsIntegerDTypes) {
  int32_t x = 1;
  EXPECT_THROW(cpu::Gemm(DType::kI32, 1, 1, 1, {&x, 1, 1}, {&x, 1, 1}, &x, 1, false), Error);
}

}  // namespace
}  // namespace ember::kernels
