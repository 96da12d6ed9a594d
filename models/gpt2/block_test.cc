// GPT-2's block against PyTorch 1.13 (the fixture of tools/reference/nn_layers.py, in
// nn/testdata): loaded from PyTorch's state dict by name, its output and every gradient;
// its parameter count, and GPT-2's initialisation.
// Tolerance: max |ember - torch| over a tensor <= 1e-5 of its max |torch| (float32).

#include "models/gpt2/block.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/reduce.h"
#include "tensor/ops/testing.h"
#include "tensor/random.h"

namespace ember::models::gpt2 {
namespace {

namespace ag = autograd;

// A tensor-wide tolerance (see the header).
void ExpectClose(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  ops::testing::ExpectCloseToScale(got.ToVector<double>(), want, 1e-5, what);
}

constexpr char kFixture[] = "nn/testdata/layers.txt";

TEST(BlockTest, LoadsPyTorchsStateDictAndMatchesIt) {
  const ops::testing::Fixture f(kFixture);
  Block block(8, 2);
  std::vector<std::string> names;
  std::map<std::string, Tensor> state;
  for (const auto& [name, p] : block.NamedParameters()) {
    names.push_back(name);
    state[name] = f.Get(name);
  }
  // PyTorch's order and spelling.
  EXPECT_EQ(names,
            (std::vector<std::string>{"ln_1.weight", "ln_1.bias", "attn.c_attn.weight",
                                      "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
                                      "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight",
                                      "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"}));
  ASSERT_TRUE(block.LoadStateDict(state).ok());
  const Tensor x = ag::SetRequiresGrad(f.Get("x"));
  const Tensor y = block(x);
  ExpectClose(y, f.Values("block.out"), "block output");
  ag::Backward(ag::Sum(y * f.Get("w")));
  ExpectClose(ag::Grad(x), f.Values("block.grad.x"), "grad x");
  for (const auto& [name, p] : block.NamedParameters()) {
    ExpectClose(ag::Grad(p), f.Values("block.grad." + name), "grad " + name);
  }
}

TEST(BlockTest, HasGpt2sParameterCount) {
  Block block(16, 4);
  // GPT-2's block of width C: 12 C^2 + 13 C parameters.
  EXPECT_EQ(block.NumParameters(), 12 * 16 * 16 + 13 * 16);
}

// Attention dropout acts while training only, drawn from the block's generator: the same
// seed gives the same output, eval mode the undropped one. (Its mask and gradients are
// autograd's and the kernels' tests.)
TEST(BlockTest, AttentionDropoutWhileTrainingOnly) {
  Generator init(3);
  const Tensor x = Randn({2, 8, 16}, init);
  auto run = [&](bool training, uint64_t seed) {
    Generator gen(seed);
    Block block(16, 4, /*dropout=*/0, gen, /*attn_dropout=*/0.5);
    block.Train(training);
    const ag::NoGradGuard no_grad;
    return block.Forward(x).ToVector<float>();
  };
  Generator plain_gen(7);
  Block plain(16, 4, 0, plain_gen);
  std::vector<float> whole;
  {
    const ag::NoGradGuard no_grad;
    whole = plain.Forward(x).ToVector<float>();
  }
  EXPECT_EQ(run(false, 7), whole);  // eval: no dropout
  EXPECT_EQ(run(true, 7), run(true, 7));
  EXPECT_NE(run(true, 7), whole);
  EXPECT_THROW(Block(16, 4, 0, plain_gen, 1.0), Error);
}

TEST(BlockTest, Gpt2InitScalesResidualProjections) {
  Generator gen(7);
  Block block(64, 4);
  SetGpt2Specs(block, /*layers=*/8);
  nn::Materialize(block, Device::Cpu(), gen);
  for (const auto& [name, p] : block.NamedParameters()) {
    const double rms = std::sqrt(ops::Mean(ag::Square(ag::Detach(p))).item());
    if (name.size() > 5 && name.substr(name.size() - 5) == ".bias") {
      EXPECT_EQ(rms, 0) << name;
    } else if (p.dim() == 1) {
      EXPECT_EQ(rms, 1) << name;  // LayerNorm weights keep their ones
    } else if (name.find("c_proj.weight") != std::string::npos) {
      EXPECT_NEAR(rms, 0.02 / 4, 0.1 * 0.02 / 4) << name;
    } else {
      EXPECT_NEAR(rms, 0.02, 0.1 * 0.02) << name;
    }
  }
}

}  // namespace
}  // namespace ember::models::gpt2
