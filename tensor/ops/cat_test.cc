#include "tensor/ops/cat.h"

#include "gtest/gtest.h"
#include "tensor/creation.h"

namespace ember::ops {
namespace {

TEST(CatTest, JoinsAlongAnyDimensionIncludingStridedInputs) {
  const Tensor a = Arange(0, 6, 1, DType::kF32).View({2, 3});
  const Tensor b = Arange(6, 10, 1, DType::kF32).View({2, 2});
  EXPECT_EQ(Cat({a, b}, 1).ToVector<double>(), (std::vector<double>{0, 1, 2, 6, 7, 3, 4, 5, 8, 9}));
  // A transposed (non-contiguous) input, joined along dim 0.
  const Tensor t = Arange(0, 4, 1, DType::kF32).View({2, 2}).Transpose(0, 1);
  EXPECT_EQ(Cat({t, a.Narrow(1, 0, 2)}, -2).ToVector<double>(),
            (std::vector<double>{0, 2, 1, 3, 0, 1, 3, 4}));
  EXPECT_EQ(Cat({a, Empty({0, 3})}).shape(), (Shape{2, 3}));
}

TEST(CatTest, StackMakesANewDimension) {
  const Tensor a = Arange(0, 3, 1, DType::kF32), b = Arange(3, 6, 1, DType::kF32);
  EXPECT_EQ(Stack({a, b}).shape(), (Shape{2, 3}));
  EXPECT_EQ(Stack({a, b}, 1).ToVector<double>(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(CatTest, RejectsMismatches) {
  const Tensor a = Zeros({2, 3});
  EXPECT_THROW(Cat({}), Error);
  EXPECT_THROW(Cat({a, Zeros({3, 3})}, 1), Error);
  EXPECT_THROW(Cat({a, Zeros({2, 3}, DType::kF64)}), Error);
  EXPECT_THROW(Cat({a, a}, 2), Error);
  EXPECT_THROW(Stack({a, Zeros({3, 2})}), Error);
  try {
    Cat({a, Zeros({3, 3})}, 1);
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cat: shapes [2, 3] and [3, 3] differ outside dimension 1");
  }
}

}  // namespace
}  // namespace ember::ops
