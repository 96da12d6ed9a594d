// Autocast's policy (autograd/autocast.h): which dtype each function runs in under
// AutocastGuard(kBF16), that gradients reach the f32 leaves in f32 and agree with the
// f32 computation to bf16's precision, that a parameter is cast once however often it
// is used and however many guards read it unchanged, and type promotion of binary
// functions.

#include "autograd/autocast.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::autograd {
namespace {

using ::testing::ThrowsMessage;

// A small network through every class of the policy: products (Linear, Matmul,
// CausalAttention), the f32 list (LayerNorm, Softmax, CrossEntropy), and elementwise
// ops between them (GELU on the product's bf16, a residual add of f32 and bf16).
struct Net {
  Tensor w1, b1, w2, ln_w, ln_b;

  explicit Net(Generator& gen)
      : w1(SetRequiresGrad(Mul(Randn({32, 16}, gen), 0.25).Contiguous())),
        b1(SetRequiresGrad(Mul(Randn({32}, gen), 0.1).Contiguous())),
        w2(SetRequiresGrad(Mul(Randn({16, 32}, gen), 0.25).Contiguous())),
        ln_w(SetRequiresGrad(Ones({16}))),
        ln_b(SetRequiresGrad(Zeros({16}))) {}

  // Returns the loss; records the dtypes it sees in `dtypes` ("linear", "ln", ...).
  Tensor Loss(const Tensor& x, const Tensor& targets, std::string* dtypes) {
    const Tensor h = Linear(x, w1, b1);  // [4, 8, 32]
    const Tensor g = GeluTanh(h);
    const Tensor y = Linear(g, w2, Tensor());  // [4, 8, 16]
    const Tensor r = Add(x, y);                // f32 + bf16
    const Tensor n = LayerNorm(r, ln_w, ln_b);
    const Tensor q = Transpose(Reshape(n, {4, 8, 2, 8}), 1, 2);  // heads of 8
    const Tensor a = CausalAttention(q, q, q);
    const Tensor logits = Matmul(Reshape(Transpose(a, 1, 2), {4, 8, 16}), Transpose(w1, 0, 1));
    const Tensor loss = CrossEntropy(logits, targets);
    for (const Tensor& t : {h, g, y, r, n, a, logits, loss}) {
      *dtypes += std::string(DTypeName(t.dtype())) + " ";
    }
    return loss;
  }
};

TEST(AutocastTest, EachFunctionRunsInThePolicysDType) {
  Generator gen(1);
  Net net(gen);
  const Tensor x = Randn({4, 8, 16}, gen), targets = Zeros({4, 8}, DType::kI64);
  std::string off, on;
  net.Loss(x, targets, &off);
  EXPECT_EQ(off, "f32 f32 f32 f32 f32 f32 f32 f32 ");
  {
    AutocastGuard autocast(DType::kBF16);
    EXPECT_EQ(AutocastDType(), DType::kBF16);
    net.Loss(x, targets, &on);
    {
      AutocastGuard full(DType::kF32);  // a region in full precision
      EXPECT_EQ(Linear(x, Transpose(net.w2, 0, 1), Tensor()).dtype(), DType::kF32);
    }
  }
  //      linear gelu  linear add   ln    attention matmul loss
  EXPECT_EQ(on, "bf16 bf16 bf16 f32 f32 bf16 bf16 f32 ");
  EXPECT_EQ(AutocastDType(), DType::kF32);
  EXPECT_THAT([] { AutocastGuard guard(DType::kF16); },
              ThrowsMessage<Error>("autocast: dtype f16 is not supported (bf16, or f32 to turn it "
                                   "off)"));
}

TEST(AutocastTest, GradientsReachTheF32LeavesAndAgreeWithF32ToBf16Precision) {
  Generator gen(2);
  Net net(gen);
  const Tensor x = Randn({4, 8, 16}, gen);
  std::vector<int64_t> ids(32);
  for (int64_t i = 0; i < 32; ++i) ids[i] = (7 * i) % 32;
  const Tensor targets = FromVector(ids, {4, 8});
  std::string dtypes;
  const Tensor loss32 = net.Loss(x, targets, &dtypes);
  Backward(loss32);
  const std::vector<Tensor> leaves = {net.w1, net.b1, net.w2, net.ln_w, net.ln_b};
  std::vector<Tensor> want;
  for (const Tensor& leaf : leaves) {
    want.push_back(Grad(leaf));
    ZeroGrad(leaf);
  }
  Tensor loss16;
  {
    AutocastGuard autocast(DType::kBF16);
    loss16 = net.Loss(x, targets, &dtypes);
  }
  Backward(loss16);
  EXPECT_NEAR(loss16.item<float>(), loss32.item<float>(), 0.02 * loss32.item<float>());
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Tensor got = Grad(leaves[i]);
    ASSERT_EQ(got.dtype(), DType::kF32) << "leaf " << i;
    // Relative to the gradient's norm: bf16 carries 8 significant bits.
    const std::vector<float> g = got.Contiguous().ToVector<float>(),
                             w = want[i].Contiguous().ToVector<float>();
    double diff = 0, norm = 0;
    for (size_t j = 0; j < g.size(); ++j) {
      diff += (g[j] - w[j]) * (g[j] - w[j]);
      norm += w[j] * w[j];
    }
    EXPECT_LT(std::sqrt(diff), 0.03 * std::sqrt(norm) + 1e-6) << "leaf " << i;
    EXPECT_GT(std::sqrt(diff), 0) << "leaf " << i << ": bf16's gradient is f32's exactly";
  }
}

