// LayerNorm forward and backward: one table of cases on every CPU SIMD target this
// machine has and on CUDA (kernels/cuda/internal/backends.h), against the float64
// reference (kernels/reference/layernorm.h; the backward against the full Jacobian).
// Rows of up to 1024 and longer ones (a warp or a block a row on CUDA), widths that are
// and are not multiples of a vector, with and without a bias, and a row with a large
// mean (where a one-pass variance would cancel).

#include "kernels/layernorm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/reference/layernorm.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

namespace ref = ::ember::kernels::reference;

struct Case {
  int64_t rows, c;
  bool bias;
};
const std::vector<Case> kCases = {{5, 1, true},    {4, 3, false},    {5, 8, true},
                                  {4, 17, false},  {5, 64, true},    {4, 768, true},
                                  {1, 1000, true}, {3, 7, false},    {70, 256, true},
                                  {2, 1024, true}, {2, 1025, false}, {300, 33, true}};

// |got - want| within both bounds the family's CPU and CUDA tables held it to: `abs`
// absolutely, and `rel` of (|want| + scale).
#define EXPECT_WITHIN(got, want, abs, rel, scale, ...)                                       \
  EXPECT_LE(std::fabs((got) - (want)), std::min((abs), (rel) * (std::fabs(want) + (scale)))) \
      << __VA_ARGS__

template <typename B, typename T>
void Check(const std::string& path, const Case& k, std::mt19937& rng) {
  const int64_t rows = k.rows, c = k.c;
  const double abs = std::is_same_v<T, float> ? 3e-5 : 1e-11;
  const double rel = std::is_same_v<T, float> ? 2e-5 : 1e-11, eps = 1e-5;
  // With one column, dx is 0 and rstd 1 / sqrt(eps): only the absolute bound, scaled.
  const double dx_rel = c > 1 ? rel : HUGE_VAL;
  std::vector<T> x = RandomVector<T>(rows * c, -2, 3, rng);
  for (int64_t j = 0; j < c; ++j) x[j] += 100;  // row 0: a large mean
  const std::vector<T> w = RandomVector<T>(c, 0.5, 1.5, rng), b = RandomVector<T>(c, -1, 1, rng);
  const std::vector<T> dy = RandomVector<T>(rows * c, -1, 1, rng);
  const typename B::Buffer bx(x), bw(w), bb(b), bdy(dy), y(rows * c * sizeof(T)),
      mean(rows * sizeof(T)), rstd(rows * sizeof(T)), dx(rows * c * sizeof(T)),
      dweight(c * sizeof(T)), dbias(c * sizeof(T));
  B::LayerNormForward(kDTypeOf<T>, rows, c, bx.data(), nullptr, bw.data(),
                      k.bias ? bb.data() : nullptr, eps, nullptr, y.data(), mean.data(),
                      rstd.data());
  B::LayerNormBackward(kDTypeOf<T>, rows, c, bx.data(), bw.data(), mean.data(), rstd.data(),
                       bdy.data(), dx.data(), dweight.data(), k.bias ? dbias.data() : nullptr);
  const std::vector<T> got_y = y.template ToHost<T>(), got_mean = mean.template ToHost<T>(),
                       got_rstd = rstd.template ToHost<T>(), got_dx = dx.template ToHost<T>(),
                       got_dw = dweight.template ToHost<T>(), got_db = dbias.template ToHost<T>();
  const std::vector<double> wd(w.begin(), w.end()), bd(b.begin(), b.end());
  std::vector<double> want_dw(c, 0.0), want_db(c, 0.0);
  const std::string where = std::string(DTypeName(kDTypeOf<T>)) + " on " + path + ", [" +
                            std::to_string(rows) + ", " + std::to_string(c) + "]";
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<double> xr(x.begin() + r * c, x.begin() + (r + 1) * c);
    const std::vector<double> dyr(dy.begin() + r * c, dy.begin() + (r + 1) * c);
    const ref::LayerNormRow f = ref::LayerNorm(xr, wd, k.bias ? bd : std::vector<double>{}, eps);
    const std::vector<double> want_dx = ref::LayerNormBackward(xr, wd, dyr, eps);
    // Row 0's inputs are near 100, so x - mean carries float32's rounding of 100
    // (7.6e-6) times rstd into y: the absolute bound alone there.
    const double y_rel = r == 0 ? HUGE_VAL : rel;
    EXPECT_LE(std::fabs(got_mean[r] - f.mean), abs * (1 + std::fabs(f.mean)))
        << where << " mean " << r;
    EXPECT_LE(std::fabs(got_rstd[r] - f.rstd), abs * f.rstd) << where << " rstd " << r;
    for (int64_t j = 0; j < c; ++j) {
      EXPECT_WITHIN(got_y[r * c + j], f.y[j], abs, y_rel, 1,
                    where << " y[" << r << ", " << j << "]");
      EXPECT_WITHIN(got_dx[r * c + j], want_dx[j], abs * f.rstd, dx_rel, 1,
                    where << " dx[" << r << ", " << j << "]");
      want_dw[j] += dyr[j] * f.xhat[j];
      want_db[j] += dyr[j];
    }
  }
  for (int64_t j = 0; j < c; ++j) {
    EXPECT_WITHIN(got_dw[j], want_dw[j], abs * rows, rel, rows, where << " dweight[" << j << "]");
    if (k.bias) {
      EXPECT_WITHIN(got_db[j], want_db[j], abs * rows, rel, rows, where << " dbias[" << j << "]");
    }
  }
}

