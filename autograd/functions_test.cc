// Every differentiable function against float64 central differences (GradCheck), on
// random inputs: broadcast operands, transposed / sliced / expanded layouts, and one
// input used twice.

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/elementwise.h"
#include "autograd/engine.h"
#include "autograd/functional.h"
#include "autograd/gradcheck.h"
#include "autograd/reduce.h"
#include "autograd/views.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/reduce.h"
#include "tensor/ops/unary.h"
#include "tensor/random.h"
#include "tensor/storage.h"

namespace ember::autograd {
namespace {

Generator& Gen() {
  static Generator gen(2024);
  return gen;
}

// A leaf in [lo, hi): f64, requiring gradients.
Tensor Leaf(IntSpan shape, double lo = -1, double hi = 1) {
  return SetRequiresGrad(Uniform(shape, lo, hi, Gen(), DType::kF64));
}
// A leaf whose own layout is transposed (not contiguous).
Tensor TransposedLeaf(IntSpan shape, double lo = -1, double hi = 1) {
  const Shape flipped = {shape[1], shape[0]};
  return SetRequiresGrad(Uniform(flipped, lo, hi, Gen(), DType::kF64).Transpose(0, 1));
}
// A leaf that is every other column of a wider tensor.
Tensor SlicedLeaf(IntSpan shape, double lo = -1, double hi = 1) {
  return SetRequiresGrad(
      Uniform({shape[0], 2 * shape[1]}, lo, hi, Gen(), DType::kF64).Slice(1, 0, Tensor::kEnd, 2));
}

constexpr double kTolerance = 1e-7;

void Check(const std::string& name, const TensorFn& f, const std::vector<Tensor>& inputs) {
  const std::vector<double> errors = GradCheck(f, inputs);
  for (size_t i = 0; i < errors.size(); ++i) {
    EXPECT_LT(errors[i], kTolerance) << name << ", input " << i;
  }
}

// The checker itself: a function recorded with a backward that is off by 1% in one
// element is caught.
TEST(FunctionsTest, GradCheckCatchesAWrongGradient) {
  auto wrong = [](const std::vector<Tensor>& in) {
    const Tensor x = in[0];
    const Tensor square = WithoutGrad([&] { return ops::Mul(x, x); });
    return Record("wrong_square", square, {x}, [x = Detach(x)](const Tensor& g) {
      const Tensor grad = ops::Mul(ops::Mul(x, g), 2.0);
      grad.Select(0, 1).CopyFrom(ops::Mul(grad.Select(0, 1), 1.01));
      return std::vector<Tensor>{grad};
    });
  };
  const Tensor x = SetRequiresGrad(FromList({1.0, 2.0, 3.0}, DType::kF64));
  const std::vector<double> errors = GradCheck(wrong, {x});
  EXPECT_GT(errors[0], 1e-3);
  EXPECT_LT(errors[0], 1e-2);
}

// f(x) for each unary function, on x of two layouts.
TEST(FunctionsTest, Unary) {
  struct Case {
    const char* name;
    Tensor (*f)(const Tensor&);
    double lo, hi;
  };
  const Case cases[] = {
      {"neg", Neg, -2, 2},          {"exp", Exp, -2, 2},
      {"log", Log, 0.5, 3},         {"sqrt", Sqrt, 0.5, 3},
      {"rsqrt", Rsqrt, 0.5, 3},     {"reciprocal", Reciprocal, 0.5, 3},
      {"square", Square, -2, 2},    {"tanh", Tanh, -2, 2},
      {"sigmoid", Sigmoid, -3, 3},  {"gelu_tanh", GeluTanh, -3, 3},
      {"gelu_erf", GeluErf, -3, 3}, {"abs", Abs, 0.1, 2},
      {"relu", Relu, 0.1, 2},       {"sin", Sin, -4, 4},
      {"cos", Cos, -4, 4},
  };
  for (const Case& c : cases) {
    auto f = [&c](const std::vector<Tensor>& in) { return c.f(in[0]); };
    Check(c.name, f, {Leaf({3, 4}, c.lo, c.hi)});
    Check(std::string(c.name) + " transposed", f, {TransposedLeaf({3, 4}, c.lo, c.hi)});
  }
  // abs and relu on both sides of their kink (not at it).
  const Tensor mixed = SetRequiresGrad(FromList({-1.5, -0.5, 0.5, 1.5}, DType::kF64));
  Check("abs mixed", [](const auto& in) { return Abs(in[0]); }, {mixed});
  Check("relu mixed", [](const auto& in) { return Relu(in[0]); }, {mixed});
  Check("pow 3", [](const auto& in) { return Pow(in[0], 3.0); }, {Leaf({5}, -2, 2)});
  Check("pow -0.5", [](const auto& in) { return Pow(in[0], -0.5); }, {Leaf({5}, 0.5, 2)});
}

TEST(FunctionsTest, BinaryWithBroadcasting) {
  struct Case {
    const char* name;
    Tensor (*f)(const Tensor&, const Tensor&);
    double lo, hi;
  };
  const Case cases[] = {{"add", Add, -1, 1},        {"sub", Sub, -1, 1},
                        {"mul", Mul, -1, 1},        {"div", Div, 0.5, 2},
                        {"pow", Pow, 0.5, 2},       {"maximum", Maximum, -1, 1},
                        {"minimum", Minimum, -1, 1}};
  for (const Case& c : cases) {
    auto f = [&c](const std::vector<Tensor>& in) { return c.f(in[0], in[1]); };
    Check(std::string(c.name) + " same shape", f,
          {Leaf({3, 4}, c.lo, c.hi), Leaf({3, 4}, c.lo, c.hi)});
    Check(std::string(c.name) + " row", f, {Leaf({3, 4}, c.lo, c.hi), Leaf({4}, c.lo, c.hi)});
    Check(std::string(c.name) + " outer", f, {Leaf({3, 1}, c.lo, c.hi), Leaf({1, 4}, c.lo, c.hi)});
    Check(std::string(c.name) + " strided", f,
          {TransposedLeaf({3, 4}, c.lo, c.hi), SlicedLeaf({3, 4}, c.lo, c.hi)});
    // One input on both sides: its two gradients are summed.
    Check(std::string(c.name) + " x with x", [&c](const auto& in) { return c.f(in[0], in[0]); },
          {Leaf({5}, c.lo, c.hi)});
  }
  // Ties in maximum / minimum split the gradient.
  const Tensor a = SetRequiresGrad(FromList({1.0, 2.0, 3.0}, DType::kF64));
  const Tensor b = SetRequiresGrad(FromList({1.0, 5.0, 0.0}, DType::kF64));
  Backward(Sum(Maximum(a, b)));
  EXPECT_EQ(Grad(a).ToVector<double>(), (std::vector<double>{0.5, 0, 1}));
  EXPECT_EQ(Grad(b).ToVector<double>(), (std::vector<double>{0.5, 1, 0}));
}

TEST(FunctionsTest, ScalarForms) {
  const Tensor x = Leaf({2, 3}, 0.5, 2);
  Check("x + 2", [](const auto& in) { return in[0] + 2.0; }, {x});
  Check("x - 2", [](const auto& in) { return in[0] - 2.0; }, {x});
  Check("2 - x", [](const auto& in) { return 2.0 - in[0]; }, {x});
  Check("x * 3", [](const auto& in) { return in[0] * 3.0; }, {x});
  Check("3 * x", [](const auto& in) { return 3.0 * in[0]; }, {x});
  Check("x / 4", [](const auto& in) { return in[0] / 4.0; }, {x});
  Check("4 / x", [](const auto& in) { return 4.0 / in[0]; }, {x});
  Check("-x", [](const auto& in) { return -in[0]; }, {x});
}

TEST(FunctionsTest, WhereAndMaskedFill) {
  const Tensor condition = ops::Gt(Uniform({3, 4}, -1, 1, Gen(), DType::kF64), 0.0);
  Check("where", [&](const auto& in) { return Where(condition, in[0], in[1]); },
        {Leaf({3, 4}), Leaf({4})});
  Check("masked_fill", [&](const auto& in) { return MaskedFill(in[0], condition, 7.0); },
        {TransposedLeaf({3, 4})});
}

TEST(FunctionsTest, Reductions) {
  for (bool keepdim : {false, true}) {
    for (Shape dims : {Shape{}, Shape{0}, Shape{-1}, Shape{0, 2}}) {
      const std::string where = " dims " + ShapeToString(dims) + (keepdim ? " keepdim" : "");
      Check("sum" + where, [&](const auto& in) { return Sum(in[0], dims, keepdim); },
            {Leaf({2, 3, 4})});
      Check("mean" + where, [&](const auto& in) { return Mean(in[0], dims, keepdim); },
            {Leaf({2, 3, 4})});
      Check("max" + where, [&](const auto& in) { return Max(in[0], dims, keepdim); },
            {Leaf({2, 3, 4})});
      Check("min" + where, [&](const auto& in) { return Min(in[0], dims, keepdim); },
            {Leaf({2, 3, 4})});
      Check("var" + where, [&](const auto& in) { return Var(in[0], dims, 1, keepdim); },
            {Leaf({2, 3, 4})});
      Check("var population" + where, [&](const auto& in) { return Var(in[0], dims, 0, keepdim); },
            {Leaf({2, 3, 4})});
    }
  }
  Check("sum transposed", [](const auto& in) { return Sum(in[0], {1}); }, {TransposedLeaf({3, 5})});
  // A tie in max shares the gradient evenly.
  const Tensor x = SetRequiresGrad(FromList({1.0, 3.0, 3.0}, DType::kF64));
  Backward(Max(x));
  EXPECT_EQ(Grad(x).ToVector<double>(), (std::vector<double>{0, 0.5, 0.5}));
}

TEST(FunctionsTest, Views) {
  const Tensor x = Leaf({2, 3, 4});
  Check("view", [](const auto& in) { return View(in[0], {6, 4}); }, {x});
  Check("reshape of transposed", [](const auto& in) { return Reshape(in[0], {12}); },
        {TransposedLeaf({3, 4})});
  Check("permute", [](const auto& in) { return Permute(in[0], {2, 0, 1}); }, {x});
  Check("transpose", [](const auto& in) { return Transpose(in[0], 0, -1); }, {x});
  Check("slice", [](const auto& in) { return Slice(in[0], 2, 1, 4, 2); }, {x});
  Check("narrow", [](const auto& in) { return Narrow(in[0], 1, 1, 2); }, {x});
  Check("select", [](const auto& in) { return Select(in[0], 0, 1); }, {x});
  Check("expand", [](const auto& in) { return Expand(in[0], {2, 3, 4}); }, {Leaf({3, 1})});
  Check("squeeze", [](const auto& in) { return Squeeze(in[0]); }, {Leaf({3, 1, 2})});
  Check("squeeze dim", [](const auto& in) { return Squeeze(in[0], 1); }, {Leaf({3, 1, 2})});
  Check("unsqueeze", [](const auto& in) { return Unsqueeze(in[0], 1); }, {x});
  Check("flatten", [](const auto& in) { return Flatten(in[0], 1); }, {x});
  Check("contiguous", [](const auto& in) { return Contiguous(in[0]); }, {TransposedLeaf({3, 4})});
  Check("clone", [](const auto& in) { return Clone(in[0]); }, {TransposedLeaf({3, 4})});
  // Pieces used unevenly: each piece's gradient lands in its own slab.
  Check("split",
        [](const auto& in) {
          const std::vector<Tensor> p = Split(in[0], 2, 1);
          return Cat({p[0] * 2.0, p[1] * p[1]}, 1);
        },
        {Leaf({3, 4})});
  // Views of one tensor that overlap, one of them a strided slice: each later view's
  // gradient is added into the picked elements of the one before (Picked's add_backward).
  Check("overlapping views",
        [](const auto& in) {
          return Narrow(in[0], 1, 0, 2) * 2.0 + Narrow(in[0], 1, 1, 2) * Narrow(in[0], 1, 1, 2) +
                 Exp(Slice(in[0], 1, 0, 4, 2));
        },
        {Leaf({3, 4})});
  Check("chunk",
        [](const auto& in) {
          const std::vector<Tensor> p = Chunk(in[0], 3, 0);
          return Stack({p[0], Exp(p[2])}, 0);
        },
        {Leaf({3, 4})});
  Check("cat",
        [](const auto& in) {
          return Cat({in[0], in[1], in[0]}, -1);
        },
        {Leaf({2, 3}), TransposedLeaf({2, 2})});
  Check("stack",
        [](const auto& in) {
          return Stack({in[0], in[1]}, 1);
        },
        {Leaf({2, 3}), SlicedLeaf({2, 3})});
}

TEST(FunctionsTest, Matmul) {
  auto f = [](const std::vector<Tensor>& in) { return Matmul(in[0], in[1]); };
  Check("2d", f, {Leaf({3, 4}), Leaf({4, 5})});
  Check("transposed operands", f, {TransposedLeaf({3, 4}), TransposedLeaf({4, 5})});
  Check("batched", f, {Leaf({2, 3, 4}), Leaf({2, 4, 5})});
  Check("broadcast batch", f, {Leaf({2, 1, 3, 4}), Leaf({3, 4, 2})});
  Check("matrix times batch", f, {Leaf({3, 4}), Leaf({2, 4, 5})});
  Check("vector times matrix", f, {Leaf({4}), Leaf({4, 5})});
  Check("matrix times vector", f, {Leaf({3, 4}), Leaf({4})});
  Check("dot", f, {Leaf({4}), Leaf({4})});
  Check("x^T x", [](const auto& in) { return Matmul(Transpose(in[0], 0, 1), in[0]); },
        {Leaf({4, 3})});
}

TEST(FunctionsTest, Linear) {
  Check("linear", [](const auto& in) { return Linear(in[0], in[1], in[2]); },
        {Leaf({2, 3, 4}), Leaf({5, 4}), Leaf({5})});
  Check("linear, transposed input, no bias",
        [](const auto& in) { return Linear(in[0], in[1], Tensor()); },
        {TransposedLeaf({4, 3}), Leaf({2, 3})});
  Check("linear of a vector", [](const auto& in) { return Linear(in[0], in[1], in[2]); },
        {Leaf({4}), Leaf({3, 4}), Leaf({3})});
}

TEST(FunctionsTest, SoftmaxLayerNormEmbedding) {
  Check("softmax", [](const auto& in) { return Softmax(in[0]); }, {Leaf({3, 5}, -3, 3)});
  Check("softmax transposed", [](const auto& in) { return Softmax(in[0]); },
        {TransposedLeaf({3, 5}, -3, 3)});
  Check("log_softmax", [](const auto& in) { return LogSoftmax(in[0]); }, {Leaf({2, 3, 5}, -3, 3)});
  Check("layer_norm", [](const auto& in) { return LayerNorm(in[0], in[1], in[2]); },
        {Leaf({2, 3, 6}, -2, 2), Leaf({6}), Leaf({6})});
  Check("layer_norm without bias", [](const auto& in) { return LayerNorm(in[0], in[1], Tensor()); },
        {TransposedLeaf({4, 6}, -2, 2), Leaf({6})});
  const Tensor ids = FromList({{1, 3, 1}, {0, 1, 4}}, DType::kI64);  // 1 three times
  Check("embedding", [&](const auto& in) { return Embedding(in[0], ids); }, {Leaf({5, 3})});
  // Tied to the output layer (GPT-2's wte): the embedding's rows are added in place to
  // the output layer's gradient, which reaches the weight first.
  Check("embedding tied to a linear layer",
        [&](const auto& in) { return Linear(Embedding(in[0], ids), in[0], Tensor()); },
        {Leaf({5, 3})});
}

// x[index] along each dimension: picked entries against finite differences (a repeated
// and a negative index, an index of two dimensions), the shape torch gives, and the
// error for an index out of range.
// Cumulative sums and products along each dimension of a 3-d leaf and a transposed one;
// products through exact zeros (one, and two in a row) where a division-based gradient
// fails; sort's values along each dimension, ascending and descending.
TEST(FunctionsTest, ScansAndSort) {
  for (int64_t dim : {0, 1, 2, -1}) {
    Check(absl::StrCat("cumsum dim ", dim), [&](const auto& in) { return Cumsum(in[0], dim); },
          {Leaf({3, 4, 5})});
    Check(absl::StrCat("cumprod dim ", dim), [&](const auto& in) { return Cumprod(in[0], dim); },
          {Leaf({3, 4, 5}, 0.5, 1.5)});
    for (bool descending : {false, true}) {
      Check(absl::StrCat("sort dim ", dim, descending ? " descending" : ""),
            [&](const auto& in) { return Sort(in[0], dim, descending).first; }, {Leaf({3, 4, 5})});
    }
  }
  Check("cumsum transposed", [](const auto& in) { return Cumsum(in[0], 1); },
        {TransposedLeaf({3, 5})});
  Check("sort transposed", [](const auto& in) { return Sort(in[0], 0).first; },
        {TransposedLeaf({3, 5})});
  for (const std::vector<double>& values :
       {std::vector<double>{0.5, 0.0, 2.0, 1.5}, std::vector<double>{0.5, 0.0, 0.0, 1.5}}) {
    const Tensor x = SetRequiresGrad(FromVector(values, {4}).To(DType::kF64));
    Check("cumprod through zeros", [](const auto& in) { return Cumprod(in[0], 0); }, {x});
  }
  // By hand: the sort's gradient goes back where each value came from.
  const Tensor x = SetRequiresGrad(FromList({3.0, 1.0, 2.0}, DType::kF64));
  const auto [values, indices] = Sort(x, 0);
  EXPECT_EQ(indices.ToVector<int64_t>(), (std::vector<int64_t>{1, 2, 0}));
  Backward(Sum(Mul(values, FromList({1.0, 10.0, 100.0}, DType::kF64))));
  EXPECT_EQ(Grad(x).ToVector<double>(), (std::vector<double>{100, 1, 10}));
}

// The fused recurrent steps through both outputs and every input, with a batch of 3 and
// no batch, and gates large enough to saturate.
TEST(FunctionsTest, LstmAndGruCells) {
  for (const Shape& state : {Shape{3, 5}, Shape{4}}) {
    Shape lstm_gates = state, gru_gates = state;
    lstm_gates.back() *= 4;
    gru_gates.back() *= 3;
    Check("lstm_cell " + ShapeToString(state),
          [](const auto& in) {
            const auto [h, c] = LstmCell(in[0], in[1], in[2]);
            return Add(h, Mul(c, 0.7));
          },
          {Leaf(lstm_gates, -3, 3), Leaf(lstm_gates, -3, 3), Leaf(state, -2, 2)});
    Check("lstm_cell h only", [](const auto& in) { return LstmCell(in[0], in[1], in[2]).first; },
          {Leaf(lstm_gates), Leaf(lstm_gates), Leaf(state)});
    Check("gru_cell " + ShapeToString(state),
          [](const auto& in) { return GruCell(in[0], in[1], in[2]); },
          {Leaf(gru_gates, -3, 3), Leaf(gru_gates, -3, 3), Leaf(state)});
  }
}

TEST(FunctionsTest, IndexSelect) {
  const Tensor ids = FromList({{2, 0}, {-1, 2}}, DType::kI64);
  for (int64_t dim : {0, 1, 2}) {
    Check(absl::StrCat("index_select dim ", dim),
          [&](const auto& in) { return IndexSelect(in[0], dim, ids); }, {Leaf({3, 4, 5})});
  }
  Check("index_select transposed", [&](const auto& in) { return IndexSelect(in[0], 1, ids); },
        {TransposedLeaf({3, 5})});
  const Tensor x = Arange(Scalar(int64_t{24})).To(DType::kF64).View({2, 3, 4});
  const Tensor picked = IndexSelect(x, 1, ids);
  EXPECT_EQ(picked.shape(), (Shape{2, 2, 2, 4}));
  // picked[a, i, j, c] = x[a, ids[i, j], c]: ids[1, 0] = -1 is row 2.
  EXPECT_EQ(picked.at<double>({1, 1, 0, 3}), 12 + 2 * 4 + 3);
  EXPECT_EQ(picked.at<double>({0, 0, 1, 1}), 0 + 0 * 4 + 1);
  try {
    IndexSelect(x, 1, FromList({3}, DType::kI64));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "index 3 is out of bounds for dimension 1 with size 3");
  }
}

// x + source's slices added at index along each dimension, against finite differences
// (a repeated and a negative index), and the values by hand.
TEST(FunctionsTest, IndexAdd) {
  const Tensor ids = FromList({2, 0, -1, 2}, DType::kI64);
  for (int64_t dim : {0, 1, 2}) {
    Shape source_shape = {3, 3, 3};
    source_shape[dim] = 4;
    Check(absl::StrCat("index_add dim ", dim),
          [&](const auto& in) { return IndexAdd(in[0], dim, ids, in[1]); },
          {Leaf({3, 3, 3}), Leaf(source_shape)});
  }
  const Tensor x = Zeros({3, 2}, DType::kF64);
  const Tensor source = FromList({{1.0, 2.0}, {10.0, 20.0}, {100.0, 200.0}}, DType::kF64);
  const Tensor out = IndexAdd(x, 0, FromList({2, 0, 2}, DType::kI64), source);
  EXPECT_EQ(out.ToVector<double>(), (std::vector<double>{10, 20, 0, 0, 101, 202}));
  EXPECT_THROW(IndexAdd(x, 0, FromList({3}, DType::kI64), FromList({{1.0, 2.0}}, DType::kF64)),
               Error);
}

// The residual add fused with the LayerNorm after it: finite differences through both
// outputs, and the same bits as Add then LayerNorm (values and every gradient) in f32
// and f64; the graph shows the two nodes; shapes that broadcast take the two ops.
TEST(FunctionsTest, AddLayerNormIsAddThenLayerNorm) {
  Check("add_layer_norm",
        [](const auto& in) {
          const auto [h, y] = AddLayerNorm(in[0], in[1], in[2], in[3]);
          return Add(Mul(h, 0.5), y);
        },
        {Leaf({2, 3, 6}, -2, 2), Leaf({2, 3, 6}), Leaf({6}), Leaf({6})});
  Check("add_layer_norm broadcasting",
        [](const auto& in) {
          const auto [h, y] = AddLayerNorm(in[0], in[1], in[2], Tensor());
          return Add(h, y);
        },
        {Leaf({3, 6}, -2, 2), Leaf({6}), Leaf({6})});
  for (DType dtype : {DType::kF32, DType::kF64}) {
    const Tensor x = SetRequiresGrad(Uniform({4, 5, 24}, -2, 2, Gen(), dtype)),
                 r = SetRequiresGrad(Uniform({4, 5, 24}, -1, 1, Gen(), dtype)),
                 w = SetRequiresGrad(Uniform({24}, 0.5, 1.5, Gen(), dtype)),
                 b = SetRequiresGrad(Uniform({24}, -1, 1, Gen(), dtype));
    const Tensor gh = Uniform({4, 5, 24}, -1, 1, Gen(), dtype),
                 gy = Uniform({4, 5, 24}, -1, 1, Gen(), dtype);
    std::vector<Tensor> results[2];
    for (int fused = 0; fused < 2; ++fused) {
      for (const Tensor& t : {x, r, w, b}) ZeroGrad(t);
      Tensor h, y;
      if (fused) {
        std::tie(h, y) = AddLayerNorm(x, r, w, b);
        EXPECT_NE(ToDot(y).find("layer_norm"), std::string::npos);
        EXPECT_NE(ToDot(h).find("add"), std::string::npos);
      } else {
        h = Add(x, r);
        y = LayerNorm(h, w, b);
      }
      Backward(Add(Sum(Mul(h, gh)), Sum(Mul(y, gy))));
      results[fused] = {Detach(h),       Detach(y),       Grad(x).Clone(),
                        Grad(r).Clone(), Grad(w).Clone(), Grad(b).Clone()};
    }
    for (size_t i = 0; i < results[0].size(); ++i) {
      EXPECT_EQ(results[1][i].To(DType::kF64).ToVector<double>(),
                results[0][i].To(DType::kF64).ToVector<double>())
          << DTypeName(dtype) << " output " << i;
    }
  }
}

TEST(FunctionsTest, Conv2dAndMaxPool2d) {
  Check("conv2d", [](const auto& in) { return Conv2d(in[0], in[1], in[2]); },
        {Leaf({2, 3, 5, 4}), Leaf({4, 3, 3, 2}), Leaf({4})});
  Check("conv2d strided, padded, dilated, no bias",
        [](const auto& in) {
          return Conv2d(in[0], in[1], Tensor(), {{2, 1}, {1, 2}, {2, 1}});
        },
        {Leaf({2, 2, 7, 6}), Leaf({3, 2, 2, 3})});
  const Tensor image = Uniform({1, 2, 5, 5}, -1, 1, Gen(), DType::kF64);  // no gradient: dx skipped
  Check("conv2d of a constant image", [&](const auto& in) { return Conv2d(image, in[0], in[1]); },
        {Leaf({3, 2, 3, 3}), Leaf({3})});
  Check("max_pool2d", [](const auto& in) { return MaxPool2d(in[0]); }, {Leaf({2, 3, 4, 6}, -3, 3)});
  Check("max_pool2d overlapping, padded",
        [](const auto& in) {
          return MaxPool2d(in[0], {{3, 3}, {2, 1}, {1, 1}});
        },
        {Leaf({1, 2, 7, 5}, -3, 3)});
}

TEST(FunctionsTest, CrossEntropy) {
  const Tensor targets = FromList({2, 0, 4, 1}, DType::kI64);
  auto f = [&](const std::vector<Tensor>& in) { return CrossEntropy(in[0], targets); };
  Check("cross_entropy", f, {Leaf({4, 5}, -3, 3)});
  Check("cross_entropy transposed", f, {TransposedLeaf({4, 5}, -3, 3)});
  const Tensor ignoring = FromList({{2, -100}, {4, 1}}, DType::kI64);
  Check("cross_entropy 3d, ignore_index",
        [&](const auto& in) { return CrossEntropy(in[0], ignoring); }, {Leaf({2, 2, 5}, -3, 3)});
  EXPECT_THROW(CrossEntropy(Leaf({4, 5}), FromList({1, 2}, DType::kI64)), Error);
}

// The gradient goes over logits that only the node holds (released after), never over
// logits someone kept or a graph that is retained; the same numbers either way.
TEST(FunctionsTest, CrossEntropyWritesItsGradientOverLogitsNothingElseHolds) {
  const int64_t rows = 64, classes = 1000, dim = 16;
  Generator gen(3);
  const Tensor targets = RandInt(0, classes, {rows}, gen);
  const Tensor x0 = Randn({rows, dim}, gen), w0 = Randn({classes, dim}, gen);
  CpuAllocator& cpu = GetCpuAllocator();
  // Backward's peak of live memory above its start, and the gradients; `keep` holds the
  // logits meanwhile, `passes` backwards through a retained graph.
  auto run = [&](bool keep, int passes) {
    const Tensor x = SetRequiresGrad(x0.Clone()), w = SetRequiresGrad(w0.Clone());
    Tensor kept, loss;
    {
      const Tensor logits = Linear(x, w, Tensor());
      loss = CrossEntropy(logits, targets);
      if (keep) kept = logits;
    }
    const int64_t live = cpu.live_bytes();
    cpu.ResetPeak();
    for (int p = 0; p < passes; ++p) Backward(loss, Tensor(), {p + 1 < passes});
    return std::tuple(cpu.peak_bytes() - live, Grad(x).ToVector<float>(),
                      Grad(w).ToVector<float>());
  };
  const auto [held_peak, held_dx, held_dw] = run(true, 1);
  const auto [alone_peak, alone_dx, alone_dw] = run(false, 1);
  EXPECT_EQ(alone_dx, held_dx);
  EXPECT_EQ(alone_dw, held_dw);
  const int64_t logits_bytes = rows * classes * 4;
  EXPECT_LE(alone_peak, held_peak - logits_bytes) << held_peak;
  // Retained, the logits are read again by the second pass: twice the gradient.
  const auto [twice_peak, twice_dx, twice_dw] = run(false, 2);
  for (size_t i = 0; i < held_dw.size(); ++i) ASSERT_NEAR(twice_dw[i], 2 * held_dw[i], 1e-5) << i;
}

TEST(FunctionsTest, BinaryCrossEntropyWithLogits) {
  Check("binary_cross_entropy_with_logits",
        [](const auto& in) { return BinaryCrossEntropyWithLogits(in[0], in[1]); },
        {Leaf({3, 4}, -4, 4), Leaf({3, 4}, 0, 1)});
  EXPECT_THROW(BinaryCrossEntropyWithLogits(Leaf({3, 4}), Leaf({4, 3})), Error);
}

TEST(FunctionsTest, Dropout) {
  // The same seed each call gives the same mask, so differences see one function.
  auto f = [](const std::vector<Tensor>& in) {
    Generator gen(5);
    return Dropout(in[0], 0.4, /*training=*/true, gen);
  };
  Check("dropout", f, {Leaf({4, 6})});
  const Tensor x = Ones({1000}, DType::kF64);
  Generator gen(6);
  const std::vector<double> y = Dropout(x, 0.25, true, gen).ToVector<double>();
  int kept = 0;
  for (double v : y) {
    EXPECT_TRUE(v == 0 || std::fabs(v - 1 / 0.75) < 1e-12);
    kept += v != 0;
  }
  EXPECT_NEAR(kept, 750, 60);  // binomial(1000, 0.75): sd 14
  EXPECT_TRUE(Dropout(x, 0.25, /*training=*/false).is_same(x));
}

TEST(FunctionsTest, CausalAttention) {
  Check("causal_attention", [](const auto& in) { return CausalAttention(in[0], in[1], in[2]); },
        {Leaf({2, 4, 3}), Leaf({2, 4, 3}), Leaf({2, 4, 3})});
  // Position 0 sees only itself: its output is v[0].
  const Tensor q = Uniform({3, 2}, -1, 1, Gen(), DType::kF64);
  const Tensor v = Uniform({3, 2}, -1, 1, Gen(), DType::kF64);
  const Tensor out = CausalAttention(q, q, v);
  EXPECT_NEAR(out.at({0, 0}), v.at({0, 0}), 1e-15);
  EXPECT_NEAR(out.at({0, 1}), v.at({0, 1}), 1e-15);
  // The last two queries against all five keys are the last two rows of the full result.
  Check("causal_attention, cached keys",
        [](const auto& in) { return CausalAttention(in[0], in[1], in[2]); },
        {Leaf({2, 2, 3}), Leaf({2, 5, 3}), Leaf({2, 5, 3})});
  const Tensor q5 = Uniform({5, 2}, -1, 1, Gen(), DType::kF64),
               k5 = Uniform({5, 2}, -1, 1, Gen(), DType::kF64);
  const Tensor full = CausalAttention(q5, k5, k5), tail = CausalAttention(q5.Slice(0, 3), k5, k5);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 2; ++j) EXPECT_NEAR(tail.at({i, j}), full.at({3 + i, j}), 1e-15);
  }
  EXPECT_THROW(CausalAttention(k5, q5.Slice(0, 3), q5.Slice(0, 3)),
               Error);  // more queries than keys
}

