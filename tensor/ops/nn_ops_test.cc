// LayerNorm against PyTorch fixtures; embedding, AdamW and causal attention through
// their tensor ops (the kernels have their own tests against the float64 reference).

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/adamw.h"
#include "tensor/ops/attention.h"
#include "tensor/ops/embedding.h"
#include "tensor/ops/layernorm.h"
#include "tensor/ops/testing.h"
#include "tensor/random.h"

namespace ember::ops {
namespace {

using ::testing::ThrowsMessage;

TEST(LayerNormOpsTest, MatchesPyTorch) {
  // The inputs of tools/reference/layernorm_ops.py.
  std::vector<float> x, dy, w, b;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 10; ++j) {
      x.push_back(static_cast<float>(std::sin(0.3 * i + 0.7 * j) * 3 + i));
      dy.push_back(static_cast<float>(std::cos(i - 0.4 * j)));
    }
  }
  for (int j = 0; j < 10; ++j) {
    w.push_back(static_cast<float>(1 + 0.1 * j));
    b.push_back(static_cast<float>(0.05 * j - 0.2));
  }
  const Tensor tx = FromVector(x, {2, 2, 10});  // any leading shape: rows are [..., C]
  const auto reference = testing::ReadFixture("tensor/ops/testdata/layernorm_reference.txt");
  const LayerNormResult forward = LayerNorm(tx, FromVector(w), FromVector(b));
  EXPECT_EQ(forward.y.shape(), (Shape{2, 2, 10}));
  testing::ExpectClose(forward.y, reference.at("y"), 2e-6, "y");
  const LayerNormGrads grads =
      LayerNormBackward(tx, FromVector(w), true, forward, FromVector(dy, {2, 2, 10}));
  testing::ExpectClose(grads.dx, reference.at("dx"), 2e-6, "dx");
  testing::ExpectClose(grads.dweight, reference.at("dweight"), 2e-6, "dweight");
  testing::ExpectClose(grads.dbias, reference.at("dbias"), 2e-6, "dbias");
  EXPECT_FALSE(LayerNormBackward(tx, FromVector(w), false, forward, FromVector(dy, {2, 2, 10}))
                   .dbias.defined());
  EXPECT_THAT([&] { LayerNorm(tx, Ones({9}), Tensor()); },
              ThrowsMessage<Error>("layer_norm: weight must be [10] of f32, got [9] of f32"));
  // bf16 rows (and parameters): the kernel reads and writes them, computing in f32, so
  // y and dx are the f32 results on the same values rounded once; the statistics f32.
  const Tensor x16 = tx.To(DType::kBF16), w16 = FromVector(w).To(DType::kBF16),
               b16 = FromVector(b).To(DType::kBF16),
               dy16 = FromVector(dy, {2, 2, 10}).To(DType::kBF16);
  const LayerNormResult f16 = LayerNorm(x16, w16, b16);
  const LayerNormResult f32 =
      LayerNorm(x16.To(DType::kF32), w16.To(DType::kF32), b16.To(DType::kF32));
  EXPECT_EQ(f16.y.dtype(), DType::kBF16);
  EXPECT_EQ(f16.mean.dtype(), DType::kF32);
  EXPECT_EQ(f16.y.ToVector<float>(), f32.y.To(DType::kBF16).ToVector<float>());
  const LayerNormGrads g16 = LayerNormBackward(x16, w16, true, f16, dy16);
  const LayerNormGrads g32 =
      LayerNormBackward(x16.To(DType::kF32), w16.To(DType::kF32), true, f32, dy16.To(DType::kF32));
  EXPECT_EQ(g16.dx.dtype(), DType::kBF16);
  EXPECT_EQ(g16.dx.ToVector<float>(), g32.dx.To(DType::kBF16).ToVector<float>());
  EXPECT_EQ(g16.dweight.ToVector<float>(), g32.dweight.To(DType::kBF16).ToVector<float>());
}

