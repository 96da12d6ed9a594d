#include "tensor/ops/conv.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/testing.h"

namespace ember::ops {
namespace {

using ::testing::HasSubstr;

using testing::ErrorOf;

// x = 0..15 as one 4x4 plane; a 2x2 kernel of ones sums each window (hand-derived).
TEST(Conv2dOpTest, SumsWindowsByHand) {
  const Tensor x = Arange(16).To(DType::kF32).View({1, 1, 4, 4});
  const Tensor w = Ones({1, 1, 2, 2});
  EXPECT_EQ(Conv2d(x, w, Tensor(), {{2, 2}}).ToVector<float>(),
            (std::vector<float>{0 + 1 + 4 + 5, 2 + 3 + 6 + 7, 8 + 9 + 12 + 13, 10 + 11 + 14 + 15}));
  // Padding 1 and stride 3: windows at rows/cols -1 and 2.
  const Tensor y = Conv2d(x, w, Full({1}, 0.5), {{3, 3}, {1, 1}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.ToVector<float>(),
            (std::vector<float>{0.5, 2 + 3 + 0.5, 8 + 12 + 0.5, 10 + 11 + 14 + 15 + 0.5}));
}

TEST(Conv2dOpTest, Bf16ComputesInF32AndKeepsItsDType) {
  const Tensor x = Arange(16).To(DType::kBF16).View({1, 1, 4, 4});
  const Tensor y = Conv2d(x, Ones({2, 1, 3, 3}, DType::kBF16), Tensor());
  EXPECT_EQ(y.dtype(), DType::kBF16);
  EXPECT_EQ(y.To(DType::kF32).ToVector<float>(),
            (std::vector<float>{45, 54, 81, 90, 45, 54, 81, 90}));
}

TEST(Conv2dOpTest, BackwardGivesOnlyWhatIsAsked) {
  const Tensor x = Ones({2, 3, 5, 5}), w = Ones({4, 3, 3, 3});
  const Conv2dGrads g = Conv2dBackward(x, w, Ones({2, 4, 3, 3}), {}, false, true);
  EXPECT_FALSE(g.dx.defined());
  EXPECT_EQ(g.dweight.shape(), w.shape());
  EXPECT_EQ(g.dweight.ToVector<float>()[0], 18);  // 2 images x 9 positions, x = 1
  EXPECT_EQ(g.dbias.ToVector<float>(), (std::vector<float>{18, 18, 18, 18}));
}

TEST(Conv2dOpTest, AnEmptyBatchHasZeroWeightGradients) {
  const Tensor w = Ones({4, 3, 3, 3});
  const Conv2dGrads g = Conv2dBackward(Zeros({0, 3, 5, 5}), w, Zeros({0, 4, 3, 3}), {}, true, true);
  EXPECT_EQ(g.dx.shape(), (Shape{0, 3, 5, 5}));
  EXPECT_EQ(g.dweight.ToVector<float>(), std::vector<float>(4 * 3 * 3 * 3, 0));
  EXPECT_EQ(g.dbias.ToVector<float>(), std::vector<float>(4, 0));
}

TEST(Conv2dOpTest, BadShapesNameTheOpAndShapes) {
  const Tensor x = Zeros({1, 3, 8, 8});
  EXPECT_THAT(ErrorOf([&] {
                Conv2d(Zeros({3, 8, 8}), Zeros({4, 3, 3, 3}), Tensor());
              }),
              HasSubstr("conv2d: expected an input [N, C, H, W], got [3, 8, 8]"));
  EXPECT_THAT(
      ErrorOf([&] {
        Conv2d(x, Zeros({4, 2, 3, 3}), Tensor());
      }),
      HasSubstr(
          "weight must be [O, 3, kh, kw] of f32 for the input [1, 3, 8, 8], got [4, 2, 3, 3]"));
  EXPECT_THAT(ErrorOf([&] {
                Conv2d(x, Zeros({4, 3, 3, 3}), Zeros({3}));
              }),
              HasSubstr("bias must be [4] of f32, got [3]"));
  EXPECT_THAT(ErrorOf([&] {
                Conv2d(x, Zeros({4, 3, 9, 9}), Tensor());
              }),
              HasSubstr("is smaller than the kernel 9x9"));
  EXPECT_THAT(ErrorOf([&] {
                Conv2d(x, Zeros({4, 3, 3, 3}), Tensor(), {{0, 1}});
              }),
              HasSubstr("stride and dilation must be positive"));
  EXPECT_THAT(ErrorOf([&] {
                Conv2d(Zeros({1, 3, 8, 8}, DType::kI32), Zeros({4, 3, 3, 3}), Tensor());
              }),
              HasSubstr("expected a floating-point tensor"));
}

}  // namespace
}  // namespace ember::ops