// Dropout on the attention weights, against float64 finite differences with the mask
// fixed (the generator restarted for every evaluation).
TEST(FunctionsTest, CausalAttentionWithDropout) {
  Check("causal_attention, dropout 0.3",
        [](const auto& in) {
          Generator gen(21);
          return CausalAttention(in[0], in[1], in[2], 0.3, gen);
        },
        {Leaf({2, 6, 3}), Leaf({2, 6, 3}), Leaf({2, 6, 3})});
  // The generator moves past the weights' words, as Rand([2, 6, 6]) would.
  Generator gen(21), twin(21);
  CausalAttention(Leaf({2, 6, 3}), Leaf({2, 6, 3}), Leaf({2, 6, 3}), 0.3, gen);
  Rand({2, 6, 6}, twin);
  EXPECT_EQ(gen.offset(), twin.offset());
  EXPECT_THROW(CausalAttention(Leaf({1, 2, 2}), Leaf({1, 2, 2}), Leaf({1, 2, 2}), 1.5), Error);
}

// The fused node against the composite it replaced, softmax(q k^T / sqrt(d) + mask) v
// from Matmul, MaskedFill and Softmax, on strided heads as GPT-2's attention makes
// them ([B, T, H, d] transposed): outputs and all three gradients.
TEST(FunctionsTest, CausalAttentionEqualsTheComposite) {
  auto composite = [](const Tensor& q, const Tensor& k, const Tensor& v) {
    const int64_t tq = q.size(-2), tk = k.size(-2);
    const Tensor scores = Mul(Matmul(q, Transpose(k, -2, -1)), 1.0 / std::sqrt(double(q.size(-1))));
    const Tensor rows = ops::Add(Arange(tq), tk - tq).View({tq, 1}),
                 cols = Arange(tk).View({1, tk});
    return Matmul(Softmax(MaskedFill(scores, ops::Gt(cols, rows), -INFINITY)), v);
  };
  for (const auto& [tq, tk] : std::vector<std::pair<int64_t, int64_t>>{{50, 50}, {7, 60}}) {
    // Leaves [2, t, 3, 5], used as heads [2, 3, t, 5] (strided views).
    const Tensor q = Leaf({2, tq, 3, 5}, -2, 2), k = Leaf({2, tk, 3, 5}, -2, 2),
                 v = Leaf({2, tk, 3, 5});
    const Tensor g = Uniform({2, 3, tq, 5}, -1, 1, Gen(), DType::kF64);
    std::vector<Tensor> results[2];
    for (int fused = 0; fused < 2; ++fused) {
      for (const Tensor& t : {q, k, v}) ZeroGrad(t);
      const Tensor qh = Transpose(q, 1, 2), kh = Transpose(k, 1, 2), vh = Transpose(v, 1, 2);
      const Tensor y = fused ? CausalAttention(qh, kh, vh) : composite(qh, kh, vh);
      Backward(y, g);
      results[fused] = {Detach(y), Grad(q).Clone(), Grad(k).Clone(), Grad(v).Clone()};
    }
    for (size_t i = 0; i < results[0].size(); ++i) {
      EXPECT_LT(ops::Max(ops::Abs(ops::Sub(results[1][i], results[0][i]))).item<double>(), 1e-12)
          << "output " << i << " with tq=" << tq << ", tk=" << tk;
    }
  }
}

