// GPT-2 written as a network spec (tiny.json: nn's Embedding, PositionEmbedding,
// LayerNorm and TiedLinear around the GPT2Block layers this package registers, with
// "init": "gpt2") is the C++ class: the same parameters under the same names from the
// same seed, the same logits, and the same losses step after step under AdamW.

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/gpt2/model.h"
#include "nn/network_json.h"
#include "optim/optimizer.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::models::gpt2 {
namespace {

namespace ag = autograd;
using ::testing::HasSubstr;

std::string TinySpec() {
  return std::string(std::getenv("TEST_SRCDIR")) + "/" + std::getenv("TEST_WORKSPACE") +
         "/models/gpt2/tiny.json";
}

// The mean next-token cross entropy of a model's logits, as GPT::Loss computes it.
Tensor Loss(nn::Module& model, const Tensor& x, const Tensor& y) {
  const Tensor logits = model(x);
  return ag::CrossEntropy(ag::Reshape(logits, {-1, logits.size(-1)}), y.Reshape({-1}));
}

TEST(Gpt2SpecTest, TinyAsASpecIsTheClassStepForStep) {
  Generator class_gen(1337), spec_gen(1337);
  GPT gpt(GPTConfig::Preset("tiny").value(), class_gen);
  absl::StatusOr<std::shared_ptr<nn::Module>> spec = nn::ModelFromJsonFile(TinySpec(), spec_gen);
  ASSERT_TRUE(spec.ok()) << spec.status();
  nn::Module& net = **spec;
  const auto want = gpt.NamedParameters(), got = net.NamedParameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].first, want[i].first);
    ASSERT_EQ(got[i].second.ToVector<float>(), want[i].second.ToVector<float>()) << got[i].first;
  }
  EXPECT_EQ(spec_gen.offset(), class_gen.offset());
  // GPT-2's specs too: initialisers and the logical axes sharding reads.
  const auto class_specs = gpt.NamedParameterSpecs(), spec_specs = net.NamedParameterSpecs();
  for (size_t i = 0; i < class_specs.size(); ++i) {
    EXPECT_EQ(spec_specs[i].second.ToString(), class_specs[i].second.ToString())
        << spec_specs[i].first;
  }

  // Three AdamW steps on the same batches: the same losses.
  auto adamw = [](nn::Module& m) { return optim::AdamW({{m.Parameters(), 1e-3, 0.1}}, {}); };
  const std::unique_ptr<optim::Optimizer> class_opt = adamw(gpt), spec_opt = adamw(net);
  Generator data(7);
  for (int step = 0; step < 3; ++step) {
    const Tensor ids = RandInt(0, 50257, {2, 17}, data);
    const Tensor x = ids.Narrow(1, 0, 16).Contiguous(), y = ids.Narrow(1, 1, 16).Contiguous();
    gpt.ZeroGrad();
    net.ZeroGrad();
    const Tensor class_loss = Loss(gpt, x, y), spec_loss = Loss(net, x, y);
    EXPECT_NEAR(spec_loss.item<double>(), class_loss.item<double>(), 1e-6) << "step " << step;
    ag::Backward(class_loss);
    ag::Backward(spec_loss);
    class_opt->Step();
    spec_opt->Step();
  }
  const std::vector<float> a = gpt.NamedParameters()[2].second.ToVector<float>();
  const std::vector<float> b = net.NamedParameters()[2].second.ToVector<float>();
  for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(b[i], a[i], 1e-6) << "h.0.ln_1.weight " << i;
}

TEST(Gpt2SpecTest, GptLayersAreCheckedWhenTheSpecIsBuilt) {
  auto message = [](const std::string& spec) {
    return std::string(nn::GraphFromJson(spec).status().message());
  };
  EXPECT_THAT(message(R"({"input_size": 64, "layers": [
      {"name": "h.0", "type": "GPT2Block", "n_embd": 64, "n_head": 5}]})"),
              HasSubstr("layer h.0 (GPT2Block): n_head 5 does not divide n_embd 64"));
  EXPECT_THAT(message(R"({"input_size": 64, "layers": [
      {"name": "h.0", "type": "GPT2Block", "n_embd": 32, "n_head": 4}]})"),
              HasSubstr("layer h.0 (GPT2Block): n_embd 32, but its input input has size 64"));
  EXPECT_THAT(message(R"({"input_size": 64, "layers": [
      {"name": "mlp", "type": "GPT2MLP", "n_embd": 64, "n_hidden": 256}]})"),
              HasSubstr("layer mlp (GPT2MLP): unknown argument \"n_hidden\""));
  // The attention and the MLP alone, with GPT-2's initialisation: the residual
  // projections' spread is 0.02 / sqrt(2 L), L = 1 attention layer.
  absl::StatusOr<std::shared_ptr<nn::Module>> parts = nn::GraphFromJson(R"({"init": "gpt2",
      "input_size": 64, "layers": [
      {"name": "attn", "type": "GPT2Attention", "n_embd": 64, "n_head": 4},
      {"name": "mlp", "type": "GPT2MLP", "n_embd": 64, "n_inner": 128, "inputs": ["attn"]}]})");
  ASSERT_TRUE(parts.ok()) << parts.status();
  const auto specs = (*parts)->NamedParameterSpecs();
  EXPECT_EQ(specs[2].first + " " + specs[2].second.ToString(),
            "attn.c_proj.weight [64, 64] f32 (embed, heads) normal(0, 0.0141421)");
  EXPECT_EQ(specs[6].first + " " + specs[6].second.ToString(),
            "mlp.c_proj.weight [64, 128] f32 (embed, mlp) normal(0, 0.0141421)");
  EXPECT_EQ((**parts)(Zeros({2, 5, 64})).shape(), (Shape{2, 5, 64}));
}

}  // namespace
}  // namespace ember::models::gpt2
