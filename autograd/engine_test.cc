// The engine's contract: what is recorded, how gradients flow and accumulate, what a
// released graph frees, and the errors.

#include "autograd/engine.h"

#include <algorithm>
#include <string>

#include "autograd/elementwise.h"
#include "autograd/functional.h"
#include "autograd/reduce.h"
#include "autograd/views.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/random.h"

namespace ember::autograd {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<double> Values(const Tensor& t) { return t.ToVector<double>(); }

TEST(EngineTest, GradientsOfASmallGraphByHand) {
  // y = sum(x * w + x): dy/dx = w + 1, dy/dw = x.
  const Tensor x = SetRequiresGrad(FromList({1.0, 2.0, 3.0}));
  const Tensor w = SetRequiresGrad(FromList({4.0, 5.0, 6.0}));
  const Tensor y = Sum(x * w + x);
  EXPECT_EQ(y.item(), 38);
  EXPECT_EQ(GradFnName(y), "sum");
  Backward(y);
  EXPECT_EQ(Values(Grad(x)), (std::vector<double>{5, 6, 7}));
  EXPECT_EQ(Values(Grad(w)), (std::vector<double>{1, 2, 3}));
}

TEST(EngineTest, OnlyBranchesThatNeedGradientsAreRecorded) {
  const Tensor a = FromList({1.0, 2.0}), b = FromList({3.0, 4.0});
  EXPECT_FALSE(RequiresGrad(a * b));
  EXPECT_EQ(GradFnName(a * b), "");
  const Tensor w = SetRequiresGrad(FromList({1.0, 1.0}));
  const Tensor c = a * b;  // constant branch
  const Tensor d = c * w;  // recorded
  EXPECT_FALSE(RequiresGrad(c));
  EXPECT_TRUE(RequiresGrad(d));
  EXPECT_FALSE(IsLeaf(d));
  EXPECT_TRUE(IsLeaf(w));
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(GradModeEnabled());
    EXPECT_FALSE(RequiresGrad(w * 2));
  }
  EXPECT_TRUE(GradModeEnabled());
  SetGradModeEnabled(false);  // from here on, until set again; a guard restores what it found
  EXPECT_FALSE(RequiresGrad(w * 2));
  { NoGradGuard no_grad; }
  EXPECT_FALSE(GradModeEnabled());
  SetGradModeEnabled(true);
  EXPECT_TRUE(RequiresGrad(w * 2));
  EXPECT_FALSE(RequiresGrad(Detach(d)));
  EXPECT_EQ(Detach(d).raw_data(), d.raw_data());  // same storage
}

TEST(EngineTest, GradientsAccumulateAcrossCallsUntilZeroed) {
  const Tensor x = SetRequiresGrad(FromList({1.0, -2.0}));
  Backward(Sum(Square(x)));
  Backward(Sum(Square(x)));
  EXPECT_EQ(Values(Grad(x)), (std::vector<double>{4, -8}));
  ZeroGrad(x);
  EXPECT_FALSE(Grad(x).defined());
  Backward(Sum(x * 3));
  EXPECT_EQ(Values(Grad(x)), (std::vector<double>{3, 3}));
}

// x.grad = g: the next backward adds to g (into a new tensor: g itself stays as it was);
// an undefined gradient forgets it; a mismatched one is refused.
TEST(EngineTest, AnAssignedGradientIsAddedTo) {
  const Tensor x = SetRequiresGrad(FromList({1.0, -2.0}));
  const Tensor g = FromList({10.0, 20.0});
  SetGrad(x, g);
  Backward(Sum(x * 3));
  EXPECT_EQ(Values(Grad(x)), (std::vector<double>{13, 23}));
  EXPECT_EQ(Values(g), (std::vector<double>{10, 20}));
  SetGrad(x, Tensor());
  EXPECT_FALSE(Grad(x).defined());
  EXPECT_THROW(SetGrad(x, FromList({1.0})), Error);
}

