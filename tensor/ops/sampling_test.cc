#include "tensor/ops/sampling.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"

namespace ember::ops {
namespace {

using ::testing::ThrowsMessage;

TEST(SamplingOpsTest, TopKAlongTheLastDimension) {
  const Tensor x = FromList({{{1.0, 9.0, 3.0, 7.0}}, {{4.0, 4.0, 8.0, 0.0}}});  // [2, 1, 4]
  const TopKResult top = TopK(x, 2);
  EXPECT_EQ(top.values.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(top.values.ToVector<float>(), (std::vector<float>{9, 7, 8, 4}));
  EXPECT_EQ(top.indices.ToVector<int64_t>(), (std::vector<int64_t>{1, 3, 2, 0}));
  EXPECT_THAT([&] { TopK(x, 5); },
              ThrowsMessage<Error>("topk: k = 5 is out of range for a last dimension of 4"));
}

TEST(SamplingOpsTest, MultinomialIsSeeded) {
  const Tensor probs = FromList({{0.2, 0.0, 0.8}, {0.0, 1.0, 0.0}, {0.5, 0.5, 0.0}});
  Generator a(11), b(11);
  const std::vector<int64_t> first = Multinomial(probs, a).ToVector<int64_t>();
  EXPECT_EQ(first, Multinomial(probs, b).ToVector<int64_t>());  // same seed, same draws
  EXPECT_EQ(first[1], 1);
  EXPECT_NE(first[0], 1);
  EXPECT_NE(first[2], 2);
  EXPECT_EQ(a.offset(), 6u);  // one 53-bit uniform (two words) per row
  EXPECT_THAT(
      [] {
        Multinomial(FromList({{0.0, 0.0}}));
      },
      ThrowsMessage<Error>("multinomial: row 0 has no positive weight"));
  EXPECT_THAT(
      [] {
        Multinomial(FromList({{0.5, -0.1}}));
      },
      ThrowsMessage<Error>(::testing::StartsWith("multinomial: weights must be non-negative")));
}

// Draws with replacement follow the weights: 40,000 draws of weights 1 : 0 : 3 : 4 give
// counts within 6 standard deviations of 5,000 : 0 : 15,000 : 20,000; a zero weight is
// never drawn; the stream is the seed's.
TEST(SamplingOpsTest, MultinomialWithReplacementFollowsTheWeights) {
  const Tensor probs = FromList({{1.0, 0.0, 3.0, 4.0}, {0.0, 0.0, 0.0, 2.0}});
  Generator gen(5);
  const Tensor drawn = MultinomialWithReplacement(probs, 40000, gen);
  EXPECT_EQ(drawn.shape(), (Shape{2, 40000}));
  const std::vector<int64_t> v = drawn.ToVector<int64_t>();
  std::vector<int64_t> counts(4, 0);
  for (int64_t i = 0; i < 40000; ++i) ++counts[v[i]];
  const double expected[] = {5000, 0, 15000, 20000};
  for (int i = 0; i < 4; ++i) {
    const double p = expected[i] / 40000, sd = std::sqrt(40000 * p * (1 - p));
    EXPECT_NEAR(counts[i], expected[i], 6 * sd + 1e-9) << "category " << i;
  }
  for (int64_t i = 40000; i < 80000; ++i) ASSERT_EQ(v[i], 3);
  Generator again(5);
  EXPECT_EQ(MultinomialWithReplacement(probs, 40000, again).ToVector<int64_t>(), v);
  EXPECT_THAT(
      [] {
        MultinomialWithReplacement(FromList({{0.0, 0.0}}), 3);
      },
      ThrowsMessage<Error>(::testing::StartsWith("multinomial: row 0 has no positive")));
  EXPECT_THAT(
      [] {
        MultinomialWithReplacement(FromList({{1.0, -1.0}}), 3);
      },
      ThrowsMessage<Error>(::testing::StartsWith("multinomial: weights must be")));
}

}  // namespace
}  // namespace ember::ops