TEST(AutocastTest, AParameterIsCastOncePerGuard) {
  Generator gen(3);
  const Tensor w = SetRequiresGrad(Randn({8, 8}, gen));
  const Tensor x = Randn({2, 8}, gen);
  Tensor y;
  {
    AutocastGuard autocast(DType::kBF16);
    const Tensor first = internal::ForProduct(w), second = internal::ForProduct(w);
    EXPECT_TRUE(first.is_same(second));
    EXPECT_EQ(first.dtype(), DType::kBF16);
    // Three uses of w by Linear and one by Matmul: one bf16 copy.
    y = Add(Add(Linear(x, w, Tensor()), Linear(Linear(x, w, Tensor()), w, Tensor())), Matmul(x, w));
  }
  // Linear takes the f32 w itself (its gradient made in f32 by the GEMM); Matmul takes
  // the cached copy, through the one "to" node in the graph.
  const std::string dot = ToDot(y);
  size_t casts = 0;
  for (size_t at = 0; (at = dot.find("label=\"to\\n", at)) != std::string::npos; ++at) ++casts;
  EXPECT_EQ(casts, 1u) << dot;  // x needs no gradient: its casts are not recorded
  Backward(Sum(y));
  EXPECT_EQ(Grad(w).dtype(), DType::kF32);
  // Gradients through Linear alone were never rounded to bf16: some have low bits set,
  // the weight's (from the GEMM) and the bias's (f32 sums of g's rows, as an f32 sum of
  // the bf16 g computed here shows).
  const Tensor v = SetRequiresGrad(Randn({8, 8}, gen)), c = SetRequiresGrad(Randn({8}, gen));
  Tensor z;
  {
    AutocastGuard autocast(DType::kBF16);
    z = Linear(Randn({64, 8}, gen), v, c);
  }
  Backward(Sum(Mul(z, z)));
  auto wide = [](const Tensor& g) {
    int64_t n = 0;
    for (float f : g.Contiguous().ToVector<float>()) {
      n += (::ember::internal::BitCast<uint32_t>(f) & 0xffffu) != 0;
    }
    return n;
  };
  EXPECT_GT(wide(Grad(v)), 32);
  ASSERT_EQ(Grad(c).dtype(), DType::kF32);
  EXPECT_GT(wide(Grad(c)), 4);
  const std::vector<float> db = Grad(c).ToVector<float>(),
                           want_db = Sum(Mul(z, 2.0).To(DType::kF32), {0}).ToVector<float>();
  for (size_t j = 0; j < db.size(); ++j)
    EXPECT_NEAR(db[j], want_db[j], 1e-5 * (1 + std::abs(want_db[j])));
  // A new guard's cast is a node of its own graph.
  AutocastGuard autocast(DType::kBF16);
  EXPECT_FALSE(internal::ForProduct(w).is_same(internal::ForProduct(Randn({8, 8}, gen))));
}

// The bits of a bf16 tensor.
std::vector<uint16_t> Bits(const Tensor& t) {
  std::vector<uint16_t> bits;
  for (BFloat16 b : t.Contiguous().ToVector<BFloat16>()) bits.push_back(b.bits);
  return bits;
}