EMBER_BACKEND_TEST_SUITE(LayerNormTest);

TYPED_TEST(LayerNormTest, ForwardAndBackwardMatchTheReference) {
  std::mt19937 rng(41);
  cuda::internal::ForEachPathAndFloat<TypeParam>([&](const std::string& path, auto type) {
    for (const Case& k : kCases) Check<TypeParam, decltype(type)>(path, k, rng);
  });
}

// bf16 x and dy, f32 parameters, against the f32 kernel on the widened rows: the
// statistics and the parameters' gradients within 8 f32 ulps of its (of the terms, for
// the sums over rows), y and dx within one
// bf16 ulp of its results rounded once (the same arithmetic; an optimising compiler may
// contract the scalar tails into FMAs differently in the two instantiations, so not bit
// for bit: the other families' tables hold the rounding itself to the bit); and y
// against the float64 reference to bf16's rounding.
TYPED_TEST(LayerNormTest, Bf16RowsAreTheF32KernelsRoundedOnce) {
  using B = TypeParam;
  std::mt19937 rng(43);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    for (const Case& k : kCases) {
      const int64_t rows = k.rows, c = k.c;
      const std::vector<BFloat16> x = RandomVector<BFloat16>(rows * c, -2, 3, rng);
      const std::vector<BFloat16> dy = RandomVector<BFloat16>(rows * c, -1, 1, rng);
      const std::vector<float> w = RandomVector<float>(c, 0.5, 1.5, rng),
                               b = RandomVector<float>(c, -1, 1, rng);
      std::vector<float> x32, dy32;
      for (const BFloat16& v : x) x32.push_back(v.ToFloat());
      for (const BFloat16& v : dy) dy32.push_back(v.ToFloat());
      // Runs both kernels in `dtype` over x and dy (of `item` bytes an element); returns
      // y and dx as bytes, and mean, rstd, dweight and dbias.
      auto run = [&](DType dtype, const auto& hx, const auto& hdy) {
        const int64_t item = sizeof(hx[0]);
        const typename B::Buffer bx(hx), bdy(hdy), bw(w), bb(b), y(rows * c * item), mean(rows * 4),
            rstd(rows * 4), dx(rows * c * item), dw(c * 4), db(c * 4);
        B::LayerNormForward(dtype, rows, c, bx.data(), nullptr, bw.data(),
                            k.bias ? bb.data() : nullptr, 1e-5, nullptr, y.data(), mean.data(),
                            rstd.data());
        B::LayerNormBackward(dtype, rows, c, bx.data(), bw.data(), mean.data(), rstd.data(),
                             bdy.data(), dx.data(), dw.data(), k.bias ? db.data() : nullptr);
        return std::vector<std::vector<char>>{
            y.template ToHost<char>(),
            dx.template ToHost<char>(),
            mean.template ToHost<char>(),
            rstd.template ToHost<char>(),
            dw.template ToHost<char>(),
            k.bias ? db.template ToHost<char>() : std::vector<char>()};
      };
      const auto got = run(DType::kBF16, x, dy);
      const auto want = run(DType::kF32, x32, dy32);
      const std::string where =
          path + ", [" + std::to_string(rows) + ", " + std::to_string(c) + "]";
      const char* names[] = {"y", "dx", "mean", "rstd", "dweight", "dbias"};
      for (size_t o = 2; o < got.size(); ++o) {
        ASSERT_EQ(got[o].size(), want[o].size());
        for (size_t i = 0; i < got[o].size() / 4; ++i) {
          float g, f;
          std::memcpy(&g, got[o].data() + 4 * i, 4);
          std::memcpy(&f, want[o].data() + 4 * i, 4);
          // The parameters' gradients are sums over the rows that can cancel: their
          // bound scales with the terms (each of size about 1), not with the sum.
          const double scale = o >= 4 ? static_cast<double>(rows) : 1.0;
          ASSERT_LE(std::fabs(g - f), 8 * 0x1p-24 * (std::fabs(f) + scale))
              << where << " " << names[o] << " " << i << ": " << g << ", f32 kernel " << f;
        }
      }
      for (size_t o = 0; o < 2; ++o) {
        for (int64_t i = 0; i < rows * c; ++i) {
          BFloat16 g;
          float f;
          std::memcpy(&g, got[o].data() + 2 * i, 2);
          std::memcpy(&f, want[o].data() + 4 * i, 4);
          const float rounded = BFloat16::FromFloat(f).ToFloat();
          ASSERT_LE(std::fabs(g.ToFloat() - rounded), 2 * kBf16Roundoff * std::fabs(rounded))
              << where << " " << names[o] << " " << i << ": " << g.ToFloat() << " from " << f;
        }
      }
      const std::vector<double> wd(w.begin(), w.end()), bd(b.begin(), b.end());
      for (int64_t r = 0; r < rows; ++r) {
        const std::vector<double> xr(x32.begin() + r * c, x32.begin() + (r + 1) * c);
        const ref::LayerNormRow f =
            ref::LayerNorm(xr, wd, k.bias ? bd : std::vector<double>{}, 1e-5);
        for (int64_t j = 0; j < c; ++j) {
          BFloat16 g;
          std::memcpy(&g, got[0].data() + 2 * (r * c + j), 2);
          ASSERT_LE(std::fabs(g.ToFloat() - f.y[j]), kBf16Roundoff * std::fabs(f.y[j]) + 3e-5)
              << where << " y[" << r << ", " << j << "]";
        }
      }
    }
  });
}

