// Softmax, log-softmax and cross entropy, forward and backward, on every compiled
// SIMD target against float64 references.

#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reference/softmax.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

namespace ref = ::ember::kernels::reference;

const std::vector<int64_t> kLengths = {1, 2, 7, 8, 9, 17, 100, 1000};

template <typename T>
std::vector<double> Row(const std::vector<T>& m, int64_t r, int64_t n) {
  return std::vector<double>(m.begin() + r * n, m.begin() + (r + 1) * n);
}

template <typename T>
void CheckAll(const std::string& target, std::mt19937& rng) {
  const double tol = std::is_same_v<T, float> ? 2e-6 : 1e-13;
  for (int64_t n : kLengths) {
    const int64_t rows = 4;
    // Row 0 small, row 1 large values (overflow without the max shift), row 2 with
    // -inf (a masked position), row 3 mixed.
    std::vector<T> x = RandomVector<T>(rows * n, -5, 5, rng);
    for (int64_t j = 0; j < n; ++j) x[n + j] += 1000;
    if (n > 1) x[2 * n + n / 2] = -INFINITY;
    const std::vector<T> dy = RandomVector<T>(rows * n, -1, 1, rng);
    std::vector<T> y(rows * n), logy(rows * n), dx(rows * n), dlog(rows * n);
    Softmax(kDTypeOf<T>, rows, n, x.data(), y.data());
    LogSoftmax(kDTypeOf<T>, rows, n, x.data(), logy.data());
    SoftmaxBackward(kDTypeOf<T>, rows, n, y.data(), dy.data(), dx.data());
    LogSoftmaxBackward(kDTypeOf<T>, rows, n, logy.data(), dy.data(), dlog.data());
    std::vector<int64_t> targets = {0, n - 1, n / 3, -100};
    if (n > 1 && targets[2] == n / 2) targets[2] = 0;  // not the -inf position
    std::vector<T> losses(rows), row_max(rows), sum_exp(rows), dlogits(rows * n);
    const std::vector<T> grad = {T(0.25), T(-1), T(0.5), T(2)};
    CrossEntropyForward(kDTypeOf<T>, rows, n, x.data(), targets.data(), -100, losses.data(),
                        row_max.data(), sum_exp.data());
    CrossEntropyBackward(kDTypeOf<T>, rows, n, x.data(), targets.data(), -100, row_max.data(),
                         sum_exp.data(), grad.data(), dlogits.data());
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<double> xr = Row(x, r, n), dyr = Row(dy, r, n);
      const std::vector<double> wy = ref::Softmax(xr), wlog = ref::LogSoftmax(xr);
      const std::vector<double> wdx = ref::SoftmaxBackward(xr, dyr),
                                wdlog = ref::LogSoftmaxBackward(xr, dyr);
      const std::string where = std::string(DTypeName(kDTypeOf<T>)) + " on " + target +
                                ", n=" + std::to_string(n) + ", row " + std::to_string(r);
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_NEAR(y[r * n + j], wy[j], tol) << where;
        if (std::isinf(wlog[j])) {
          ASSERT_EQ(logy[r * n + j], wlog[j]) << where;
        } else {
          ASSERT_NEAR(logy[r * n + j], wlog[j], tol * (1 + std::fabs(wlog[j]))) << where;
        }
        ASSERT_NEAR(dx[r * n + j], wdx[j], tol) << where;
        if (!std::isinf(x[r * n + j])) {  // sum_j dy_j carries n roundings
          ASSERT_NEAR(dlog[r * n + j], wdlog[j], tol * n) << where;
        }
        // d CE / d x_j = (softmax_j - [j == t]) * grad, 0 for the ignored row.
        const double want = targets[r] == -100 ? 0.0 : (wy[j] - (j == targets[r])) * grad[r];
        ASSERT_NEAR(dlogits[r * n + j], want, tol * 2) << where;
      }
      const double want_loss = targets[r] == -100 ? 0.0 : ref::CrossEntropy(xr, targets[r]);
      ASSERT_NEAR(losses[r], want_loss, tol * (1 + std::fabs(want_loss)) * 10) << where;
    }
  }
}

TEST(SoftmaxTest, EverythingMatchesTheReferenceOnEveryTarget) {
  std::mt19937 rng(31);
  ForEachTarget([&](const std::string& target) {
    CheckAll<float>(target, rng);
    CheckAll<double>(target, rng);
  });
}

// The f32 exp behind softmax, over its whole range: in a row [0, x] the second output
// is e / (1 + e) for e = exp(x), which is exactly e once x < -17 (1 + e rounds to 1).
// Within 2 ulp of float64 where exp(x) is a normal float, 0 or a subnormal below that.
TEST(SoftmaxTest, ExpIsAccurateOverItsWholeRange) {
  const int64_t count = 100003;
  std::vector<float> x(2 * count, 0.0f), y(2 * count);
  for (int64_t i = 0; i < count; ++i) x[2 * i + 1] = -104.0f * i / (count - 1);
  x[2 * (count - 1) + 1] = -INFINITY;
  ForEachTarget([&](const std::string& target) {
    Softmax(DType::kF32, count, 2, x.data(), y.data());
    double worst = 0;
    for (int64_t i = 0; i < count; ++i) {
      const double e = std::exp(static_cast<double>(x[2 * i + 1]));
      const double want = e / (1 + e);
      const float got = y[2 * i + 1];
      if (want < std::numeric_limits<float>::min()) {
        ASSERT_LE(got, std::numeric_limits<float>::min()) << target << ", x=" << x[2 * i + 1];
        continue;
      }
      // ulp(want) is 2^-23 * 2^floor(log2 want); two more roundings above x = -17.
      const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
      const double err = std::fabs(got - want) / ulp;
      worst = std::max(worst, err);
      ASSERT_LE(err, x[2 * i + 1] < -17 ? 2.0 : 3.0) << target << ", x=" << x[2 * i + 1];
    }
    EXPECT_EQ(y[2 * count - 1], 0.0f) << target;  // exp(-inf) is exactly 0
    std::cout << target << ": worst " << worst << " ulp\n";
  });
}

TEST(SoftmaxTest, GptVocabularyRowsSumToOne) {
  const int64_t rows = 3, n = 50257;
  std::mt19937 rng(32);
  const std::vector<float> x = RandomVector<float>(rows * n, -10, 10, rng);
  std::vector<float> y(rows * n);
  Softmax(DType::kF32, rows, n, x.data(), y.data());
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += y[r * n + j];
    EXPECT_NEAR(sum, 1.0, 1e-4);
  }
}

TEST(SoftmaxTest, RejectsIntegerDTypes) {
  int32_t i = 0;
  EXPECT_THROW(Softmax(DType::kI32, 1, 1, &i, &i), Error);
}

}  // namespace
}  // namespace ember::kernels::cpu
