#include "kernels/sampling.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace ember::kernels::cpu {
namespace {

TEST(TopKTest, LargestFirstWithTiesByIndexAndNanLargest) {
  const std::vector<float> x = {1, 5,   3, 5, -1, 2,   // row 0
                                0, NAN, 4, 4, 9,  0};  // row 1
  std::vector<float> values(6);
  std::vector<int64_t> indices(6);
  TopKRows(DType::kF32, 2, 6, 3, x.data(), values.data(), indices.data());
  EXPECT_EQ(indices, (std::vector<int64_t>{1, 3, 2, 1, 4, 2}));
  EXPECT_EQ(values[0], 5.0f);
  EXPECT_TRUE(std::isnan(values[3]));
  EXPECT_EQ(values[4], 9.0f);
  EXPECT_THROW(TopKRows(DType::kF32, 2, 6, 7, x.data(), values.data(), indices.data()), Error);
}

TEST(TopKTest, MatchesAFullSort) {
  std::mt19937 rng(2);
  const int64_t rows = 5, n = 1000, k = 40;
  std::vector<double> x(rows * n);
  for (double& v : x) v = std::uniform_int_distribution<int>(0, 300)(rng);  // many ties
  std::vector<double> values(rows * k);
  std::vector<int64_t> indices(rows * k);
  TopKRows(DType::kF64, rows, n, k, x.data(), values.data(), indices.data());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<std::pair<double, int64_t>> all;
    for (int64_t j = 0; j < n; ++j) all.push_back({-x[r * n + j], j});
    std::sort(all.begin(), all.end());
    for (int64_t i = 0; i < k; ++i) {
      ASSERT_EQ(indices[r * k + i], all[i].second);
      ASSERT_EQ(values[r * k + i], -all[i].first);
    }
  }
}

TEST(MultinomialTest, InverseCdfAndFrequencies) {
  const std::vector<float> probs = {0.1f, 0.0f, 0.6f, 0.3f};  // one row, sums to 1
  std::vector<int64_t> out(1);
  auto draw = [&](double u) {
    MultinomialRows(DType::kF32, 1, 4, probs.data(), &u, out.data());
    return out[0];
  };
  EXPECT_EQ(draw(0.0), 0);
  EXPECT_EQ(draw(0.0999), 0);
  EXPECT_EQ(draw(0.1001), 2);  // never the zero-weight entry
  EXPECT_EQ(draw(0.69), 2);
  EXPECT_EQ(draw(0.71), 3);
  EXPECT_EQ(draw(0.999999999), 3);
  // Unnormalised weights and frequencies.
  const std::vector<double> weights = {2, 6, 0, 2};
  std::mt19937_64 rng(7);
  std::vector<int> counts(4, 0);
  for (int i = 0; i < 20000; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    MultinomialRows(DType::kF64, 1, 4, weights.data(), &u, out.data());
    ++counts[out[0]];
  }
  EXPECT_NEAR(counts[0], 4000, 300);
  EXPECT_NEAR(counts[1], 12000, 300);
  EXPECT_EQ(counts[2], 0);
  EXPECT_NEAR(counts[3], 4000, 300);
  const std::vector<float> zeros(3, 0.0f);
  const double u = 0.5;
  MultinomialRows(DType::kF32, 1, 3, zeros.data(), &u, out.data());
  EXPECT_EQ(out[0], -1);
}

}  // namespace
}  // namespace ember::kernels::cpu
