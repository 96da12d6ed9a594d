#include "tensor/ops/reduce.h"

#include <cmath>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::ops {
namespace {

using ::testing::ThrowsMessage;

// The brute-force reduction: every input element added into the output element its
// index maps to (reduced dimensions set to 0).
template <typename Combine>
std::vector<double> BruteForce(const Tensor& x, const std::vector<bool>& reduced, double init,
                               Combine combine, Shape* out_shape) {
  out_shape->clear();
  for (int64_t d = 0; d < x.dim(); ++d) out_shape->push_back(reduced[d] ? 1 : x.size(d));
  std::vector<double> out(NumElements(*out_shape), init);
  const Strides strides = ContiguousStrides(*out_shape);
  for (NdIndexIterator it(x.shape()); !it.done(); it.Next()) {
    Shape index = it.index();
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (reduced[d]) index[d] = 0;
    }
    double& slot = out[FlatIndex(index, strides)];
    slot = combine(slot, x.at(it.index()));
  }
  return out;
}

TEST(ReduceOpsTest, EverySubsetOfDimensionsMatchesBruteForce) {
  Generator gen(21);
  std::mt19937 rng(22);
  for (int trial = 0; trial < 60; ++trial) {
    Shape shape(std::uniform_int_distribution<int>(1, 4)(rng));
    for (int64_t& s : shape) s = std::uniform_int_distribution<int>(1, 6)(rng);
    Tensor x = Randn(shape, gen, DType::kF64);
    if (trial % 3 == 1 && x.dim() >= 2) x = x.Transpose(0, -1);  // non-contiguous input
    Shape dims;
    std::vector<bool> reduced(x.dim(), false);
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (rng() % 2) {
        dims.push_back(rng() % 2 ? d : d - x.dim());  // negative dims too
        reduced[d] = true;
      }
    }
    if (dims.empty()) reduced.assign(x.dim(), true);  // empty dims: reduce everything
    Shape keep_shape;
    const std::vector<double> sum = BruteForce(
        x, reduced, 0.0, [](double a, double b) { return a + b; }, &keep_shape);
    const std::vector<double> max = BruteForce(
        x, reduced, -INFINITY, [](double a, double b) { return std::max(a, b); }, &keep_shape);
    const Tensor s = Sum(x, dims, /*keepdim=*/true);
    ASSERT_EQ(s.shape(), keep_shape) << ShapeToString(shape);
    const std::vector<double> got = s.ToVector<double>(),
                              got_max = Max(x, dims, true).ToVector<double>();
    int64_t count = 1;
    for (int64_t d = 0; d < x.dim(); ++d) count *= reduced[d] ? x.size(d) : 1;
    const std::vector<double> mean = Mean(x, dims, true).ToVector<double>();
    for (size_t i = 0; i < sum.size(); ++i) {
      ASSERT_NEAR(got[i], sum[i], 1e-12);
      ASSERT_NEAR(mean[i], sum[i] / count, 1e-12);
      ASSERT_EQ(got_max[i], max[i]);
    }
    // Without keepdim the reduced dimensions are gone.
    Shape dropped;
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (!reduced[d]) dropped.push_back(x.size(d));
    }
    ASSERT_EQ(Sum(x, dims).shape(), dropped);
  }
}

TEST(ReduceOpsTest, SumOfSquaresOfAnyLayout) {
  const Tensor x = FromList({{1.0, -2.0, 3.0}, {0.5, 4.0, -1.5}});  // 1 + 4 + 9 + 0.25 + 16 + 2.25
  EXPECT_DOUBLE_EQ(SumOfSquares(x).item(), 32.5);
  EXPECT_DOUBLE_EQ(SumOfSquares(x.Transpose(0, 1)).item(), 32.5);
  EXPECT_DOUBLE_EQ(SumOfSquares(x.Slice(1, 0, 3, 2)).item(), 1 + 9 + 0.25 + 2.25);
  EXPECT_DOUBLE_EQ(SumOfSquares(x.To(DType::kBF16)).item(), 32.5);
  EXPECT_DOUBLE_EQ(SumOfSquares(Zeros({0})).item(), 0);
  EXPECT_THROW(SumOfSquares(Zeros({2}, DType::kI64)), Error);
}

