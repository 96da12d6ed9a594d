// Causal attention forward and backward: one table of cases on every CPU SIMD target
// this machine has and on CUDA (kernels/cuda/internal/backends.h), against the float64
// reference (kernels/reference/attention.h; the backward through softmax's full
// Jacobian), in f32 and f64. The CUDA half skips, saying why, without a GPU.

#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/cuda/runtime.h"
#include "kernels/philox.h"
#include "kernels/reference/attention.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

namespace ref = ::ember::kernels::reference;

// capacity > tk: the forward reads K and V as the first tk rows of heads of `capacity`
// rows (a key/value cache read in place), the rows past tk NaN.
struct Shape {
  int64_t batch, tq, tk, d, capacity = 0;
  int64_t kv_stride() const { return std::max(tk, capacity) * d; }
};

// One position; one generated token against a cache of earlier keys (tq < tk); odd
// widths (no vector's); blocks of the CPU's 48 query rows and their edges; rows past a
// CUDA block. d = 32 and 64 fill the CUDA kernels' head width, whose tiles are copied
// as 16-byte vectors (cp.async); the others element by element. Caches longer than the
// keys, read in place, for one and for several queries.
const std::vector<Shape> kShapes = {{2, 1, 1, 1},      {2, 1, 1, 4},          {3, 5, 5, 3},
                                    {2, 7, 12, 8},     {2, 1, 40, 64},        {3, 1, 300, 16},
                                    {2, 50, 50, 16},   {2, 60, 70, 33},       {1, 97, 130, 33},
                                    {2, 128, 128, 32}, {4, 300, 300, 8},      {2, 200, 330, 64},
                                    {1, 129, 129, 32}, {3, 1, 40, 64, 100},   {2, 1, 17, 33, 18},
                                    {2, 7, 12, 8, 64}, {2, 70, 130, 64, 1024}};

// x's heads of `rows` rows of d, as heads of `capacity` rows, the rest NaN.
template <typename T>
std::vector<T> InCache(const std::vector<T>& x, int64_t rows, int64_t d, int64_t capacity) {
  const int64_t heads = static_cast<int64_t>(x.size()) / (rows * d);
  std::vector<T> cache(heads * capacity * d, Convert<T>(std::numeric_limits<double>::quiet_NaN()));
  for (int64_t b = 0; b < heads; ++b) {
    std::copy(x.begin() + b * rows * d, x.begin() + (b + 1) * rows * d,
              cache.begin() + b * capacity * d);
  }
  return cache;
}

template <typename T>
struct Outputs {
  std::vector<T> q, k, v, dy, y, lse, dq, dk, dv;
};

// q and k uniform in [-spread, spread], v and dy in [-1, 1]; forward and backward.
template <typename B, typename T>
Outputs<T> Attend(const Shape& s, double spread, std::mt19937& rng,
                  const AttentionDropout& dropout = {}) {
  Outputs<T> r;
  r.q = RandomVector<T>(s.batch * s.tq * s.d, -spread, spread, rng);
  r.k = RandomVector<T>(s.batch * s.tk * s.d, -spread, spread, rng);
  r.v = RandomVector<T>(s.batch * s.tk * s.d, -1, 1, rng);
  r.dy = RandomVector<T>(s.batch * s.tq * s.d, -1, 1, rng);
  const int64_t q_bytes = r.q.size() * sizeof(T), k_bytes = r.k.size() * sizeof(T);
  const typename B::Buffer q(r.q), k(r.k), v(r.v), dy(r.dy), y(q_bytes),
      lse(s.batch * s.tq * sizeof(T)), dq(q_bytes), dk(k_bytes), dv(k_bytes),
      k_cache(InCache(r.k, s.tk, s.d, s.kv_stride() / s.d)),
      v_cache(InCache(r.v, s.tk, s.d, s.kv_stride() / s.d));
  B::CausalAttentionForward(kDTypeOf<T>, s.batch, s.tq, s.tk, s.d, q.data(), k_cache.data(),
                            v_cache.data(), s.kv_stride(), y.data(), lse.data(), dropout);
  B::CausalAttentionBackward(kDTypeOf<T>, s.batch, s.tq, s.tk, s.d, q.data(), k.data(), v.data(),
                             y.data(), lse.data(), dy.data(), dq.data(), dk.data(), dv.data(),
                             dropout);
  r.y = y.template ToHost<T>();
  r.lse = lse.template ToHost<T>();
  r.dq = dq.template ToHost<T>();
  r.dk = dk.template ToHost<T>();
  r.dv = dv.template ToHost<T>();
  return r;
}

// The largest |got - want| / (1 + |want|) of y and of dq, for the TF32 case.
struct Errors {
  double y = 0, dq = 0;
};

// Head b's dropout mask [tq, tk] from attention.h's definition (Philox words read here,
// not through the kernels): 0 or 1 / (1 - p).
std::vector<double> MaskOf(const AttentionDropout& dropout, const Shape& s, int64_t b) {
  std::vector<double> mask(s.tq * s.tk);
  PhiloxStream stream(dropout.seed);
  for (int64_t i = 0; i < s.tq * s.tk; ++i) {
    const uint32_t word = stream.Word(dropout.offset + static_cast<uint64_t>(b * s.tq * s.tk + i));
    mask[i] = (word >> 8) * 0x1p-24 >= dropout.p ? 1 / (1 - dropout.p) : 0.0;
  }
  return mask;
}

