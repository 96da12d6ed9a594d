// LayerNorm forward and backward: one table of cases on every CPU SIMD target this
// machine has and on CUDA (kernels/cuda/internal/backends.h), against the float64
// reference (kernels/reference/layernorm.h; the backward against the full Jacobian).
// Rows of up to 1024 and longer ones (a warp or a block a row on CUDA), widths that are
// and are not multiples of a vector, with and without a bias, and a row with a large
// mean (where a one-pass variance would cancel).

#include "kernels/layernorm.h"

#include <algorithm>
#include <cmath>
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
  B::LayerNormForward(kDTypeOf<T>, rows, c, bx.data(), bw.data(), k.bias ? bb.data() : nullptr, eps,
                      y.data(), mean.data(), rstd.data());
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

TEST(LayerNormCpuTest, GradientsDoNotDependOnTheThreadCount) {
  const int64_t rows = 64, c = 781;  // not a multiple of any vector: scalar tails too
  std::mt19937 rng(42);
  const std::vector<float> x = RandomVector<float>(rows * c, -1, 1, rng), w(c, 1.0f);
  const std::vector<float> dy = RandomVector<float>(rows * c, -1, 1, rng);
  std::vector<float> y(rows * c), mean(rows), rstd(rows);
  cpu::LayerNormForward(DType::kF32, rows, c, x.data(), w.data(), nullptr, 1e-5, y.data(),
                        mean.data(), rstd.data());
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
