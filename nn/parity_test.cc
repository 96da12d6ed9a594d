// nn against PyTorch 1.13 (fixture by tools/reference/nn_layers.py): a GPT-2 block
// loaded from PyTorch's state dict by name (forward and every gradient), the losses, a
// small CNN built from a JSON spec, max pooling, and Embedding.
// Tolerance: max |ember - torch| over a tensor <= 1e-5 of its max |torch| (float32).

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "nn/layers.h"
#include "nn/loss.h"
#include "nn/spec.h"
#include "tensor/creation.h"
#include "tensor/ops/testing.h"

namespace ember::nn {
namespace {

namespace ag = autograd;

class Fixture {
 public:
  Fixture() : values_(ops::testing::ReadFixture("nn/testdata/layers.txt")) {}
  Tensor Get(const std::string& name) const {
    const std::vector<double>& shape = values_.at("shape." + name);
    const std::vector<double>& v = values_.at(name);
    return FromVector(std::vector<float>(v.begin(), v.end()), Shape(shape.begin(), shape.end()));
  }
  const std::vector<double>& Values(const std::string& name) const { return values_.at(name); }

 private:
  std::map<std::string, std::vector<double>> values_;
};

void ExpectClose(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  const std::vector<double> values = got.ToVector<double>();
  ASSERT_EQ(values.size(), want.size()) << what;
  double scale = 0, error = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    error = std::max(error, std::fabs(values[i] - want[i]));
  }
  EXPECT_LE(error, 1e-5 * scale) << what << ": max error " << error << ", max |torch| " << scale;
}

TEST(ParityTest, Gpt2BlockLoadsPyTorchsStateDictAndMatchesIt) {
  const Fixture f;
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

TEST(ParityTest, LossesAndTheirGradients) {
  const Fixture f;
  const std::vector<double>& t = f.Values("targets");
  const Tensor targets = FromVector(std::vector<int64_t>(t.begin(), t.end()));
  const Tensor probe = f.Get("probe");
  const std::map<std::string, std::function<Tensor(const Tensor&)>> cases = {
      {"cross_entropy", [&](const Tensor& z) { return CrossEntropyLoss(z, targets); }},
      {"cross_entropy_smoothing",
       [&](const Tensor& z) { return CrossEntropyLoss(z, targets, -100, 0.1); }},
      {"nll", [&](const Tensor& z) { return NllLoss(ag::LogSoftmax(z), targets); }},
      {"bce_with_logits",
       [&](const Tensor& z) { return BceWithLogitsLoss(z, ag::Sigmoid(probe)); }},
      {"mse", [&](const Tensor& z) { return MseLoss(z, probe); }},
  };
  for (const auto& [name, loss_fn] : cases) {
    const Tensor z = ag::SetRequiresGrad(f.Get("logits"));
    const Tensor loss = loss_fn(z);
    ExpectClose(loss, f.Values(name + ".out"), name);
    ag::Backward(loss);
    ExpectClose(ag::Grad(z), f.Values(name + ".grad.logits"), name + " gradient");
  }
}

// torch.nn.Sequential of tools/reference/nn_layers.py, as a spec.
constexpr char kCnnSpec[] = R"({"layers": [
  {"type": "Conv2d", "in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1},
  {"type": "ReLU"},
  {"type": "MaxPool2d", "kernel_size": 2},
  {"type": "Conv2d", "in_channels": 3, "out_channels": 4, "kernel_size": [3, 2],
   "stride": [2, 1], "padding": [1, 0], "dilation": [1, 2]},
  {"type": "Tanh"},
  {"type": "Flatten"},
  {"type": "Linear", "in_features": 16, "out_features": 5},
  {"type": "GELU"},
  {"type": "Sigmoid"},
  {"type": "Linear", "in_features": 5, "out_features": 4, "bias": false},
  {"type": "Softmax", "dim": -1}
]})";

TEST(ParityTest, CnnFromASpecLoadsPyTorchsStateDictAndMatchesIt) {
  const Fixture f;
  absl::StatusOr<std::shared_ptr<Sequential>> cnn = SequentialFromJson(kCnnSpec);
  ASSERT_TRUE(cnn.ok()) << cnn.status();
  std::map<std::string, Tensor> state;
  for (const auto& [name, p] : (*cnn)->NamedParameters()) state[name] = f.Get("cnn." + name);
  ASSERT_TRUE((*cnn)->LoadStateDict(state).ok());
  const Tensor x = ag::SetRequiresGrad(f.Get("cnn_x"));
  const Tensor y = (**cnn)(x);
  ExpectClose(y, f.Values("cnn.out"), "cnn output");
  ag::Backward(ag::Sum(y * f.Get("cnn_w")));
  ExpectClose(ag::Grad(x), f.Values("cnn.grad.x"), "grad x");
  for (const auto& [name, p] : (*cnn)->NamedParameters()) {
    ExpectClose(ag::Grad(p), f.Values("cnn.grad." + name), "grad " + name);
  }
}

TEST(ParityTest, PaddedOverlappingMaxPool) {
  const Fixture f;
  const Tensor x = ag::SetRequiresGrad(f.Get("pool_x"));
  const Tensor y = MaxPool2d({3, 3}, {2, 2}, {1, 1})(x);
  ExpectClose(y, f.Values("pool.out"), "max pool output");
  ag::Backward(ag::Sum(y * f.Get("pool_w")));
  ExpectClose(ag::Grad(x), f.Values("pool.grad.x"), "max pool grad x");
}

TEST(ParityTest, EmbeddingWithARepeatedId) {
  const Fixture f;
  Embedding embedding(6, 4);
  ASSERT_TRUE(embedding.LoadStateDict({{"weight", f.Get("embedding.weight")}}).ok());
  const std::vector<double>& id_values = f.Values("embedding_ids");
  const Tensor ids = FromVector(std::vector<int64_t>(id_values.begin(), id_values.end()), {2, 3});
  const Tensor y = embedding(ids);
  ExpectClose(y, f.Values("embedding.out"), "embedding output");
  ag::Backward(ag::Sum(y * f.Get("embedding_w")));
  ExpectClose(ag::Grad(embedding.weight()), f.Values("embedding.grad.weight"), "embedding grad");
}

}  // namespace
}  // namespace ember::nn
