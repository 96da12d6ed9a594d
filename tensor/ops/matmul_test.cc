#include "tensor/ops/matmul.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::ops {
namespace {

using ::testing::ThrowsMessage;

// The product element by element from the definition, in double, on [.., m, k] x
// [.., k, n] operands already broadcast to the same batch shape.
double Element(const Tensor& a, const Tensor& b, Shape index) {
  const int64_t j = index.back();
  index.pop_back();
  const int64_t i = index.back();
  index.pop_back();
  double sum = 0;
  for (int64_t p = 0; p < a.size(-1); ++p) {
    Shape ai = index, bi = index;
    ai.insert(ai.end(), {i, p});
    bi.insert(bi.end(), {p, j});
    sum += a.at(ai) * b.at(bi);
  }
  return sum;
}

TEST(MatmulOpsTest, MatricesVectorsAndDots) {
  const Tensor a = FromList({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  const Tensor b = FromList({{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}});
  EXPECT_EQ(Matmul(a, b).ToVector<float>(), (std::vector<float>{4, 5, 10, 11}));
  const Tensor v = FromList({1.0, 1.0, 1.0});
  const Tensor av = Matmul(a, v);  // [2, 3] x [3] -> [2]
  EXPECT_EQ(av.shape(), (Shape{2}));
  EXPECT_EQ(av.ToVector<float>(), (std::vector<float>{6, 15}));
  const Tensor va = Matmul(FromList({1.0, -1.0}), a);  // [2] x [2, 3] -> [3]
  EXPECT_EQ(va.ToVector<float>(), (std::vector<float>{-3, -3, -3}));
  const Tensor dot = Matmul(v, FromList({1.0, 2.0, 3.0}));
  EXPECT_EQ(dot.dim(), 0);
  EXPECT_EQ(dot.item(), 6.0);
  // A transposed view is read in place: a^T a.
  EXPECT_EQ(Matmul(a.Transpose(0, 1), a).ToVector<float>(),
            (std::vector<float>{17, 22, 27, 22, 29, 36, 27, 36, 45}));
}

TEST(MatmulOpsTest, BroadcastBatchesMatchTheDefinition) {
  Generator gen(4);
  const Tensor a = Randn({3, 1, 5, 4}, gen, DType::kF64);
  const Tensor b = Randn({2, 4, 6}, gen, DType::kF64).Transpose(1, 2).Contiguous().Transpose(1, 2);
  const Tensor c = Matmul(a, b);
  ASSERT_EQ(c.shape(), (Shape{3, 2, 5, 6}));
  const Tensor ab = a.Expand({3, 2, 5, 4}), bb = b.Expand({3, 2, 4, 6});
  for (NdIndexIterator it(c.shape()); !it.done(); it.Next()) {
    ASSERT_NEAR(c.at(it.index()), Element(ab, bb, it.index()), 1e-12);
  }
}

TEST(MatmulOpsTest, HalfPrecisionAndEmpty) {
  const Tensor a = Ones({2, 3}, DType::kBF16);
  const Tensor c = Matmul(a, Ones({3, 2}, DType::kBF16));
  EXPECT_EQ(c.dtype(), DType::kBF16);
  EXPECT_EQ(c.ToVector<float>(), (std::vector<float>{3, 3, 3, 3}));
  EXPECT_EQ(Matmul(Zeros({2, 0}), Zeros({0, 3})).ToVector<float>(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(Matmul(Zeros({0, 2}), Zeros({2, 3})).shape(), (Shape{0, 3}));
}

TEST(MatmulOpsTest, ErrorsNameTheShapes) {
  EXPECT_THAT(
      [] {
        Matmul(Zeros({2, 3}), Zeros({4, 5}));
      },
      ThrowsMessage<Error>("matmul: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)"));
  EXPECT_THAT(
      [] {
        Matmul(Zeros({2, 2, 3}), Zeros({3, 3, 1}));
      },
      ThrowsMessage<Error>(
          "matmul: the batch dimensions of [2, 2, 3] and [3, 3, 1] cannot be broadcast (matmul: "
          "shapes [2] and [3] cannot be broadcast (dimension -1: 2 vs 3))"));
  EXPECT_THAT([] { Matmul(Zeros({}), Zeros({2})); },
              ThrowsMessage<Error>(
                  "matmul: both operands need at least 1 dimension, got shapes [] and [2]"));
  EXPECT_THAT(
      [] {
        Matmul(Arange(4).View({2, 2}), Arange(4).View({2, 2}));
      },
      ThrowsMessage<Error>("matmul: expected floating-point tensors, got dtype i64"));
}

}  // namespace
}  // namespace ember::ops
