#include "tensor/ops/sampling.h"

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

}  // namespace
}  // namespace ember::ops