TEST(ReduceOpsTest, LeadingDimensionsReadDownColumns) {
  // [batch, features] summed over the batch: the bias gradient.
  const Tensor x = Arange(0.0, 12.0, 1.0).View({4, 3});
  EXPECT_EQ(Sum(x, {0}).ToVector<float>(), (std::vector<float>{18, 22, 26}));
  EXPECT_EQ(Sum(x.View({2, 2, 3}), {0, 1}).ToVector<float>(), (std::vector<float>{18, 22, 26}));
  EXPECT_EQ(Sum(x, {-1}).ToVector<float>(), (std::vector<float>{3, 12, 21, 30}));
  EXPECT_EQ(Sum(x).item(), 66.0);
  EXPECT_EQ(Sum(x).dim(), 0);
}

TEST(ReduceOpsTest, VarArgMaxMinAndHalfPrecision) {
  const Tensor x = FromList({{1.0, 5.0, 3.0}, {4.0, 2.0, 9.0}});
  EXPECT_EQ(Var(x, {1}).ToVector<float>(), (std::vector<float>{4, 13}));
  EXPECT_NEAR(Var(x, {}, 0).item(), 40.0 / 6, 1e-6);  // population variance: mean 4
  EXPECT_EQ(ArgMax(x, 1).ToVector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ArgMax(x, 0, true).shape(), (Shape{1, 3}));
  EXPECT_EQ(ArgMax(x).item<int64_t>(), 5);
  EXPECT_EQ(ArgMax(FromList({3.0, 7.0, 7.0})).item<int64_t>(), 1);  // the first maximum
  EXPECT_EQ(ArgMax(FromList({{4, -2}, {1, 8}}), 1).ToVector<int64_t>(),
            (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ArgMax(FromList({false, true, true})).item<int64_t>(), 1);
  EXPECT_EQ(Min(x, {0}).ToVector<float>(), (std::vector<float>{1, 2, 3}));
  const Tensor h = Sum(Ones({300}, DType::kBF16));
  EXPECT_EQ(h.dtype(), DType::kBF16);
  EXPECT_EQ(h.item(), 300.0);  // summed in f32, rounded once
  // Down the columns (a bias's gradient) too: 256 + 1 + ... + 1 in bf16 steps would
  // stay 256 (its spacing there is 2); in f32 it is 300.
  Tensor column = Ones({45, 2}, DType::kBF16);
  column.Select(0, 0).Fill(256.0);
  const Tensor sums = Sum(column, {0});
  EXPECT_EQ(sums.dtype(), DType::kBF16);
  EXPECT_EQ(sums.ToVector<float>(), (std::vector<float>{300, 300}));
  EXPECT_EQ(Sum(column.Transpose(0, 1), {1}).ToVector<float>(), (std::vector<float>{300, 300}));
  EXPECT_TRUE(std::isnan(Max(FromList({1.0, NAN})).item()));
  EXPECT_TRUE(std::isnan(Mean(Zeros({0})).item()));
  EXPECT_EQ(Sum(Zeros({0, 3}), {0}).ToVector<float>(), (std::vector<float>{0, 0, 0}));
}

TEST(ReduceOpsTest, ErrorsNameTheOp) {
  EXPECT_THAT(
      [] {
        Sum(Zeros({2, 3}), {0, -2});
      },
      ThrowsMessage<Error>("sum: dimension -2 appears twice in [0, -2]"));
  EXPECT_THAT(
      [] {
        Max(Zeros({2, 0}), {1});
      },
      ThrowsMessage<Error>("max: cannot reduce over dimension 1 of size 0 (shape [2, 0])"));
  EXPECT_THAT(
      [] { Sum(Arange(3)); },
      ThrowsMessage<Error>("sum: expected a floating-point tensor, got dtype i64 (shape [3])"));
  EXPECT_THAT([] { Mean(Zeros({2}), {1}); },
              ThrowsMessage<Error>(
                  "mean: dimension 1 is out of range for a 1-d tensor (expected -1 to 0)"));
}

TEST(ReduceOpsTest, SumToSizeUndoesABroadcast) {
  const Tensor x = Arange(0, 24, 1, DType::kF64).View({2, 3, 4});
  // [3, 1] broadcasts to [2, 3, 4]: sum over dim 0 and dim 2.
  EXPECT_EQ(SumToSize(x, {3, 1}).ToVector<double>(), (std::vector<double>{60, 92, 124}));
  EXPECT_EQ(SumToSize(x, {1, 4}).ToVector<double>(), (std::vector<double>{60, 66, 72, 78}));
  EXPECT_EQ(SumToSize(x, {}).item(), 276);
  EXPECT_TRUE(SumToSize(x, {2, 3, 4}).is_same(x));
  EXPECT_THROW(SumToSize(x, {2, 4}), Error);
  EXPECT_THROW(SumToSize(x, {1, 2, 3, 4, 5}), Error);
}

}  // namespace
}  // namespace ember::ops
