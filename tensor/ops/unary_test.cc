#include "tensor/ops/unary.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"

namespace ember::ops {
namespace {

using ::testing::ThrowsMessage;

// The inputs of tools/reference/unary_ops.py.
const std::vector<double> kInputs = {-6.0, -2.5, -1.0, -0.75, -0.1, 0.0,
                                     0.1,  0.5,  1.0,  2.0,   3.75, 9.0};
const std::vector<double> kPositive = {1e-3, 0.1, 0.5, 1.0, 2.0, 3.75, 9.0, 100.0};
const std::vector<double> kUpstream = {0.5, -1.0, 2.0,  1.0, -0.25, 1.5,
                                       1.0, -2.0, 0.75, 1.0, -1.0,  0.5};

struct Forward {
  std::function<Tensor(const Tensor&)> fn;
  bool positive;
};

const std::map<std::string, Forward>& ForwardOps() {
  static const auto* ops = new std::map<std::string, Forward>{
      {"neg", {Neg, false}},
      {"abs", {Abs, false}},
      {"exp", {Exp, false}},
      {"log", {Log, true}},
      {"sqrt", {Sqrt, true}},
      {"rsqrt", {Rsqrt, true}},
      {"reciprocal", {Reciprocal, true}},
      {"square", {Square, false}},
      {"tanh", {Tanh, false}},
      {"sigmoid", {Sigmoid, false}},
      {"relu", {Relu, false}},
      {"gelu_tanh", {GeluTanh, false}},
      {"gelu_erf", {GeluErf, false}},
      {"pow_3", {[](const Tensor& x) { return Pow(x, 3); }, false}},
      {"pow_1.7", {[](const Tensor& x) { return Pow(x, 1.7); }, true}},
  };
  return *ops;
}

Tensor Backward(const std::string& name, const Tensor& x, const Tensor& g) {
  if (name == "relu_backward") return ReluBackward(x, g);
  if (name == "tanh_backward") return TanhBackward(Tanh(x), g);  // from the output
  if (name == "sigmoid_backward") return SigmoidBackward(Sigmoid(x), g);
  if (name == "gelu_tanh_backward") return GeluTanhBackward(x, g);
  if (name == "gelu_erf_backward") return GeluErfBackward(x, g);
  ADD_FAILURE() << "unknown op " << name;
  return x;
}

TEST(UnaryOpsTest, MatchesPyTorch) {
  std::ifstream file("tensor/ops/testdata/unary_reference.txt");
  ASSERT_TRUE(file.good());
  std::string line;
  int checked = 0;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string name, dtype_name;
    in >> name >> dtype_name;
    std::vector<double> want;
    for (double v; in >> v;) want.push_back(v);
    const DType dtype = ParseDType(dtype_name).value();
    Tensor got;
    if (ForwardOps().count(name)) {
      const Forward& op = ForwardOps().at(name);
      got = op.fn(FromVector(op.positive ? kPositive : kInputs).To(dtype));
    } else {
      got = Backward(name, FromVector(kInputs).To(dtype), FromVector(kUpstream).To(dtype));
    }
    ASSERT_EQ(got.dtype(), dtype) << name;
    const std::vector<double> values = got.ToVector<double>();
    ASSERT_EQ(values.size(), want.size()) << name;
    // f32: a few ulps of PyTorch's own SIMD math; bf16: one bf16 rounding apart at most.
    const double rtol = dtype == DType::kF32 ? 1e-6 : 8e-3, atol = 1e-7;
    for (size_t i = 0; i < values.size(); ++i) {
      EXPECT_NEAR(values[i], want[i], rtol * std::fabs(want[i]) + atol)
          << name << " " << dtype_name << " element " << i;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 35);
}

TEST(UnaryOpsTest, NonContiguousInputsAndF64) {
  const Tensor x = Arange(0.0, 12.0, 1.0, DType::kF64).View({3, 4}).Transpose(0, 1);
  const Tensor y = Exp(x);
  EXPECT_TRUE(y.is_contiguous());
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  EXPECT_EQ(y.dtype(), DType::kF64);
  EXPECT_DOUBLE_EQ(y.at({1, 2}), std::exp(9.0));
  EXPECT_EQ(Square(FromList({1.0, 2.0}).Expand({3, 2})).ToVector<float>(),
            (std::vector<float>{1, 4, 1, 4, 1, 4}));
  EXPECT_EQ(Relu(Zeros({0, 3})).shape(), (Shape{0, 3}));
}

TEST(UnaryOpsTest, ErrorsNameTheOp) {
  EXPECT_THAT(
      [] { Exp(Arange(3)); },
      ThrowsMessage<Error>("exp: expected a floating-point tensor, got dtype i64 (shape [3])"));
  EXPECT_THAT(
      [] {
        GeluTanhBackward(Zeros({2, 3}), Zeros({3}));
      },
      ThrowsMessage<Error>(
          "gelu_tanh_backward: grad_out of shape [3] does not match the input's shape [2, 3]"));
  EXPECT_THAT([] { TanhBackward(Zeros({2}), Zeros({2}, DType::kF64)); },
              ThrowsMessage<Error>("tanh_backward: grad_out has dtype f64 but the input has f32"));
}

}  // namespace
}  // namespace ember::ops