// With dropout: the composite drops the softmax's weights with the mask Rand draws in f32
// from the same generator state (kernels/attention.h), and the fused node matches it.
TEST(FunctionsTest, CausalAttentionWithDropoutEqualsTheComposite) {
  const double p = 0.25;
  auto composite = [p](const Tensor& q, const Tensor& k, const Tensor& v, Generator& gen) {
    const int64_t tq = q.size(-2), tk = k.size(-2);
    const Tensor scores = Mul(Matmul(q, Transpose(k, -2, -1)), 1.0 / std::sqrt(double(q.size(-1))));
    const Tensor rows = ops::Add(Arange(tq), tk - tq).View({tq, 1}),
                 cols = Arange(tk).View({1, tk});
    const Tensor weights = Softmax(MaskedFill(scores, ops::Gt(cols, rows), -INFINITY));
    const Tensor keep = ops::Div(ops::Ge(Rand(weights.shape(), gen), p).To(DType::kF64), 1 - p);
    return Matmul(Mul(weights, keep), v);
  };
  const Tensor q = Leaf({2, 3, 9, 5}, -2, 2), k = Leaf({2, 3, 12, 5}, -2, 2),
               v = Leaf({2, 3, 12, 5});
  const Tensor g = Uniform({2, 3, 9, 5}, -1, 1, Gen(), DType::kF64);
  std::vector<Tensor> results[2];
  uint64_t offsets[2];
  for (int fused = 0; fused < 2; ++fused) {
    for (const Tensor& t : {q, k, v}) ZeroGrad(t);
    Generator gen(33);
    const Tensor y = fused ? CausalAttention(q, k, v, p, gen) : composite(q, k, v, gen);
    Backward(y, g);
    results[fused] = {Detach(y), Grad(q).Clone(), Grad(k).Clone(), Grad(v).Clone()};
    offsets[fused] = gen.offset();
  }
  EXPECT_EQ(offsets[0], offsets[1]);
  for (size_t i = 0; i < results[0].size(); ++i) {
    EXPECT_LT(ops::Max(ops::Abs(ops::Sub(results[1][i], results[0][i]))).item<double>(), 1e-12)
        << "output " << i;
  }
}

}  // namespace
}  // namespace ember::autograd
