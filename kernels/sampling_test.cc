// Top-k and multinomial sampling: one table of cases on every CPU path and on CUDA
// (kernels/cuda/internal/backends.h), against hand-derived values and plain references
// written here: top-k as a stable sort in torch.topk's order (NaN first, then larger,
// ties by lower index), multinomial as the inverse CDF with a running sum in double.
// The CUDA half skips, saying why, without a GPU.

#include "kernels/sampling.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

EMBER_BACKEND_TEST_SUITE(SamplingTest);

// The k largest of each row of x [rows, n] by backend B, checked against the stable sort.
template <typename B, typename T>
void CheckTopK(const std::vector<T>& x, int64_t rows, int64_t n, int64_t k) {
  const typename B::Buffer gx(x), gvalues(rows * k * sizeof(T)), gindices(rows * k * 8);
  B::TopKRows(kDTypeOf<T>, rows, n, k, gx.data(), gvalues.data(), gindices.template as<int64_t>());
  const std::vector<int64_t> got = gindices.template ToHost<int64_t>();
  const std::vector<T> got_values = gvalues.template ToHost<T>();
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x.data() + r * n;
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      if (std::isnan(row[a]) != std::isnan(row[b])) return std::isnan(row[a]);
      return row[a] > row[b];
    });
    for (int64_t i = 0; i < k; ++i) {
      ASSERT_EQ(got[r * k + i], order[i]) << "row " << r << " pick " << i << " (n=" << n << ")";
      const T v = got_values[r * k + i];
      ASSERT_TRUE(v == row[order[i]] || (std::isnan(v) && std::isnan(row[order[i]])));
    }
  }
}

TYPED_TEST(SamplingTest, TopKIsTheStablySortedPrefix) {
  using B = TypeParam;
  // By hand: ties keep the lower index first, NaN counts as largest.
  const std::vector<float> hand = {1, 5,   3, 5, -1, 2,   // row 0: 5 (1), 5 (3), 3 (2)
                                   0, NAN, 4, 4, 9,  0};  // row 1: NaN (1), 9 (4), 4 (2)
  const typename B::Buffer gx(hand), gvalues(6 * 4), gindices(6 * 8);
  B::TopKRows(DType::kF32, 2, 6, 3, gx.data(), gvalues.data(), gindices.template as<int64_t>());
  EXPECT_EQ(gindices.template ToHost<int64_t>(), (std::vector<int64_t>{1, 3, 2, 1, 4, 2}));
  const std::vector<float> values = gvalues.template ToHost<float>();
  EXPECT_EQ(values[0], 5.0f);
  EXPECT_TRUE(std::isnan(values[3]));
  EXPECT_EQ(values[4], 9.0f);

  std::mt19937 rng(3);
  for (const auto& [rows, n, k] : std::vector<std::array<int64_t, 3>>{
           {1, 50257, 40},
           {3, 10, 10},
           {4, 1000, 1},
           {2, 300, 17},
           {1, 3000, 1024},
           {1, 3000, 1500}}) {  // the CUDA kernel's largest radix-select k, and past it
    std::vector<float> x = RandomVector<float>(rows * n, -5, 5, rng);
    for (int64_t i = 0; i < rows * n; i += 5) x[i] = std::round(x[i]);  // ties
    x[n / 2] = NAN;
    CheckTopK<B, float>(x, rows, n, k);
  }
  // f64 with many ties: integers in [0, 300].
  std::vector<double> ties(5 * 1000);
  for (double& v : ties) v = std::uniform_int_distribution<int>(0, 300)(rng);
  CheckTopK<B, double>(ties, 5, 1000, 40);
}

TYPED_TEST(SamplingTest, MultinomialIsTheInverseCdf) {
  using B = TypeParam;
  // By hand: one row of weights 0.1, 0, 0.6, 0.3, and where each u lands.
  const std::vector<float> probs4 = {0.1f, 0.0f, 0.6f, 0.3f};
  const std::vector<double> us = {0.0, 0.0999, 0.1001, 0.69, 0.71, 0.999999999};
  const std::vector<int64_t> want4 = {0, 0, 2, 2, 3, 3};  // never the zero-weight entry
  for (size_t i = 0; i < us.size(); ++i) {
    const typename B::Buffer gprobs(probs4), gout(8);
    B::MultinomialRows(DType::kF32, 1, 4, gprobs.data(), &us[i], gout.template as<int64_t>());
    EXPECT_EQ(gout.template ToHost<int64_t>()[0], want4[i]) << "u = " << us[i];
  }
  const double half = 0.5;
  const typename B::Buffer gzeros(std::vector<float>(3, 0.0f)), gnone(8);
  B::MultinomialRows(DType::kF32, 1, 3, gzeros.data(), &half, gnone.template as<int64_t>());
  EXPECT_EQ(gnone.template ToHost<int64_t>()[0], -1);  // no weight: -1

  std::mt19937 rng(5);
  const int64_t rows = 64, n = 300;
  std::vector<double> probs = RandomVector<double>(rows * n, 0, 1, rng);
  for (int64_t j = 0; j < n; ++j) probs[j] = j % 3 == 0 ? 0 : probs[j];  // zeros in row 0
  for (int64_t j = 0; j < n; ++j) probs[n + j] = 0;                      // row 1: all zero
  std::vector<double> uniform = RandomVector<double>(rows, 0, 1, rng);
  uniform[2] = 0;
  uniform[3] = std::nextafter(1.0, 0.0);
  const typename B::Buffer gprobs(probs), gout(rows * 8);
  B::MultinomialRows(DType::kF64, rows, n, gprobs.data(), uniform.data(),
                     gout.template as<int64_t>());
  const std::vector<int64_t> got = gout.template ToHost<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = probs.data() + r * n;
    const double total = std::accumulate(row, row + n, 0.0);
    int64_t want = -1;  // the first j whose running sum exceeds u * total
    double running = 0;
    for (int64_t j = 0; j < n && total > 0; ++j) {
      running += row[j];
      if (row[j] > 0) want = j;
      if (row[j] > 0 && running > uniform[r] * total) break;
    }
    EXPECT_EQ(got[r], want) << "row " << r;
  }
  EXPECT_EQ(got[1], -1);     // all weights zero
  EXPECT_GT(got[0] % 3, 0);  // never a zero weight
}

TEST(SamplingCpuTest, TopKRefusesKBeyondTheRow) {
  const std::vector<float> x(12, 1.0f);
  std::vector<float> values(14);
  std::vector<int64_t> indices(14);
  EXPECT_THROW(cpu::TopKRows(DType::kF32, 2, 6, 7, x.data(), values.data(), indices.data()), Error);
}

TEST(SamplingCpuTest, MultinomialDrawsInProportionToUnnormalisedWeights) {
  const std::vector<double> weights = {2, 6, 0, 2};
  std::mt19937_64 rng(7);
  std::vector<int> counts(4, 0);
  int64_t out = 0;
  for (int i = 0; i < 20000; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    cpu::MultinomialRows(DType::kF64, 1, 4, weights.data(), &u, &out);
    ++counts[out];
  }
  EXPECT_NEAR(counts[0], 4000, 300);
  EXPECT_NEAR(counts[1], 12000, 300);
  EXPECT_EQ(counts[2], 0);
  EXPECT_NEAR(counts[3], 4000, 300);
}

}  // namespace
}  // namespace ember::kernels