template <typename B, typename T>
Errors Check(const std::string& path, const Shape& s, double spread, double tol, std::mt19937& rng,
             const AttentionDropout& dropout = {}) {
  const Outputs<T> r = Attend<B, T>(s, spread, rng, dropout);
  Errors errors;
  for (int64_t b = 0; b < s.batch; ++b) {
    auto head = [&](const std::vector<T>& x, int64_t t) {
      return std::vector<double>(x.begin() + b * t * s.d, x.begin() + (b + 1) * t * s.d);
    };
    const ref::AttentionHead h{s.tq, s.tk, s.d, head(r.q, s.tq), head(r.k, s.tk), head(r.v, s.tk)};
    const std::vector<double> mask = MaskOf(dropout, s, b);
    const ref::AttentionOutput want =
        ref::CausalAttention(h, head(r.dy, s.tq), dropout.p > 0 ? &mask : nullptr);
    const std::string where = std::string(DTypeName(kDTypeOf<T>)) + " on " + path +
                              ", tq=" + std::to_string(s.tq) + " tk=" + std::to_string(s.tk) +
                              " d=" + std::to_string(s.d) + ", head " + std::to_string(b);
    auto expect_near = [&](const char* name, const std::vector<T>& got, int64_t offset,
                           const std::vector<double>& expected, double* largest) {
      for (size_t i = 0; i < expected.size(); ++i) {
        const double error =
            std::fabs(got[offset + i] - expected[i]) / (1 + std::fabs(expected[i]));
        if (largest != nullptr) *largest = std::max(*largest, error);
        ASSERT_LE(error, tol) << where << " " << name << "[" << i << "]: got " << got[offset + i]
                              << ", want " << expected[i];
      }
    };
    expect_near("y", r.y, b * s.tq * s.d, want.y, &errors.y);
    expect_near("lse", r.lse, b * s.tq, want.lse, nullptr);
    expect_near("dq", r.dq, b * s.tq * s.d, want.dq, &errors.dq);
    expect_near("dk", r.dk, b * s.tk * s.d, want.dk, nullptr);
    expect_near("dv", r.dv, b * s.tk * s.d, want.dv, nullptr);
  }
  return errors;
}

EMBER_BACKEND_TEST_SUITE(CausalAttentionTest);

TYPED_TEST(CausalAttentionTest, MatchesTheReference) {
  std::mt19937 rng(51);
  cuda::internal::ForEachPathAndFloat<TypeParam>([&](const std::string& path, auto type) {
    using T = decltype(type);
    const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
    for (const Shape& s : kShapes) Check<TypeParam, T>(path, s, 1.0, tol, rng);
  });
}

// Dropout on the weights: every path against the reference with the mask attention.h
// defines (so the CPU and CUDA draw the same one), p = 0.3 and, dropping all, 1.
TYPED_TEST(CausalAttentionTest, DropoutMatchesTheReferenceWithItsMask) {
  std::mt19937 rng(53);
  cuda::internal::ForEachPathAndFloat<TypeParam>([&](const std::string& path, auto type) {
    using T = decltype(type);
    const double tol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
    for (const Shape& s : {Shape{2, 7, 12, 8}, Shape{2, 60, 70, 33}, Shape{2, 128, 128, 32}}) {
      Check<TypeParam, T>(path, s, 1.0, tol, rng, {0.3, 1234, 77});
    }
    Check<TypeParam, T>(path, {2, 5, 5, 4}, 1.0, tol, rng, {1.0, 9, 0});
  });
}

TYPED_TEST(CausalAttentionTest, LargeScoresStayAccurate) {
  // Scores in the hundreds: softmax must subtract each row's maximum (exp(300)
  // overflows float), and the backward's exp(S - lse) must not overflow either.
  std::mt19937 rng(52);
  const std::string path = TypeParam::kName;
  Check<TypeParam, float>(path, {2, 20, 20, 16}, 6.0, 2e-5, rng);
  Check<TypeParam, double>(path, {2, 20, 20, 16}, 6.0, 1e-12, rng);
}

