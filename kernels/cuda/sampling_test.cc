// Top-k and multinomial sampling on both backends against plain references written
// here: top-k as a stable sort in torch.topk's order (NaN first, then larger, ties by
// lower index), multinomial as the inverse CDF with a running sum in double. The CUDA
// half skips, saying why, without a GPU.

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/testing.h"

namespace ember::kernels::cuda {
namespace {

EMBER_BACKEND_TEST_SUITE(SamplingTest);

TYPED_TEST(SamplingTest, TopKIsTheStablySortedPrefix) {
  using B = TypeParam;
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
    const typename B::Buffer gx(x), gvalues(rows * k * 4), gindices(rows * k * 8);
    B::TopKRows(DType::kF32, rows, n, k, gx.data(), gvalues.data(),
                gindices.template as<int64_t>());
    const std::vector<int64_t> got = gindices.template ToHost<int64_t>();
    const std::vector<float> got_values = gvalues.template ToHost<float>();
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = x.data() + r * n;
      std::vector<int64_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        if (std::isnan(row[a]) != std::isnan(row[b])) return std::isnan(row[a]);
        return row[a] > row[b];
      });
      for (int64_t i = 0; i < k; ++i) {
        ASSERT_EQ(got[r * k + i], order[i]) << "row " << r << " pick " << i << " (n=" << n << ")";
        const float v = got_values[r * k + i];
        ASSERT_TRUE(v == row[order[i]] || (std::isnan(v) && std::isnan(row[order[i]])));
      }
    }
  }
}

TYPED_TEST(SamplingTest, MultinomialIsTheInverseCdf) {
  using B = TypeParam;
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
  EXPECT_EQ(got[1], -1);
  EXPECT_GT(got[0] % 3, 0);  // never a zero weight
}

}  // namespace
}  // namespace ember::kernels::cuda
