// nn against PyTorch 1.13 (fixture by tools/reference/nn_layers.py): the losses, a small
// CNN built from a JSON spec, max pooling, and Embedding. (The fixture's GPT-2 block is
// models/gpt2/block_test's.)
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
#include "nn/network_json.h"
#include "tensor/creation.h"
#include "tensor/ops/testing.h"

namespace ember::nn {
namespace {

namespace ag = autograd;

// A tensor-wide tolerance (see the header).
void ExpectClose(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  ops::testing::ExpectCloseToScale(got.ToVector<double>(), want, 1e-5, what);
}

constexpr char kFixture[] = "nn/testdata/layers.txt";

TEST(ParityTest, LossesAndTheirGradients) {
  const ops::testing::Fixture f(kFixture);
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
  const ops::testing::Fixture f(kFixture);
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
  const ops::testing::Fixture f(kFixture);
  const Tensor x = ag::SetRequiresGrad(f.Get("pool_x"));
  const Tensor y = MaxPool2d({3, 3}, {2, 2}, {1, 1})(x);
  ExpectClose(y, f.Values("pool.out"), "max pool output");
  ag::Backward(ag::Sum(y * f.Get("pool_w")));
  ExpectClose(ag::Grad(x), f.Values("pool.grad.x"), "max pool grad x");
}

TEST(ParityTest, EmbeddingWithARepeatedId) {
  const ops::testing::Fixture f(kFixture);
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
