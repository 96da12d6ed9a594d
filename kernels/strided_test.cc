#include "kernels/strided.h"

#include "gtest/gtest.h"

namespace ember::kernels {
namespace {

TEST(CoalesceTest, MergesWhatEveryOperandStepsThroughAsOne) {
  // Two contiguous operands: one row.
  auto loop = Coalesce<2>({2, 3, 4}, {IntSpan({12, 4, 1}), IntSpan({12, 4, 1})});
  EXPECT_EQ(loop.shape, (Shape{24}));
  EXPECT_EQ(loop.rows(), 1);
  // A broadcast row vector: [2, 3, 4] against [4] keeps rows of 4.
  loop = Coalesce<2>({2, 3, 4}, {IntSpan({12, 4, 1}), IntSpan({0, 0, 1})});
  EXPECT_EQ(loop.shape, (Shape{6, 4}));
  EXPECT_EQ(loop.strides[1], (Strides{0, 1}));
  // Size-1 dimensions vanish; a scalar is one element.
  loop = Coalesce<2>({1, 5, 1}, {IntSpan({5, 1, 1}), IntSpan({0, 0, 0})});
  EXPECT_EQ(loop.shape, (Shape{5}));
  loop = Coalesce<2>({}, {IntSpan(), IntSpan()});
  EXPECT_EQ(loop.shape, (Shape{1}));
}

}  // namespace
}  // namespace ember::kernels