// f32 heads of d = 64 under SetAllowTf32 run forward and backward on tensor cores:
// within TF32's rounding (inputs to 10-bit mantissas; 1e-2 is far below what a wrong
// tile or mask gives) and measurably off f32's result.
TEST(CausalAttentionCudaTest, OnTensorCoresIsWithinTf32sRounding) {
  using B = cuda::internal::CudaBackend;
  if (const std::string why = B::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  std::mt19937 rng(12);
  Errors largest;
  cuda::SetAllowTf32(true);
  for (const Shape& s : std::vector<Shape>{{2, 200, 330, 64},
                                           {1, 129, 129, 64},
                                           {3, 1, 300, 64},
                                           {1, 64, 64, 64},
                                           {2, 9, 300, 64, 512}}) {
    const Errors e = Check<B, float>("Cuda TF32", s, 1.0, 1e-2, rng);
    largest.y = std::max(largest.y, e.y);
    largest.dq = std::max(largest.dq, e.dq);
  }
  cuda::SetAllowTf32(false);
  EXPECT_GT(largest.y, 1e-5) << "TF32 allowed, but the forward's products are f32's";
  EXPECT_GT(largest.dq, 1e-5) << "TF32 allowed, but the backward's products are f32's";
}

// bf16 heads on the CPU (every path: the AVX512-BF16 GEMM where the CPU has it, the
// widening one elsewhere) against the float64 reference on the same bf16 values: scores
// and softmax in f32, P and dS rounded once to bf16 as the products' operands, and each
// output rounded once. Within 1% of (1 + |want|), measured at 0.4%; a wrong tile,
// mask or scale is off by far more.
TEST(CausalAttentionCpuTest, Bf16IsWithinBf16sRounding) {
  std::mt19937 rng(54);
  ForEachTarget([&](const std::string& path) {
    double worst = 0;
    for (const Shape& s : kShapes) {
      const std::vector<BFloat16> q = RandomVector<BFloat16>(s.batch * s.tq * s.d, -1, 1, rng),
                                  k = RandomVector<BFloat16>(s.batch * s.tk * s.d, -1, 1, rng),
                                  v = RandomVector<BFloat16>(s.batch * s.tk * s.d, -1, 1, rng),
                                  dy = RandomVector<BFloat16>(s.batch * s.tq * s.d, -1, 1, rng);
      std::vector<BFloat16> y(q.size()), dq(q.size()), dk(k.size()), dv(k.size());
      std::vector<float> lse(s.batch * s.tq);
      const std::vector<BFloat16> k_cache = InCache(k, s.tk, s.d, s.kv_stride() / s.d),
                                  v_cache = InCache(v, s.tk, s.d, s.kv_stride() / s.d);
      cpu::CausalAttentionForward(DType::kBF16, s.batch, s.tq, s.tk, s.d, q.data(), k_cache.data(),
                                  v_cache.data(), s.kv_stride(), y.data(), lse.data(), {});
      cpu::CausalAttentionBackward(DType::kBF16, s.batch, s.tq, s.tk, s.d, q.data(), k.data(),
                                   v.data(), y.data(), lse.data(), dy.data(), dq.data(), dk.data(),
                                   dv.data(), {});
      for (int64_t b = 0; b < s.batch; ++b) {
        auto head = [&](const std::vector<BFloat16>& x, int64_t t) {
          std::vector<double> out;
          for (int64_t i = b * t * s.d; i < (b + 1) * t * s.d; ++i) out.push_back(x[i].ToFloat());
          return out;
        };
        const ref::AttentionHead h{s.tq, s.tk, s.d, head(q, s.tq), head(k, s.tk), head(v, s.tk)};
        const ref::AttentionOutput want = ref::CausalAttention(h, head(dy, s.tq));
        const std::string where = path + ", tq=" + std::to_string(s.tq) +
                                  " tk=" + std::to_string(s.tk) + " d=" + std::to_string(s.d);
        auto expect_near = [&](const char* name, const std::vector<double>& got,
                               const std::vector<double>& expected) {
          for (size_t i = 0; i < expected.size(); ++i) {
            const double error = std::fabs(got[i] - expected[i]) / (1 + std::fabs(expected[i]));
            worst = std::max(worst, error);
            ASSERT_LE(error, 0.01) << where << " " << name << "[" << i << "]: got " << got[i]
                                   << ", want " << expected[i];
          }
        };
        expect_near("y", head(y, s.tq), want.y);
        expect_near("lse",
                    std::vector<double>(lse.begin() + b * s.tq, lse.begin() + (b + 1) * s.tq),
                    want.lse);
        expect_near("dq", head(dq, s.tq), want.dq);
        expect_near("dk", head(dk, s.tk), want.dk);
        expect_near("dv", head(dv, s.tk), want.dv);
      }
    }
    std::cout << path << ": worst bf16 error " << worst << "\n";
  });
}

TEST(CausalAttentionCpuTest, ResultsDoNotDependOnTheThreadCount) {
  using B = cuda::internal::CpuBackend;
  const Shape s{6, 100, 100, 24};
  const int threads = cpu::NumThreads();
  cpu::SetNumThreads(1);
  std::mt19937 rng1(53);
  const Outputs<float> one = Attend<B, float>(s, 1.0, rng1);
  cpu::SetNumThreads(3);
  std::mt19937 rng3(53);
  const Outputs<float> three = Attend<B, float>(s, 1.0, rng3);
  cpu::SetNumThreads(threads);
  EXPECT_EQ(one.y, three.y);
  EXPECT_EQ(one.lse, three.lse);
  EXPECT_EQ(one.dq, three.dq);
  EXPECT_EQ(one.dk, three.dk);
  EXPECT_EQ(one.dv, three.dv);
}

}  // namespace
}  // namespace ember::kernels