TEST(EngineTest, ALeafTakesOverAGradientOnlyWhenNothingElseHoldsIt) {
  // x -> view: the view's backward hands back a view of the caller's seed, which the
  // leaf must copy (the caller may change the seed); x -> x * 2 makes a fresh tensor,
  // which the leaf may keep.
  const Tensor x = SetRequiresGrad(FromList({1.0, 2.0}));
  const Tensor seed = FromList({{3.0, 4.0}});
  Backward(Reshape(x, {1, 2}), seed);
  seed.Fill(0);
  EXPECT_EQ(Values(Grad(x)), (std::vector<double>{3, 4}));
  ZeroGrad(x);
  Backward(Sum(x * 2.0));
  EXPECT_EQ(Values(Grad(x)), (std::vector<double>{2, 2}));
}

TEST(EngineTest, ATensorUsedSeveralTimesSumsItsGradients) {
  // y = x * x + x * 2 + sum(x) broadcast: dy_i/dx_i = 2 x_i + 2 + n (through the sum).
  const Tensor x = SetRequiresGrad(FromList({1.0, 2.0, 3.0}));
  const Tensor y = Sum(x * x + x * 2 + Expand(Sum(x, {}, /*keepdim=*/true), {3}));
  Backward(y);
  EXPECT_EQ(Values(Grad(x)), (std::vector<double>{7, 9, 11}));
}

// Triple(x) = 3x, recorded with both backwards, counting which one Backward calls.
struct Triple {
  int returned = 0, added = 0;
  Tensor operator()(const Tensor& x) {
    const Tensor out = WithoutGrad([&] { return ops::Mul(x, 3.0); });
    return Record(
        "triple", out, {x},
        [this](const Tensor& g) {
          ++returned;
          return std::vector<Tensor>{ops::Mul(g, 3.0)};
        },
        [this](const Tensor& g, const Tensor& into) {
          ++added;
          into.CopyFrom(ops::Add(into, ops::Mul(g, 3.0)));
          return true;
        });
  }
};

TEST(EngineTest, AnAddBackwardTakesAGradientInPlaceOnlyWhereOneIsWaiting) {
  // y = sum(3x * x): x's use in the product reaches x first (backward runs in reverse),
  // so Triple adds to that gradient: dy/dx = 3x + 3x.
  Triple triple;
  const Tensor x = SetRequiresGrad(FromList({1.0, 2.0, -4.0}));
  Backward(Sum(triple(x) * x));
  EXPECT_EQ(Values(Grad(x)), (std::vector<double>{6, 12, -24}));
  EXPECT_EQ(triple.added, 1);
  EXPECT_EQ(triple.returned, 0);
  // Alone, there is nothing to add to: the gradient is returned.
  const Tensor z = SetRequiresGrad(FromList({1.0, 2.0}));
  Backward(Sum(triple(z)));
  EXPECT_EQ(Values(Grad(z)), (std::vector<double>{3, 3}));
  EXPECT_EQ(triple.returned, 1);
  // A waiting gradient that another handle shares is not written to: Add hands the same
  // gradient to both its inputs, so w's waiting gradient is triple's own input.
  const Tensor w = SetRequiresGrad(FromList({2.0, 5.0}));
  Backward(Sum(triple(w) + w));
  EXPECT_EQ(Values(Grad(w)), (std::vector<double>{4, 4}));
  EXPECT_EQ(triple.added, 1);
  EXPECT_EQ(triple.returned, 2);
}

TEST(EngineTest, APostAccumulateHookSeesTheFinishedGradientOncePerPass) {
  // y = sum(w2 * w1 * w1): w1 is used twice, and its hook runs once, after both uses
  // are summed.
  const Tensor w1 = SetRequiresGrad(FromList({1.0, -2.0}));
  const Tensor w2 = SetRequiresGrad(FromList({3.0, 4.0}));
  std::vector<std::string> order;
  SetPostAccumulateGradHook(w1,
                            [&] { order.push_back("w1 " + std::to_string(Values(Grad(w1))[0])); });
  SetPostAccumulateGradHook(w2,
                            [&] { order.push_back("w2 " + std::to_string(Values(Grad(w2))[0])); });
  Backward(Sum(w2 * (w1 * w1)));
  // dy/dw1 = 2 w2 w1 = [6, -16]; dy/dw2 = w1^2 = [1, 4].
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, (std::vector<std::string>{"w1 6.000000", "w2 1.000000"}));
  SetPostAccumulateGradHook(w1, nullptr);
  Backward(Sum(w1 * w2));
  EXPECT_EQ(order.size(), 3u);  // only w2's hook is left
  EXPECT_THAT([&] { SetPostAccumulateGradHook(w1 * 2, [] {}); },
              ThrowsMessage<Error>(HasSubstr("only a leaf that requires grad has one")));
}

