#include "tensor/ops/binary.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"

namespace ember::ops {
namespace {

using ::testing::ThrowsMessage;

TEST(BinaryOpsTest, BroadcastsLikeNumpy) {
  const Tensor a = FromList({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});  // [2, 3]
  const Tensor row = FromList({10.0, 20.0, 30.0});                // [3]
  const Tensor column = FromList({{100.0}, {200.0}});             // [2, 1]
  EXPECT_EQ(Add(a, row).ToVector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(Mul(a, column).ToVector<float>(), (std::vector<float>{100, 200, 300, 800, 1000, 1200}));
  const Tensor outer = Sub(row.Unsqueeze(1), column.View({1, 2}));  // [3, 1] - [1, 2] = [3, 2]
  EXPECT_EQ(outer.shape(), (Shape{3, 2}));
  EXPECT_EQ(outer.ToVector<float>(), (std::vector<float>{-90, -190, -80, -180, -70, -170}));
  // A transposed operand gives the same as its contiguous copy.
  const Tensor t = a.Transpose(0, 1);
  EXPECT_EQ(Div(t, t.Contiguous()).ToVector<float>(), std::vector<float>(6, 1.0f));
  EXPECT_EQ(Add(Zeros({0, 3}), row).shape(), (Shape{0, 3}));
}

TEST(BinaryOpsTest, ScalarsKeepTheTensorsDType) {
  const Tensor i = Arange(4);  // i64
  EXPECT_EQ(Add(i, 1).dtype(), DType::kI64);
  EXPECT_EQ(Mul(i, 3).ToVector<int64_t>(), (std::vector<int64_t>{0, 3, 6, 9}));
  const Tensor f = Mul(i, 0.5);  // a float scalar with an integer tensor: f32
  EXPECT_EQ(f.dtype(), DType::kF32);
  EXPECT_EQ(f.ToVector<float>(), (std::vector<float>{0, 0.5, 1, 1.5}));
  const Tensor d = Arange(0.0, 3.0, 1.0, DType::kF64);
  EXPECT_EQ(Div(1.0, Add(d, 1)).dtype(), DType::kF64);
  EXPECT_EQ(Div(1.0, Add(d, 1)).ToVector<double>(), (std::vector<double>{1, 0.5, 1.0 / 3}));
  EXPECT_EQ(Sub(10, i).ToVector<int64_t>(), (std::vector<int64_t>{10, 9, 8, 7}));
  EXPECT_EQ(Maximum(FromList({-1.0, 2.0}), 0).ToVector<float>(), (std::vector<float>{0, 2}));
}

TEST(BinaryOpsTest, MulInPlaceWritesTheTensorItself) {
  const Tensor x = FromList({{1.0, 2.0}, {3.0, 4.0}});
  const Tensor view = x;  // another handle sees the change
  MulInPlace(x, 0.5);
  EXPECT_EQ(view.ToVector<float>(), (std::vector<float>{0.5, 1, 1.5, 2}));
  MulInPlace(x.Transpose(0, 1).Select(0, 1), 4);  // a strided column: x[:, 1] *= 4
  EXPECT_EQ(x.ToVector<float>(), (std::vector<float>{0.5, 4, 1.5, 8}));
  const Tensor h = FromList({1.0, -3.0}).To(DType::kBF16);
  MulInPlace(h, 2);
  EXPECT_EQ(h.dtype(), DType::kBF16);
  EXPECT_EQ(h.ToVector<float>(), (std::vector<float>{2, -6}));
}

TEST(BinaryOpsTest, HalfPrecisionComputesInF32) {
  const Tensor a = FromList({1.0, 256.0}, DType::kBF16);
  const Tensor sum = Add(a, FromList({1.0, 1.0}, DType::kBF16));
  EXPECT_EQ(sum.dtype(), DType::kBF16);
  EXPECT_EQ(sum.ToVector<float>(), (std::vector<float>{2, 256}));  // 257 rounds to even in bf16
}

TEST(BinaryOpsTest, NanPropagatesThroughMaximum) {
  const Tensor m = Maximum(FromList({NAN, 1.0, 3.0}), FromList({0.0, NAN, 2.0}));
  const std::vector<float> v = m.ToVector<float>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 3.0f);
}

TEST(BinaryOpsTest, ComparisonsWhereAndMaskedFill) {
  const Tensor x = FromList({{1.0, -2.0}, {3.0, -4.0}});
  const Tensor positive = Gt(x, 0);
  EXPECT_EQ(positive.dtype(), DType::kBool);
  EXPECT_EQ(positive.ToVector<bool>(), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(Eq(Arange(3), FromList({0, 5, 2})).ToVector<bool>(),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Where(positive, x, Zeros({})).ToVector<float>(), (std::vector<float>{1, 0, 3, 0}));
  // A causal mask: row i keeps columns j <= i.
  const Tensor scores = Zeros({3, 3});
  const Tensor future = Gt(Arange(3).View({1, 3}), Arange(3).View({3, 1}));
  EXPECT_EQ(MaskedFill(scores, future, -INFINITY).ToVector<float>(),
            (std::vector<float>{0, -INFINITY, -INFINITY, 0, 0, -INFINITY, 0, 0, 0}));
}

TEST(BinaryOpsTest, ErrorsNameTheOpAndShapes) {
  EXPECT_THAT(
      [] {
        Add(Zeros({2, 3}), Zeros({4}));
      },
      ThrowsMessage<Error>(
          "add: shapes [2, 3] and [4] cannot be broadcast (dimension -1: 3 vs 4)"));
  EXPECT_THAT(
      [] { Mul(Zeros({2}), Zeros({2}, DType::kF64)); },
      ThrowsMessage<Error>(
          "mul: dtypes differ (f32 of shape [2] and f64 of shape [2]); convert one with To()"));
  EXPECT_THAT([] { Div(Arange(3), Arange(3)); },
              ThrowsMessage<Error>("div: dtype i64 is not supported (f32, f64 or bf16)"));
  EXPECT_THAT([] { Where(Zeros({2}), Zeros({2}), Zeros({2})); },
              ThrowsMessage<Error>("where: condition must be bool, got f32"));
  EXPECT_THAT(
      [] {
        MaskedFill(Zeros({2}), Gt(Zeros({3, 2}), 0), 1);
      },
      ThrowsMessage<Error>(
          "masked_fill: mask of shape [3, 2] cannot be broadcast to the input's shape [2]"));
}

}  // namespace
}  // namespace ember::ops
