// LayerNorm forward and backward on every compiled SIMD target against the float64
// reference (the backward against the full Jacobian).

#include "kernels/layernorm.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/internal/testing.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/reference/layernorm.h"

namespace ember::kernels::cpu {
namespace {

namespace ref = ::ember::kernels::reference;
using internal::ForEachTarget;
using internal::RandomVector;

template <typename T>
void Check(const std::string& target, int64_t rows, int64_t c, bool with_bias, std::mt19937& rng) {
  const double tol = std::is_same_v<T, float> ? 3e-5 : 1e-11, eps = 1e-5;
  std::vector<T> x = RandomVector<T>(rows * c, -2, 3, rng);
  for (int64_t j = 0; j < c; ++j) x[j] += 100;  // row 0: a large mean
  const std::vector<T> w = RandomVector<T>(c, 0.5, 1.5, rng), b = RandomVector<T>(c, -1, 1, rng);
  const std::vector<T> dy = RandomVector<T>(rows * c, -1, 1, rng);
  std::vector<T> y(rows * c), mean(rows), rstd(rows), dx(rows * c), dw(c), db(c);
  LayerNormForward(kDTypeOf<T>, rows, c, x.data(), w.data(), with_bias ? b.data() : nullptr, eps,
                   y.data(), mean.data(), rstd.data());
  LayerNormBackward(kDTypeOf<T>, rows, c, x.data(), w.data(), mean.data(), rstd.data(), dy.data(),
                    dx.data(), dw.data(), with_bias ? db.data() : nullptr);
  const std::vector<double> wd(w.begin(), w.end()), bd(b.begin(), b.end());
  std::vector<double> want_dw(c, 0.0), want_db(c, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<double> xr(x.begin() + r * c, x.begin() + (r + 1) * c);
    const std::vector<double> dyr(dy.begin() + r * c, dy.begin() + (r + 1) * c);
    const ref::LayerNormRow f = ref::LayerNorm(xr, wd, with_bias ? bd : std::vector<double>{}, eps);
    const std::vector<double> want_dx = ref::LayerNormBackward(xr, wd, dyr, eps);
    const std::string where = std::string(DTypeName(kDTypeOf<T>)) + " on " + target +
                              ", c=" + std::to_string(c) + ", row " + std::to_string(r);
    ASSERT_NEAR(mean[r], f.mean, tol * (1 + std::fabs(f.mean))) << where;
    ASSERT_NEAR(rstd[r], f.rstd, tol * f.rstd) << where;
    for (int64_t j = 0; j < c; ++j) {
      ASSERT_NEAR(y[r * c + j], f.y[j], tol) << where << " y[" << j << "]";
      ASSERT_NEAR(dx[r * c + j], want_dx[j], tol * f.rstd) << where << " dx[" << j << "]";
      want_dw[j] += dyr[j] * f.xhat[j];
      want_db[j] += dyr[j];
    }
  }
  for (int64_t j = 0; j < c; ++j) {
    ASSERT_NEAR(dw[j], want_dw[j], tol * rows) << target << " dweight[" << j << "]";
    if (with_bias) {
      ASSERT_NEAR(db[j], want_db[j], tol * rows) << target << " dbias[" << j << "]";
    }
  }
}

TEST(LayerNormTest, MatchesTheReferenceOnEveryTarget) {
  std::mt19937 rng(41);
  ForEachTarget([&](const std::string& target) {
    for (int64_t c : {1, 3, 8, 17, 64, 768}) {
      Check<float>(target, 5, c, true, rng);
      Check<double>(target, 4, c, c % 2 == 1, rng);
    }
  });
}

TEST(LayerNormTest, GradientsDoNotDependOnTheThreadCount) {
  const int64_t rows = 64, c = 781;  // not a multiple of any vector: scalar tails too
  std::mt19937 rng(42);
  const std::vector<float> x = RandomVector<float>(rows * c, -1, 1, rng), w(c, 1.0f);
  const std::vector<float> dy = RandomVector<float>(rows * c, -1, 1, rng);
  std::vector<float> y(rows * c), mean(rows), rstd(rows);
  LayerNormForward(DType::kF32, rows, c, x.data(), w.data(), nullptr, 1e-5, y.data(), mean.data(),
                   rstd.data());
  std::vector<float> dx1(rows * c), dw1(c), db1(c), dx3(rows * c), dw3(c), db3(c);
  const int threads = NumThreads();
  SetNumThreads(1);
  LayerNormBackward(DType::kF32, rows, c, x.data(), w.data(), mean.data(), rstd.data(), dy.data(),
                    dx1.data(), dw1.data(), db1.data());
  SetNumThreads(3);
  LayerNormBackward(DType::kF32, rows, c, x.data(), w.data(), mean.data(), rstd.data(), dy.data(),
                    dx3.data(), dw3.data(), db3.data());
  SetNumThreads(threads);
  EXPECT_EQ(dx1, dx3);
  EXPECT_EQ(dw1, dw3);
  EXPECT_EQ(db1, db3);
}

}  // namespace
}  // namespace ember::kernels::cpu
