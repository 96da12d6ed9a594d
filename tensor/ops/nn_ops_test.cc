// LayerNorm against PyTorch fixtures; embedding and AdamW through their tensor ops.

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/adamw.h"
#include "tensor/ops/embedding.h"
#include "tensor/ops/layernorm.h"
#include "tensor/ops/testing.h"

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
  AdamWStep(p, g, m, v, {0.1, 0.9, 0.999, 1e-8, 0.0, 1});
  // First step without decay: p - lr * sign(g) (m_hat / sqrt(v_hat) = g / |g|).
  const std::vector<float> got = p.ToVector<float>();
  EXPECT_NEAR(got[0], 0.9, 1e-6);
  EXPECT_NEAR(got[1], 1.1, 1e-6);
  EXPECT_EQ(got[2], 1.0f);
  EXPECT_NEAR(m.ToVector<float>()[0], 0.1, 1e-7);
  EXPECT_THAT(
      [&] {
        AdamWStep(p, Zeros({4}), m, v, {0.1, 0.9, 0.999, 1e-8, 0.0, 1});
      },
      ThrowsMessage<Error>("adamw: a tensor of shape [4] and dtype f32 does not match the "
                           "parameter ([3], f32)"));
}

}  // namespace
}  // namespace ember::ops
