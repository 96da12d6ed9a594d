#include "tensor/creation.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ember {
namespace {

using ::testing::ThrowsMessage;

TEST(CreationTest, FilledTensors) {
  EXPECT_EQ(Zeros({2, 2}).ToVector<float>(), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(Ones({3}, DType::kI32).ToVector<int>(), (std::vector<int>{1, 1, 1}));
  const Tensor f = Full({2}, 2.5, DType::kF64);
  EXPECT_EQ(f.dtype(), DType::kF64);
  EXPECT_EQ(f.ToVector<double>(), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(Zeros({}).dim(), 0);
  EXPECT_EQ(Zeros({}).numel(), 1);
  EXPECT_THAT(
      [] {
        Zeros({2, -3});
      },
      ThrowsMessage<Error>("empty: negative size -3 in shape [2, -3]"));
}

TEST(CreationTest, ArangeLikePyTorch) {
  const Tensor ints = Arange(5);
  EXPECT_EQ(ints.dtype(), DType::kI64);
  EXPECT_EQ(ints.ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Arange(10, 0, -3).ToVector<int64_t>(), (std::vector<int64_t>{10, 7, 4, 1}));
  const Tensor tenths = Arange(0, 1, 0.1);
  EXPECT_EQ(tenths.dtype(), DType::kF32);
  EXPECT_EQ(tenths.numel(), 10);
  EXPECT_FLOAT_EQ(tenths.at<float>({9}), 0.9f);
  EXPECT_EQ(Arange(0, 1, 0.3).numel(), 4);
  EXPECT_EQ(Arange(3, 3).numel(), 0);
  const int64_t big = int64_t{1} << 60;
  EXPECT_EQ(Arange(big, big + 3).ToVector<int64_t>(),
            (std::vector<int64_t>{big, big + 1, big + 2}));
  EXPECT_EQ(Arange(0, 4, 1, DType::kF16).ToVector<float>(), (std::vector<float>{0, 1, 2, 3}));
  EXPECT_THAT([] { Arange(0, 5, 0); }, ThrowsMessage<Error>("arange: step must be nonzero"));
  EXPECT_THAT([] { Arange(5, 0, 1); },
              ThrowsMessage<Error>("arange: end 0 cannot be reached from start 5 with step 1"));
}

TEST(CreationTest, LinspaceHitsBothEnds) {
  // torch.linspace(-1, 1, 7).tolist(), float arithmetic and all.
  const std::vector<float> expected = {-1.0f,
                                       -0.6666666269302368f,
                                       -0.3333333134651184f,
                                       -2.9802322387695312e-08f,
                                       0.3333333134651184f,
                                       0.6666666269302368f,
                                       1.0f};
  EXPECT_EQ(Linspace(-1, 1, 7).ToVector<float>(), expected);
  EXPECT_EQ(Linspace(2, 3, 1).ToVector<float>(), (std::vector<float>{2}));
  // torch.linspace(0, 1, 6, dtype=torch.float64).tolist()
  EXPECT_EQ(Linspace(0, 1, 6, DType::kF64).ToVector<double>(),
            (std::vector<double>{0.0, 0.2, 0.4, 0.6, 0.8, 1.0}));
  EXPECT_EQ(Linspace(2, 3, 0).numel(), 0);
  EXPECT_THAT([] { Linspace(0, 1, -1); },
              ThrowsMessage<Error>("linspace: number of steps must be non-negative, got -1"));
}

TEST(CreationTest, Eye) {
  EXPECT_EQ(Eye(3).ToVector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(Eye(2, 3, DType::kI64).ToVector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(Eye(3, 2).ToVector<float>(), (std::vector<float>{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(Eye(0).numel(), 0);
}

TEST(CreationTest, FromVector) {
  const Tensor t = FromVector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(t.dtype(), DType::kF64);
  EXPECT_EQ(t.at({1, 0}), 4.0);
  EXPECT_EQ(FromVector(std::vector<int32_t>{7, 8}).shape(), (Shape{2}));
  EXPECT_THAT(
      [] {
        FromVector(std::vector<float>{1, 2, 3}, {2, 2});
      },
      ThrowsMessage<Error>("from_vector: 3 values do not fill shape [2, 2]"));
}

TEST(CreationTest, FromListInfersShapeAndDType) {
  const Tensor m = FromList({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(m.shape(), (Shape{2, 3}));
  EXPECT_EQ(m.dtype(), DType::kI64);
  EXPECT_EQ(m.ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(FromList({{1, 2.5}}).dtype(), DType::kF32);  // any float makes it f32
  EXPECT_EQ(FromList({true, false}).dtype(), DType::kBool);
  EXPECT_EQ(FromList({true, 2}).dtype(), DType::kI64);
  EXPECT_EQ(FromList({1, 2}, DType::kF16).ToVector<float>(), (std::vector<float>{1, 2}));
  const Tensor scalar = FromList(7);
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.item<int>(), 7);
  EXPECT_EQ(FromList({{{1}, {2}}, {{3}, {4}}}).shape(), (Shape{2, 2, 1}));
  EXPECT_EQ(FromList({{}, {}}).shape(), (Shape{2, 0}));
  EXPECT_THAT(
      [] {
        FromList({{1, 2}, {3}});
      },
      ThrowsMessage<Error>("from_list: ragged nested list (a list of 1 items at depth 1 where "
                           "shape [2, 2] wants 2 items)"));
  EXPECT_THAT(
      [] {
        FromList({{1, 2}, 3});
      },
      ThrowsMessage<Error>(
          "from_list: ragged nested list (a number at depth 1 where shape [2, 2] wants 2 items)"));
  EXPECT_THAT(
      [] {
        FromList({1, {2}});
      },
      ThrowsMessage<Error>(
          "from_list: ragged nested list (a list at depth 1 where shape [2] wants a number)"));
}

}  // namespace
}  // namespace ember