TEST(EngineTest, BroadcastInputsGetGradientsOfTheirOwnShape) {
  const Tensor a = SetRequiresGrad(Ones({2, 3}));
  const Tensor row = SetRequiresGrad(Ones({3}));
  const Tensor column = SetRequiresGrad(Ones({2, 1}));
  Backward(Sum((a + row) * column));
  EXPECT_EQ(Grad(row).shape(), (Shape{3}));
  EXPECT_EQ(Values(Grad(row)), (std::vector<double>{2, 2, 2}));
  EXPECT_EQ(Grad(column).shape(), (Shape{2, 1}));
  EXPECT_EQ(Values(Grad(column)), (std::vector<double>{6, 6}));
}

TEST(EngineTest, NonScalarRootsNeedAnExplicitGradient) {
  const Tensor x = SetRequiresGrad(FromList({1.0, 2.0}));
  const Tensor y = x * 3;
  EXPECT_THAT([&] { Backward(y); },
              ThrowsMessage<Error>(HasSubstr("a gradient can be left out only for a one-element "
                                             "result, not one of shape [2]")));
  Backward(y, FromList({1.0, 10.0}));
  EXPECT_EQ(Values(Grad(x)), (std::vector<double>{3, 30}));
  EXPECT_THAT(
      [&] {
        Backward(y, FromList({1.0, 2.0, 3.0}));
      },
      ThrowsMessage<Error>(HasSubstr("the gradient has shape [3]")));
  EXPECT_THAT([&] { Backward(FromList({1.0})); },
              ThrowsMessage<Error>(HasSubstr("does not require grad")));
}

TEST(EngineTest, ASecondBackwardNeedsRetainGraph) {
  const Tensor x = SetRequiresGrad(FromList({1.0, 2.0}));
  const Tensor y = Sum(Exp(x));
  Backward(y, Tensor(), {.retain_graph = true});
  Backward(y);                                            // the graph was kept
  EXPECT_NEAR(Grad(x).at({1}), 2 * std::exp(2.0), 1e-5);  // f32
  EXPECT_THAT([&] { Backward(y); },
              ThrowsMessage<Error>(HasSubstr("trying to run backward through sum a second time")));
}

TEST(EngineTest, OnlyLeavesOfFloatingTypeCanRequireGradients) {
  EXPECT_THAT([] { SetRequiresGrad(Arange(3)); },
              ThrowsMessage<Error>(HasSubstr("only floating-point tensors can require "
                                             "gradients, not i64")));
  const Tensor x = SetRequiresGrad(FromList({1.0}));
  EXPECT_THAT([&] { SetRequiresGrad(x * 2); },
              ThrowsMessage<Error>(HasSubstr("only leaves can be marked; this tensor was made "
                                             "by mul")));
  SetRequiresGrad(x, false);
  EXPECT_FALSE(RequiresGrad(x));
}

