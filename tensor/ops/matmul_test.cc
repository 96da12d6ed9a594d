#include "tensor/ops/matmul.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/unary.h"
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

TEST(MatmulOpsTest, RowsOfABatchAgainstOneMatrixAreOneProduct) {
  // [2, 3, 5, 4] x [4, 6]: merged into one [30, 4] product when the leading dimensions
  // merge (contiguous, or a slice of whole rows), batch by batch when they do not.
  Generator gen(5);
  const Tensor b = Randn({4, 6}, gen, DType::kF64);
  const Tensor full = Randn({2, 3, 7, 4}, gen, DType::kF64);
  for (const Tensor& a :
       {full.Slice(2, 0, 5).Contiguous(), full.Slice(2, 1, 6), full.Transpose(0, 1)}) {
    const Tensor c = Matmul(a, b);
    ASSERT_EQ(c.shape(), (Shape{a.size(0), a.size(1), a.size(2), 6}));
    const Tensor bb = b.Expand({a.size(0), a.size(1), 4, 6});
    for (NdIndexIterator it(c.shape()); !it.done(); it.Next()) {
      ASSERT_NEAR(c.at(it.index()), Element(a, bb, it.index()), 1e-12);
    }
  }
}

TEST(MatmulOpsTest, LinearIsTheProductWithTheTransposedWeightPlusTheBias) {
  Generator gen(6);
  for (const DType dtype : {DType::kF64, DType::kF32, DType::kBF16}) {
    const Tensor w = Randn({6, 4}, gen, dtype), bias = Randn({6}, gen, dtype);
    for (const Tensor& x : {Randn({2, 3, 4}, gen, dtype),
                            Randn({3, 2, 4}, gen, dtype).Transpose(0, 1), Randn({4}, gen, dtype)}) {
      const Tensor y = Linear(x, w, bias);
      Shape shape(x.shape().begin(), x.shape().end() - 1);
      shape.push_back(6);
      ASSERT_EQ(y.shape(), shape);
      ASSERT_EQ(y.dtype(), dtype);
      const Tensor expected = Matmul(x.To(DType::kF64), w.To(DType::kF64).Transpose(0, 1));
      const double tolerance = dtype == DType::kBF16 ? 0.05 : dtype == DType::kF32 ? 1e-5 : 1e-12;
      for (NdIndexIterator it(y.shape()); !it.done(); it.Next()) {
        ASSERT_NEAR(y.at(it.index()), expected.at(it.index()) + bias.at({it.index().back()}),
                    tolerance * (1 + std::abs(expected.at(it.index()))));
      }
      const Tensor no_bias = Linear(x, w, Tensor());
      for (NdIndexIterator it(y.shape()); !it.done(); it.Next()) {
        ASSERT_NEAR(no_bias.at(it.index()), expected.at(it.index()),
                    tolerance * (1 + std::abs(expected.at(it.index()))));
      }
    }
  }
  EXPECT_THAT(
      [] {
        Linear(Zeros({2, 3}), Zeros({4, 5}), Tensor());
      },
      ThrowsMessage<Error>(
          "linear: input of shape [2, 3] and weight of shape [4, 5] (expected [..., in] and "
          "[out, in])"));
  EXPECT_THAT(
      [] {
        Linear(Zeros({2, 5}), Zeros({4, 5}), Zeros({3}));
      },
      ThrowsMessage<Error>("linear: bias of shape [3] for 4 outputs"));
}

// bf16 operands: the products summed in f32 and each result rounded once to bf16 (the
// batched path, a transposed operand, and Linear's fused bias), within one bf16
// rounding (2^-8 relative) plus the f32 sum's error of the float64 product.
TEST(MatmulOpsTest, Bf16SumsInF32AndRoundsOnce) {
  Generator gen(8);
  const Tensor a = Randn({3, 5, 40}, gen, DType::kBF16), b = Randn({3, 50, 40}, gen, DType::kBF16);
  const Tensor bias = Randn({50}, gen, DType::kBF16);
  const Tensor want = Matmul(a.To(DType::kF64), b.To(DType::kF64).Transpose(1, 2));
  const Tensor scale = Matmul(Abs(a.To(DType::kF64)), Abs(b.To(DType::kF64)).Transpose(1, 2));
  const Tensor got = Matmul(a, b.Transpose(1, 2));
  const Tensor linear = Linear(a, b.Select(0, 0), bias);
  ASSERT_EQ(got.dtype(), DType::kBF16);
  ASSERT_EQ(linear.dtype(), DType::kBF16);
  for (NdIndexIterator it(got.shape()); !it.done(); it.Next()) {
    const double w = want.at(it.index()), s = scale.at(it.index());
    ASSERT_LE(std::abs(got.at(it.index()) - w), 0x1p-8 * std::abs(w) + 42 * 0x1p-24 * s);
    if (it.index()[0] == 0) {
      const double with_bias = w + bias.at({it.index()[2]});
      ASSERT_LE(std::abs(linear.at(it.index()) - with_bias),
                0x1p-8 * std::abs(with_bias) + 42 * 0x1p-24 * (s + std::abs(with_bias)));
    }
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