// With a residual: sum is x + residual added in the compute type and rounded once (the
// elementwise add's result, by hand here), and y, mean and rstd are bit for bit the
// kernel's on that sum alone, for every dtype and path.
TYPED_TEST(LayerNormTest, TheResidualAddIsThePlainAddThenTheLayerNorm) {
  using B = TypeParam;
  std::mt19937 rng(44);
  cuda::internal::ForEachPathAndFloatOrBf16<B>([&](const std::string& path, auto type) {
    using T = decltype(type);
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    for (const Case& k : kCases) {
      const int64_t rows = k.rows, c = k.c, n = rows * c;
      const std::vector<T> x = RandomVector<T>(n, -2, 3, rng), res = RandomVector<T>(n, -1, 1, rng);
      const std::vector<C> w = RandomVector<C>(c, 0.5, 1.5, rng),
                           b = RandomVector<C>(c, -1, 1, rng);
      std::vector<T> want_sum(n);
      for (int64_t i = 0; i < n; ++i) {
        want_sum[i] = Convert<T>(Convert<C>(x[i]) + Convert<C>(res[i]));
      }
      const typename B::Buffer bx(x), bres(res), bsum(want_sum), bw(w), bb(b), sum(n * sizeof(T)),
          y(n * sizeof(T)), mean(rows * sizeof(C)), rstd(rows * sizeof(C)), y1(n * sizeof(T)),
          mean1(rows * sizeof(C)), rstd1(rows * sizeof(C));
      const DType dtype = kDTypeOf<T>;
      const void* bias = k.bias ? bb.data() : nullptr;
      B::LayerNormForward(dtype, rows, c, bx.data(), bres.data(), bw.data(), bias, 1e-5, sum.data(),
                          y.data(), mean.data(), rstd.data());
      B::LayerNormForward(dtype, rows, c, bsum.data(), nullptr, bw.data(), bias, 1e-5, nullptr,
                          y1.data(), mean1.data(), rstd1.data());
      const std::string where = std::string(DTypeName(dtype)) + " on " + path + ", [" +
                                std::to_string(rows) + ", " + std::to_string(c) + "]";
      EXPECT_EQ(sum.template ToHost<char>(), bsum.template ToHost<char>()) << where << " sum";
      EXPECT_EQ(y.template ToHost<char>(), y1.template ToHost<char>()) << where << " y";
      EXPECT_EQ(mean.template ToHost<char>(), mean1.template ToHost<char>()) << where;
      EXPECT_EQ(rstd.template ToHost<char>(), rstd1.template ToHost<char>()) << where;
    }
  });
}

TEST(LayerNormCpuTest, GradientsDoNotDependOnTheThreadCount) {
  const int64_t rows = 64, c = 781;  // not a multiple of any vector: scalar tails too
  std::mt19937 rng(42);
  const std::vector<float> x = RandomVector<float>(rows * c, -1, 1, rng), w(c, 1.0f);
  const std::vector<float> dy = RandomVector<float>(rows * c, -1, 1, rng);
  std::vector<float> y(rows * c), mean(rows), rstd(rows);
  cpu::LayerNormForward(DType::kF32, rows, c, x.data(), nullptr, w.data(), nullptr, 1e-5, nullptr,
                        y.data(), mean.data(), rstd.data());
  std::vector<float> dx1(rows * c), dw1(c), db1(c), dx3(rows * c), dw3(c), db3(c);
  const int threads = cpu::NumThreads();
  cpu::SetNumThreads(1);
  cpu::LayerNormBackward(DType::kF32, rows, c, x.data(), w.data(), mean.data(), rstd.data(),
                         dy.data(), dx1.data(), dw1.data(), db1.data());
  cpu::SetNumThreads(3);
  cpu::LayerNormBackward(DType::kF32, rows, c, x.data(), w.data(), mean.data(), rstd.data(),
                         dy.data(), dx3.data(), dw3.data(), db3.data());
  cpu::SetNumThreads(threads);
  EXPECT_EQ(dx1, dx3);
  EXPECT_EQ(dw1, dw3);
  EXPECT_EQ(db1, db3);
}

}  // namespace
}  // namespace ember::kernels