TEST(EngineTest, ReleasingTheGraphFreesTheSavedActivations) {
  CpuAllocator& allocator = GetCpuAllocator();
  Generator gen(3);
  const Tensor w1 = SetRequiresGrad(Randn({64, 256}, gen)),
               w2 = SetRequiresGrad(Randn({256, 8}, gen));
  const Tensor x = Randn({32, 64}, gen);
  const Tensor targets = RandInt(0, 8, {32}, gen);
  auto step = [&] {
    const Tensor loss = CrossEntropy(Matmul(GeluTanh(Matmul(x, w1)), w2), targets);
    Backward(loss);
  };
  step();  // the gradients exist from here on
  const int64_t before = allocator.live_bytes();
  // While the loss lives, so does its graph; backward frees what the graph saved, so
  // only the loss itself remains. With retain_graph the activations stay.
  for (bool retain : {false, true}) {
    const Tensor loss = CrossEntropy(Matmul(GeluTanh(Matmul(x, w1)), w2), targets);
    EXPECT_GT(allocator.live_bytes(), before + 32 * 256 * 4);  // saved activations
    Backward(loss, Tensor(), {.retain_graph = retain});
    if (retain) {
      EXPECT_GT(allocator.live_bytes(), before + 32 * 256 * 4);
    } else {
      EXPECT_EQ(allocator.live_bytes(), before + loss.storage().nbytes());
    }
  }
  EXPECT_EQ(allocator.live_bytes(), before);
}

// Each node's saved tensors go as soon as its backward has run, not when the pass ends:
// the first op's backward, which runs last, finds the second op's saved tensor freed.
TEST(EngineTest, ANodesSavedTensorsAreFreedOnceItHasRun) {
  CpuAllocator& allocator = GetCpuAllocator();
  const Tensor x = SetRequiresGrad(Ones({4}));
  const int64_t saved_bytes = 4 << 20;
  for (bool retain : {false, true}) {
    int64_t live_when_first_runs = 0;
    const Tensor a =
        Record("first", WithoutGrad([&] { return ops::Mul(x, 2.0); }), {x}, [&](const Tensor& g) {
          live_when_first_runs = allocator.live_bytes();
          return std::vector<Tensor>{ops::Mul(g, 2.0)};
        });
    Tensor b;
    {
      const Tensor saved = Zeros({saved_bytes / 4});  // what the second op keeps
      b = Record("second", WithoutGrad([&] { return ops::Mul(a, 3.0); }), {a},
                 [saved](const Tensor& g) { return std::vector<Tensor>{ops::Mul(g, 3.0)}; });
    }
    const int64_t start = allocator.live_bytes();
    Backward(b, Ones({4}), {.retain_graph = retain});
    if (retain) {
      EXPECT_GT(live_when_first_runs, start - saved_bytes / 2);
    } else {
      EXPECT_LT(live_when_first_runs, start - saved_bytes / 2);
    }
  }
}

// tensor/tensor.h's rule: a plain view of a tensor that requires grad, in grad mode,
// would cut the graph, so it is refused naming the view and its recorded twin.
TEST(EngineTest, PlainViewsNeverCutTheGraphSilently) {
  const Tensor x = SetRequiresGrad(Arange(6).To(DType::kF32).View({2, 3}));
  EXPECT_THAT(
      [&] { x.Transpose(0, 1); },
      ThrowsMessage<Error>(HasSubstr("Transpose: the tensor of shape [2, 3] requires grad and grad "
                                     "mode is on, so a plain view would cut the graph; use "
                                     "ag::Transpose")));
  EXPECT_THAT([&] { x.Narrow(1, 0, 2); }, ThrowsMessage<Error>(HasSubstr("Narrow: ")));
  EXPECT_THAT([&] { x.BroadcastTo({4, 2, 3}); }, ThrowsMessage<Error>(HasSubstr("use ag::Expand")));
  EXPECT_THAT([&] { x.Reshape({6}); }, ThrowsMessage<Error>(HasSubstr("use ag::Reshape")));
  const Tensor y = Mul(x, 2.0);  // a result with a grad_fn is refused too
  EXPECT_THAT([&] { y.Select(0, 1); }, ThrowsMessage<Error>(HasSubstr("use ag::Select")));
  // Plain views where no graph is at stake: grad mode off, a detached alias, a tensor
  // that needs no gradient; copies and printing read values.
  {
    NoGradGuard no_grad;
    EXPECT_EQ(x.Transpose(0, 1).shape(), (Shape{3, 2}));
  }
  EXPECT_EQ(Detach(x).Transpose(0, 1).shape(), (Shape{3, 2}));
  EXPECT_EQ(Arange(6).View({2, 3}).Transpose(0, 1).shape(), (Shape{3, 2}));
  EXPECT_EQ(Zeros({3, 2}).CopyFrom(Transpose(x, 0, 1)).at({2, 1}), 5);
  EXPECT_EQ(x.ToString(), "tensor([[0., 1., 2.],\n        [3., 4., 5.]], dtype=f32)");
  // The recorded view carries the gradient back.
  Backward(Sum(Mul(Transpose(x, 0, 1), Arange(6).To(DType::kF32).View({3, 2}))));
  EXPECT_EQ(Grad(x).ToVector<float>(), (std::vector<float>{0, 2, 4, 1, 3, 5}));
  EXPECT_TRUE(GradModeEnabled());  // backward ran with grad mode off, and restored it
}

