#include "tensor/ops/softmax.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/testing.h"

namespace ember::ops {
namespace {

using ::testing::ThrowsMessage;

// The inputs of tools/reference/softmax_ops.py.
constexpr int64_t kRows = 5, kCols = 11;
Tensor X() {
  std::vector<float> x;
  for (int i = 0; i < kRows; ++i) {
    for (int j = 0; j < kCols; ++j) {
      x.push_back(static_cast<float>(std::sin(0.7 * i + 1.3 * j) * 4 + (i == 3 ? 500 : 0)));
    }
  }
  return FromVector(x, {kRows, kCols});
}
Tensor DY() {
  std::vector<float> dy;
  for (int i = 0; i < kRows; ++i) {
    for (int j = 0; j < kCols; ++j) dy.push_back(static_cast<float>(std::cos(0.3 * i - 0.9 * j)));
  }
  return FromVector(dy, {kRows, kCols});
}
const Tensor kTargets = FromList({3, 0, -100, 10, 7});

TEST(SoftmaxOpsTest, MatchesPyTorch) {
  const auto reference = testing::ReadFixture("tensor/ops/testdata/softmax_reference.txt");
  const Tensor y = Softmax(X()), logy = LogSoftmax(X());
  testing::ExpectClose(y, reference.at("softmax"), 1e-6, "softmax");
  testing::ExpectClose(logy, reference.at("log_softmax"), 1e-6, "log_softmax");
  testing::ExpectClose(SoftmaxBackward(y, DY()), reference.at("softmax_grad"), 1e-6,
                       "softmax_grad");
  testing::ExpectClose(LogSoftmaxBackward(logy, DY()), reference.at("log_softmax_grad"), 1e-6,
                       "log_softmax_grad");
  const CrossEntropyResult ce = CrossEntropy(X(), kTargets);
  EXPECT_EQ(ce.count.item(), 4);
  testing::ExpectClose(ce.loss, reference.at("cross_entropy"), 1e-6, "cross_entropy");
  testing::ExpectClose(CrossEntropyBackward(X(), kTargets, ce, Full({}, 2.5)),
                       reference.at("cross_entropy_grad"), 1e-6, "cross_entropy_grad");
}

TEST(SoftmaxOpsTest, AnyLeadingShapeAndF64) {
  const Tensor x = X().To(DType::kF64).View({5, 1, 11}).Expand({5, 2, 11});
  const Tensor y = Softmax(x);
  EXPECT_EQ(y.shape(), (Shape{5, 2, 11}));
  EXPECT_EQ(y.dtype(), DType::kF64);
  EXPECT_NEAR(y.Select(0, 4).Select(0, 1).ToVector<double>()[3],
              Softmax(X()).Select(0, 4).ToVector<double>()[3], 1e-6);
  // All-ignored targets: the mean over no rows is NaN, and the gradient is zero.
  const CrossEntropyResult none = CrossEntropy(X(), Full({5}, -100, DType::kI64));
  EXPECT_TRUE(std::isnan(none.loss.item()));
  for (float g : CrossEntropyBackward(X(), Full({5}, -100, DType::kI64), none, Full({}, 1.0))
                     .ToVector<float>()) {
    EXPECT_EQ(g, 0.0f);
  }
}

// bf16 logits go to the kernel as they are: the loss is the f32 kernel's on the same
// (widened) values, in bf16 or in the dtype asked for, and the gradient is the f32 one
// rounded once to bf16.
TEST(SoftmaxOpsTest, CrossEntropyOnBf16Logits) {
  const Tensor x16 = X().To(DType::kBF16), x32 = x16.To(DType::kF32);
  const CrossEntropyResult ce16 = CrossEntropy(x16, kTargets);
  const CrossEntropyResult wide = CrossEntropy(x16, kTargets, -100, DType::kF32);
  const CrossEntropyResult ce32 = CrossEntropy(x32, kTargets);
  EXPECT_EQ(ce16.loss.dtype(), DType::kBF16);
  EXPECT_EQ(ce16.loss.item(), ce32.loss.To(DType::kBF16).item());
  EXPECT_EQ(wide.loss.dtype(), DType::kF32);
  EXPECT_EQ(wide.loss.item(), ce32.loss.item());
  const Tensor g16 = CrossEntropyBackward(x16, kTargets, wide, Full({}, 2.5));
  EXPECT_EQ(g16.dtype(), DType::kBF16);
  EXPECT_EQ(
      g16.ToVector<float>(),
      CrossEntropyBackward(x32, kTargets, ce32, Full({}, 2.5)).To(DType::kBF16).ToVector<float>());
}

TEST(SoftmaxOpsTest, ErrorsNameTheProblem) {
  EXPECT_THAT(
      [] {
        CrossEntropy(X(), FromList({1, 2, 3, 4, 11}));
      },
      ThrowsMessage<Error>("cross_entropy: target 11 at row 4 is out of range for 11 classes"));
  EXPECT_THAT(
      [] {
        CrossEntropy(X(), FromList({1, 2}));
      },
      ThrowsMessage<Error>("cross_entropy: expected logits [rows, classes] and targets [rows], "
                           "got [5, 11] and [2]"));
  EXPECT_THAT([] { CrossEntropy(X(), Zeros({5})); },
              ThrowsMessage<Error>("cross_entropy: targets must be i64, got f32"));
  EXPECT_THAT(
      [] { Softmax(Arange(3)); },
      ThrowsMessage<Error>("softmax: expected a floating-point tensor, got dtype i64 (shape [3])"));
}

}  // namespace
}  // namespace ember::ops