// A leaf's bf16 copy outlives its guard: the next guard reads the same values while the
// leaf is unchanged, and casts again once it has been written. CastCopy withholds it
// while a graph reads it; a copy whose leaf is gone is dropped when an outermost guard
// starts.
TEST(AutocastTest, ALeafsCopyIsKeptAcrossGuardsUntilTheLeafChanges) {
  Generator gen(4);
  const Tensor w = SetRequiresGrad(Randn({8, 8}, gen));
  const Tensor x = Randn({2, 8}, gen);
  EXPECT_FALSE(CastCopy(w).defined());
  Tensor y;
  {
    AutocastGuard autocast(DType::kBF16);
    y = Matmul(x, w);
  }
  EXPECT_FALSE(CastCopy(w).defined()) << "y's graph reads the copy";
  Backward(Sum(y));
  y = Tensor();
  const Tensor kept = CastCopy(w);
  ASSERT_TRUE(kept.defined());
  EXPECT_EQ(kept.dtype(), DType::kBF16);
  EXPECT_EQ(Bits(kept), Bits(Detach(w).To(DType::kBF16)));
  const Tensor grad = Grad(w).Clone();
  {
    AutocastGuard autocast(DType::kBF16);
    y = Matmul(x, w);
  }
  Backward(Sum(y));  // the same product, from the kept copy: the same gradient again
  EXPECT_EQ(Grad(w).ToVector<float>(), Mul(grad, 2.0).ToVector<float>());
  y = Tensor();
  EXPECT_TRUE(CastCopy(w).is_same(kept)) << "cast again though w did not change";
  WithoutGrad([&] { w.CopyFrom(Mul(Detach(w), 0.5)); });
  {
    AutocastGuard autocast(DType::kBF16);
    y = Matmul(x, w);
  }
  y = Tensor();
  ASSERT_TRUE(CastCopy(w).defined());
  EXPECT_FALSE(CastCopy(w).is_same(kept)) << "w was written: its copy is stale";
  EXPECT_EQ(Bits(CastCopy(w)), Bits(Detach(w).To(DType::kBF16)));
  // KeepCast after writing both: the next guard reads the copy as it is.
  const Tensor copy = CastCopy(w);
  WithoutGrad([&] {
    w.CopyFrom(Mul(Detach(w), 0.5));
    copy.CopyFrom(Detach(w).To(DType::kBF16));
  });
  KeepCast(w);
  {
    AutocastGuard autocast(DType::kBF16);
    y = Matmul(x, w);
  }
  y = Tensor();
  EXPECT_TRUE(CastCopy(w).is_same(copy));
  // A leaf that is gone: its copy goes at the next outermost guard.
  Tensor temp = SetRequiresGrad(Randn({8, 8}, gen));
  {
    AutocastGuard autocast(DType::kBF16);
    Matmul(x, temp);
  }
  const Tensor gone = CastCopy(temp);
  ASSERT_TRUE(gone.defined());
  temp = Tensor();
  EXPECT_FALSE(gone.is_sole_owner());
  { AutocastGuard autocast(DType::kBF16); }
  EXPECT_TRUE(gone.is_sole_owner());
}

TEST(AutocastTest, BinaryFunctionsPromoteAndGradientsKeepEachInputsDType) {
  Generator gen(4);
  const Tensor a = SetRequiresGrad(Randn({3, 4}, gen, DType::kBF16));
  const Tensor b = SetRequiresGrad(Randn({4}, gen));
  const Tensor c = Mul(a, b);
  EXPECT_EQ(c.dtype(), DType::kF32);
  EXPECT_EQ(Add(a, Randn({4}, gen, DType::kF64)).dtype(), DType::kF64);
  EXPECT_EQ(Sub(a, Randn({4}, gen, DType::kF16)).dtype(), DType::kF32);  // bf16 and f16
  Backward(Sum(c));
  EXPECT_EQ(Grad(a).dtype(), DType::kBF16);
  EXPECT_EQ(Grad(b).dtype(), DType::kF32);
  // To itself: differentiable, and nothing recorded for a dtype already held.
  EXPECT_TRUE(To(b, DType::kF32).is_same(b));
  EXPECT_EQ(GradFnName(To(b, DType::kBF16)), "to");
}

}  // namespace
}  // namespace ember::autograd