// A unary node keeps only what its backward reads: exp its output, relu its input.
TEST(EngineTest, UnaryNodesSaveOnlyWhatTheirBackwardReads) {
  const Tensor x = SetRequiresGrad(FromList({-1.0, 2.0}));
  const Tensor e = Exp(x);
  EXPECT_EQ(x.storage().use_count(), 1);  // not saved
  EXPECT_EQ(e.storage().use_count(), 2);  // saved by its node
  const Tensor r = Relu(x);
  EXPECT_EQ(x.storage().use_count(), 2);
  EXPECT_EQ(r.storage().use_count(), 1);
  const Tensor n = Neg(x);
  EXPECT_EQ(x.storage().use_count(), 2);  // neg saves nothing
  EXPECT_EQ(n.storage().use_count(), 1);
}

// PyTorch's version counter: a write to a tensor a node saved (Fill, CopyFrom) makes
// that node's backward refuse, naming it; writes to tensors nothing saved are fine, and
// a saved view sees writes to its base (one storage, one count).
TEST(EngineTest, ABackwardRefusesATensorItSavedThatWasWrittenSince) {
  const Tensor x = SetRequiresGrad(FromList({1.0, 2.0, 3.0}));
  const Tensor y = Exp(x);       // saves y
  const Tensor z = Add(y, 1.0);  // saves nothing
  EXPECT_EQ(y.storage().version(), 0u);
  Detach(z).Fill(5);
  EXPECT_EQ(z.storage().version(), 1u);
  Backward(Sum(z));  // add saved nothing: fine
  EXPECT_EQ(Grad(x).ToVector<float>()[0], std::exp(1.0f));

  const Tensor w = Exp(x);
  const Tensor loss = Sum(w);
  Detach(w).Select(0, 1).CopyFrom(FromList({0.0}).View({}));
  EXPECT_EQ(w.storage().version(), 1u);
  try {
    Backward(loss);
    FAIL() << "the changed exp output was used";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("modified by an in-place operation"));
    EXPECT_THAT(e.what(), testing::HasSubstr("that exp saved is at version 1; expected version 0"));
  }
  const SavedTensor saved(x);
  EXPECT_EQ(saved.get().data<float>(), x.data<float>());  // the same memory, not a copy
  EXPECT_FALSE(SavedTensor().defined());
}

TEST(EngineTest, ToDotDrawsOpsLeavesAndEdges) {
  const Tensor x = SetRequiresGrad(Ones({2, 3}));
  const Tensor w = SetRequiresGrad(Ones({3, 4}));
  const std::string dot = ToDot(Sum(Relu(Matmul(x, w))));
  EXPECT_THAT(dot, HasSubstr("digraph autograd {"));
  EXPECT_THAT(dot, HasSubstr("label=\"sum\\n[]\", style=bold"));
  EXPECT_THAT(dot, HasSubstr("label=\"relu\\n[2, 4]\""));
  EXPECT_THAT(dot, HasSubstr("label=\"matmul\\n[2, 4]\""));
  EXPECT_THAT(dot, HasSubstr("[shape=ellipse, label=\"[3, 4] f32\"]"));
  EXPECT_THAT(dot, HasSubstr("n1 -> n0;"));               // relu feeds sum
  EXPECT_EQ(std::count(dot.begin(), dot.end(), '>'), 4);  // four edges
}

}  // namespace
}  // namespace ember::autograd
