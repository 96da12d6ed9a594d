// PyTorch parity for a composite graph: the loss and every gradient of a pre-LayerNorm
// transformer block (causal attention with 2 heads, GELU MLP) under a linear head and
// cross entropy, against tools/reference/autograd_composite.py's fixture.
//
// Tolerance rule: each gradient tensor's max |ember - torch| over its max |torch|
// must be <= 1e-5 (float32 carries about 6e-8 relative per rounding; the graph chains
// a few dozen roundings, and small entries are judged against their tensor's scale).

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "autograd/elementwise.h"
#include "autograd/engine.h"
#include "autograd/functional.h"
#include "autograd/views.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/testing.h"

namespace ember::autograd {
namespace {

constexpr int64_t kBatch = 2, kTime = 4, kChannels = 8, kHeads = 2, kClasses = 10;

class Fixture {
 public:
  Fixture() : values_(ops::testing::ReadFixture("autograd/testdata/composite.txt")) {}

  Tensor Param(const std::string& name) {
    const std::vector<double>& shape = values_.at("shape." + name);
    Shape dims(shape.begin(), shape.end());
    const std::vector<double>& v = values_.at(name);
    return params_[name] =
               SetRequiresGrad(FromVector(std::vector<float>(v.begin(), v.end()), dims));
  }
  const std::vector<double>& Values(const std::string& name) const { return values_.at(name); }
  const std::map<std::string, Tensor>& params() const { return params_; }

 private:
  std::map<std::string, std::vector<double>> values_;
  std::map<std::string, Tensor> params_;
};

// [B, T, C] -> [B, heads, T, C / heads].
Tensor Heads(const Tensor& t) {
  return Transpose(View(t, {kBatch, kTime, kHeads, kChannels / kHeads}), 1, 2);
}

TEST(ParityTest, TransformerBlockLossAndGradientsMatchPyTorch) {
  Fixture f;
  const Tensor x = f.Param("x");
  const Tensor ln1_w = f.Param("ln1.weight"), ln1_b = f.Param("ln1.bias");
  const Tensor w_qkv = f.Param("attn.w_qkv"), b_qkv = f.Param("attn.b_qkv");
  const Tensor w_attn = f.Param("attn.w_proj"), b_attn = f.Param("attn.b_proj");
  const Tensor ln2_w = f.Param("ln2.weight"), ln2_b = f.Param("ln2.bias");
  const Tensor w_fc = f.Param("mlp.w_fc"), b_fc = f.Param("mlp.b_fc");
  const Tensor w_mlp = f.Param("mlp.w_proj"), b_mlp = f.Param("mlp.b_proj");
  const Tensor head = f.Param("head.weight");
  std::vector<int64_t> targets(f.Values("targets").begin(), f.Values("targets").end());

  const std::vector<Tensor> qkv =
      Split(Matmul(LayerNorm(x, ln1_w, ln1_b), w_qkv) + b_qkv, kChannels, -1);
  const Tensor attended = CausalAttention(Heads(qkv[0]), Heads(qkv[1]), Heads(qkv[2]));
  const Tensor merged = Reshape(Transpose(attended, 1, 2), {kBatch, kTime, kChannels});
  const Tensor h = x + Matmul(merged, w_attn) + b_attn;
  const Tensor m = GeluTanh(Matmul(LayerNorm(h, ln2_w, ln2_b), w_fc) + b_fc);
  const Tensor out = h + Matmul(m, w_mlp) + b_mlp;
  const Tensor loss = CrossEntropy(Matmul(out, head), FromVector(targets, {kBatch, kTime}));
  Backward(loss);

  EXPECT_NEAR(loss.item(), f.Values("loss")[0], 1e-5 * std::fabs(f.Values("loss")[0]));
  double worst = 0;
  for (const auto& [name, param] : f.params()) {
    const std::vector<double>& want = f.Values("grad." + name);
    const std::vector<double> got = Grad(param).ToVector<double>();
    ASSERT_EQ(got.size(), want.size()) << name;
    double scale = 0, error = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      scale = std::max(scale, std::fabs(want[i]));
      error = std::max(error, std::fabs(got[i] - want[i]));
    }
    worst = std::max(worst, error / scale);
    EXPECT_LE(error, 1e-5 * scale)
        << "grad of " << name << ": max error " << error << " against max |grad| " << scale;
  }
  std::cout << "worst gradient error relative to its tensor's scale: " << worst << "\n";
}

}  // namespace
}  // namespace ember::autograd
