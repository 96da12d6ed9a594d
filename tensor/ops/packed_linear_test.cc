// PackedLinear at the tensor level: shapes and dtypes as Linear's, the same numbers as
// Linear on the weights the format stores, and clear errors. The kernel's table of
// cases is kernels/packed_linear_test.cc.

#include "tensor/ops/packed_linear.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/matmul.h"
#include "tensor/random.h"

namespace ember::ops {
namespace {

// The largest |a - b| over |b|'s largest entry.
double RelativeError(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.ToVector<double>(), y = b.ToVector<double>();
  double err = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err = std::max(err, std::fabs(x[i] - y[i]));
    scale = std::max(scale, std::fabs(y[i]));
  }
  return err / scale;
}

TEST(PackedLinearTest, MatchesLinearOnTheStoredWeights) {
  Generator gen(5);
  const Tensor w = Randn({70, 40}, gen), b = Randn({70}, gen), x = Randn({2, 3, 40}, gen);
  const Tensor f32 = PackedLinear(x, PackWeight(w, PackedFormat::kF32), b);
  EXPECT_EQ(f32.shape(), (Shape{2, 3, 70}));
  EXPECT_LT(RelativeError(f32, Linear(x, w, b)), 1e-6);
  // bf16 weights: Linear's on bf16(W), in f32.
  const Tensor rounded = w.To(DType::kBF16).To(DType::kF32);
  EXPECT_LT(
      RelativeError(PackedLinear(x, PackWeight(w, PackedFormat::kBF16), b), Linear(x, rounded, b)),
      1e-6);
  // int8: within the quantization's error (a scale per 32 weights, half a level each).
  EXPECT_LT(RelativeError(PackedLinear(x, PackWeight(w, PackedFormat::kI8), b), Linear(x, w, b)),
            0.02);
  // bf16 x: a bf16 y, as Linear's under autocast.
  const Tensor y = PackedLinear(x.To(DType::kBF16), PackWeight(w, PackedFormat::kBF16), Tensor());
  EXPECT_EQ(y.dtype(), DType::kBF16);
  EXPECT_LT(RelativeError(y, Linear(x.To(DType::kBF16), w.To(DType::kBF16), Tensor())), 1e-2);
  // A transposed (non-contiguous) weight packs as its values.
  const Tensor wt = Randn({40, 70}, gen).Transpose(0, 1);
  EXPECT_LT(RelativeError(PackedLinear(x, PackWeight(wt, PackedFormat::kF32), Tensor()),
                          Linear(x, wt, Tensor())),
            1e-6);
}

TEST(PackedLinearTest, ErrorsNameTheProblem) {
  const Tensor w = Ones({8, 4});
  const PackedWeight packed = PackWeight(w, PackedFormat::kBF16);
  EXPECT_THROW(PackedLinear(Ones({2, 5}), packed, Tensor()), Error);
  EXPECT_THROW(PackedLinear(Ones({2, 4}, DType::kF64), packed, Tensor()), Error);
  EXPECT_THROW(PackedLinear(Ones({2, 4}), packed, Ones({7})), Error);
  EXPECT_THROW(PackWeight(Ones({8}), PackedFormat::kF32), Error);
  EXPECT_THROW(PackWeight(Ones({8, 4}, DType::kBF16), PackedFormat::kF32), Error);
  EXPECT_THROW(PackedLinear(Ones({2, 4}), PackedWeight{}, Tensor()), Error);
  EXPECT_EQ(PackedFormatFromName("int8").value(), PackedFormat::kI8);
  EXPECT_FALSE(PackedFormatFromName("q4").ok());
}

}  // namespace
}  // namespace ember::ops
