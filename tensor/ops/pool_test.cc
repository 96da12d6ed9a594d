#include "tensor/ops/pool.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/testing.h"

namespace ember::ops {
namespace {

using testing::ErrorOf;
using ::testing::HasSubstr;

TEST(MaxPool2dOpTest, PoolsByHandAndScattersBack) {
  const Tensor x = FromVector<float>({1, 5, 2, 0,  //
                                      3, 4, 8, 1,  //
                                      0, 0, 9, 9,  //
                                      7, 0, 9, 2},
                                     {1, 1, 4, 4});
  const MaxPool2dResult r = MaxPool2d(x, {});
  EXPECT_EQ(r.y.ToVector<float>(), (std::vector<float>{5, 8, 7, 9}));
  EXPECT_EQ(r.indices.ToVector<int64_t>(), (std::vector<int64_t>{1, 6, 12, 10}));  // first 9 wins
  const Tensor dx =
      MaxPool2dBackward(x.shape(), r.indices, FromVector<float>({1, 2, 3, 4}, {1, 1, 2, 2}), {});
  EXPECT_EQ(dx.ToVector<float>(),
            (std::vector<float>{0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 3, 0, 0, 0}));
}

TEST(MaxPool2dOpTest, ChecksPaddingAndIndices) {
  EXPECT_THAT(ErrorOf([] {
                MaxPool2d(Zeros({1, 1, 4, 4}), {{2, 2}, {0, 0}, {2, 2}});
              }),
              HasSubstr("padding (2, 2) must be at most half the kernel 2x2"));
  EXPECT_THAT(ErrorOf([] {
                MaxPool2dBackward({1, 1, 4, 4}, Full({1, 1, 2, 2}, 16, DType::kI64),
                                  Zeros({1, 1, 2, 2}), {});
              }),
              HasSubstr("index 16 is outside the 4x4 input planes"));
  EXPECT_THAT(ErrorOf([] {
                MaxPool2dBackward({1, 1, 4, 4}, FromVector<int64_t>({3, -1, 15, 0}, {1, 1, 2, 2}),
                                  Zeros({1, 1, 2, 2}), {});
              }),
              HasSubstr("index -1 is outside the 4x4 input planes"));
}

}  // namespace
}  // namespace ember::ops
