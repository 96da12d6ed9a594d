// The scan and sort ops: dimensions, dtypes and layouts around the kernels (whose values
// kernels/scan_test.cc and kernels/sort_test.cc check).

#include "tensor/ops/scan.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"

namespace ember::ops {
namespace {

using ::testing::ThrowsMessage;

TEST(ScanOpsTest, CumsumAndCumprodAlongAnyDimension) {
  const Tensor x = FromList({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});  // [2, 3]
  EXPECT_EQ(Cumsum(x, 1).ToVector<float>(), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(Cumsum(x, 0).ToVector<float>(), (std::vector<float>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(Cumsum(x, -1, /*reverse=*/true).ToVector<float>(),
            (std::vector<float>{6, 5, 3, 15, 11, 6}));
  EXPECT_EQ(Cumprod(x, 1).ToVector<float>(), (std::vector<float>{1, 2, 6, 4, 20, 120}));
  // A transposed (non-contiguous) input is read as its values.
  EXPECT_EQ(Cumsum(x.Transpose(0, 1), 1).ToVector<float>(), (std::vector<float>{1, 5, 2, 7, 3, 9}));
  // Integers and bool sum as i64; bf16 keeps its dtype.
  const Tensor flags = FromList({true, false, true, true});
  const Tensor counted = Cumsum(flags, 0);
  EXPECT_EQ(counted.dtype(), DType::kI64);
  EXPECT_EQ(counted.ToVector<int64_t>(), (std::vector<int64_t>{1, 1, 2, 3}));
  EXPECT_EQ(Cumsum(x.To(DType::kBF16), 1).dtype(), DType::kBF16);
  // 0-d: itself.
  EXPECT_EQ(Cumsum(Full({}, 4.0), 0).item<float>(), 4);
  EXPECT_THAT([&] { Cumsum(x, 2); },
              ThrowsMessage<Error>(::testing::HasSubstr("cumsum: dimension 2 is out of range")));
  // dx_i = sum_{j >= i} prod_{l <= j, l != i} x_l for x = (1, 2, 3): 1 + 2 + 6, 1 + 3, 2.
  const Tensor v = FromList({1.0, 2.0, 3.0});
  EXPECT_EQ(CumprodBackward(v, Ones({3}), 0).ToVector<float>(), (std::vector<float>{9, 4, 2}));
}

TEST(ScanOpsTest, SortAlongAnyDimension) {
  const Tensor x = FromList({{3.0, 1.0, 2.0}, {0.0, 5.0, -1.0}});  // [2, 3]
  SortResult s = Sort(x, 1);
  EXPECT_EQ(s.values.ToVector<float>(), (std::vector<float>{1, 2, 3, -1, 0, 5}));
  EXPECT_EQ(s.indices.ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 0, 2, 0, 1}));
  s = Sort(x, 0, /*descending=*/true);
  EXPECT_EQ(s.values.shape(), (Shape{2, 3}));
  EXPECT_EQ(s.values.ToVector<float>(), (std::vector<float>{3, 5, 2, 0, 1, -1}));
  EXPECT_EQ(s.indices.ToVector<int64_t>(), (std::vector<int64_t>{0, 1, 0, 1, 0, 1}));
  // Integers beyond f32's precision sort exactly; the values keep the dtype.
  const Tensor big = FromList({int64_t{16777217}, int64_t{16777216}});
  s = Sort(big);
  EXPECT_EQ(s.values.dtype(), DType::kI64);
  EXPECT_EQ(s.values.ToVector<int64_t>(), (std::vector<int64_t>{16777216, 16777217}));
  s = Sort(Full({}, 2.0));
  EXPECT_EQ(s.values.dim(), 0);
  EXPECT_EQ(s.indices.item<int64_t>(), 0);
}

}  // namespace
}  // namespace ember::ops