TEST(EmbeddingOpsTest, LooksUpAndScatterAdds) {
  const Tensor weight = Arange(0.0, 12.0, 1.0).View({4, 3});
  const Tensor ids = FromList({{3, 0}, {3, 3}});
  const Tensor out = Embedding(weight, ids);
  EXPECT_EQ(out.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(out.ToVector<float>(), (std::vector<float>{9, 10, 11, 0, 1, 2, 9, 10, 11, 9, 10, 11}));
  const Tensor grad = EmbeddingBackward(Ones({2, 2, 3}), ids, 4);
  EXPECT_EQ(grad.ToVector<float>(), (std::vector<float>{1, 1, 1, 0, 0, 0, 0, 0, 0, 3, 3, 3}));
  EXPECT_THAT(
      [&] {
        Embedding(weight, FromList({1, 4}));
      },
      ThrowsMessage<Error>("embedding: id 4 at position 1 is out of range for a vocabulary of 4"));
  EXPECT_THAT(
      [&] { Embedding(weight, FromList({-1})); },
      ThrowsMessage<Error>("embedding: id -1 at position 0 is out of range for a vocabulary of 4"));
}

TEST(AdamWOpsTest, UpdatesInPlaceAndChecksShapes) {
  const Tensor p = Ones({3}), g = FromList({1.0, -1.0, 0.0}), m = Zeros({3}), v = Zeros({3});
  // Beside it in the same call: an f64 parameter (its own kernel call) at its third step.
  const Tensor p64 = Ones({2}, DType::kF64), g64 = Full({2}, 0.5, DType::kF64),
               m64 = Zeros({2}, DType::kF64), v64 = Zeros({2}, DType::kF64);
  AdamWStep({{p, g, m, v, {0.1, 0.9, 0.999, 1e-8, 0.0, 1}},
             {p64, g64, m64, v64, {0.1, 0.9, 0.999, 1e-8, 0.5, 3}}});
  // First step without decay: p - lr * sign(g) (m_hat / sqrt(v_hat) = g / |g|).
  const std::vector<float> got = p.ToVector<float>();
  EXPECT_NEAR(got[0], 0.9, 1e-6);
  EXPECT_NEAR(got[1], 1.1, 1e-6);
  EXPECT_EQ(got[2], 1.0f);
  EXPECT_NEAR(m.ToVector<float>()[0], 0.1, 1e-7);
  // Step 3 from zero moments: m_hat = 0.1 g / (1 - 0.9^3), v_hat = 0.001 g^2 / (1 - 0.999^3);
  // p = (1 - lr wd) - lr m_hat / (sqrt(v_hat) + eps).
  const double m_hat = 0.05 / (1 - 0.729), v_hat = 0.00025 / (1 - std::pow(0.999, 3));
  EXPECT_NEAR(p64.ToVector<double>()[1], 0.95 - 0.1 * m_hat / (std::sqrt(v_hat) + 1e-8), 1e-12);
  EXPECT_THAT(
      [&] {
        AdamWStep({{p, Zeros({4}), m, v, {0.1, 0.9, 0.999, 1e-8, 0.0, 1}}});
      },
      ThrowsMessage<Error>("adamw: a tensor of shape [4] and dtype f32 does not match the "
                           "parameter ([3], f32)"));
}

TEST(CausalAttentionOpsTest, ChecksShapesAndKeepsTheDtype) {
  // Two positions, one head of width 2 (scale 1 / sqrt 2); position 0 sees only itself.
  const Tensor q = FromList({1.0, 0.0, 0.0, 2.0}).View({1, 2, 2}),
               k = FromList({1.0, 1.0, 2.0, 0.0}).View({1, 2, 2});
  const Tensor v = FromList({1.0, 2.0, 3.0, 4.0}).View({1, 2, 2});
  const CausalAttentionResult r = CausalAttention(q, k, v);
  // Query 1: scores (0 + 2, 0 + 0) / sqrt 2, so p = softmax(sqrt 2, 0).
  const double p0 = 1 / (1 + std::exp(-std::sqrt(2.0)));
  const std::vector<float> y = r.y.ToVector<float>();
  EXPECT_FLOAT_EQ(y[0], 1);
  EXPECT_FLOAT_EQ(y[1], 2);
  EXPECT_NEAR(y[2], p0 * 1 + (1 - p0) * 3, 1e-6);
  EXPECT_NEAR(y[3], p0 * 2 + (1 - p0) * 4, 1e-6);
  EXPECT_NEAR(r.lse.ToVector<float>()[1], std::log(std::exp(std::sqrt(2.0)) + 1), 1e-6);
  // bf16 in, bf16 out (computed in f32).
  EXPECT_EQ(CausalAttention(q.To(DType::kBF16), k.To(DType::kBF16), v.To(DType::kBF16)).y.dtype(),
            DType::kBF16);
  // No queries: nothing to attend, and no gradient for the keys.
  const Tensor none = Zeros({1, 0, 2});
  const CausalAttentionResult empty = CausalAttention(none, k, v);
  EXPECT_EQ(empty.y.shape(), Shape({1, 0, 2}));
  EXPECT_EQ(CausalAttentionBackward(none, k, v, empty, none).dk.ToVector<float>(),
            std::vector<float>(4, 0.0f));
  EXPECT_THAT(
      [&] {
        CausalAttention(k, q.View({2, 2}), v);
      },
      ThrowsMessage<Error>(
          "causal_attention: expected q [..., tq, d] and k, v [..., tk, d] with tq <= tk, "
          "got [1, 2, 2], [2, 2] and [1, 2, 2]"));
  EXPECT_THAT([&] { CausalAttention(q, k, v.To(DType::kF64)); },
              ThrowsMessage<Error>(
                  "causal_attention: q, k and v must share a dtype, got f32, f32 and f64"));
}

// Keys and values as views: the first rows of a longer cache (read in place, heads
// capacity d apart, the rows past them NaN), rows strided by a transpose, heads broadcast
// by Expand, and one head, each equal to the same values made contiguous.
TEST(CausalAttentionOpsTest, ViewsOfKeysAndValuesEqualTheirContiguousCopies) {
  Generator gen(7);
  for (const DType dtype : {DType::kF32, DType::kBF16}) {
    const Tensor q = Randn({2, 3, 2, 8}, gen).To(dtype);
    Tensor k_cache = Full({2, 3, 10, 8}, std::nan(""), dtype),
           v_cache = Full({2, 3, 10, 8}, std::nan(""), dtype);
    k_cache.Slice(2, 0, 5).CopyFrom(Randn({2, 3, 5, 8}, gen));
    v_cache.Slice(2, 0, 5).CopyFrom(Randn({2, 3, 5, 8}, gen));
    const Tensor by_rows = Randn({2, 5, 3, 8}, gen).To(dtype).Transpose(1, 2);
    const Tensor one_head = Randn({1, 1, 5, 8}, gen).To(dtype);
    const std::vector<std::pair<Tensor, Tensor>> cases = {
        {k_cache.Slice(2, 0, 5), v_cache.Slice(2, 0, 5)},
        {by_rows, k_cache.Slice(2, 0, 5)},
        {one_head.Expand({2, 3, 5, 8}), v_cache.Slice(2, 0, 5)}};
    for (const auto& [k, v] : cases) {
      EXPECT_EQ(
          CausalAttention(q, k, v).y.To(DType::kF32).ToVector<float>(),
          CausalAttention(q, k.Contiguous(), v.Contiguous()).y.To(DType::kF32).ToVector<float>())
          << DTypeName(dtype) << ", k " << ShapeToString(k.shape()) << " strides "
          << ShapeToString(k.strides());
    }
    const Tensor q1 = q.Slice(0, 0, 1).Slice(1, 0, 1);
    const Tensor k1 = k_cache.Slice(0, 0, 1).Slice(1, 0, 1).Slice(2, 0, 5);
    EXPECT_EQ(
        CausalAttention(q1, k1, k1).y.To(DType::kF32).ToVector<float>(),
        CausalAttention(q1, k1.Contiguous(), k1.Contiguous()).y.To(DType::kF32).ToVector<float>());
  }
}

}  // namespace
}  // namespace ember::ops
