#include "nn/spec.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "base/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nn/registry.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// A layer defined outside nn, registered beside its code as any layer is.
class Scale : public Module {
 public:
  explicit Scale(double factor) : factor_(factor) {}
  Tensor Forward(const Tensor& x) override { return autograd::Mul(x, factor_); }
  std::string ToString() const override { return "Scale()"; }

 private:
  double factor_;
};

EMBER_REGISTER_LAYER(Scale, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const double factor, a.Float("factor", 1.0));
  return std::make_shared<Scale>(factor);
});

constexpr char kCnn[] = R"({"layers": [
  {"type": "Conv2d", "in_channels": 1, "out_channels": 8, "kernel_size": 3, "padding": 1},
  {"type": "ReLU"},
  {"type": "MaxPool2d", "kernel_size": 2},
  {"type": "Conv2d", "in_channels": 8, "out_channels": 4, "kernel_size": [3, 2], "stride": [2, 1], "bias": false},
  {"type": "Flatten"},
  {"type": "Linear", "in_features": 312, "out_features": 10}
]})";

std::string Message(const std::string& spec) {
  absl::StatusOr<std::shared_ptr<Sequential>> model = SequentialFromJson(spec);
  EXPECT_FALSE(model.ok()) << spec;
  if (model.ok()) return "";
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(model.status().message());
}

std::vector<std::pair<std::string, Shape>> ShapesOf(const Module& m) {
  std::vector<std::pair<std::string, Shape>> out;
  for (const auto& [name, p] : m.NamedParameters()) out.emplace_back(name, p.shape());
  return out;
}

TEST(SpecTest, BuildsACnnThatTrains) {
  absl::StatusOr<std::shared_ptr<Sequential>> model = SequentialFromJson(kCnn);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_THAT(ShapesOf(**model),
              ElementsAre(Pair("0.weight", Shape{8, 1, 3, 3}), Pair("0.bias", Shape{8}),
                          Pair("3.weight", Shape{4, 8, 3, 2}), Pair("5.weight", Shape{10, 312}),
                          Pair("5.bias", Shape{10})));
  // 28x28 -> conv (padding 1) 28x28 -> pool 14x14 -> conv 3x2, stride (2, 1):
  // (14 - 3) / 2 + 1 = 6 rows, 14 - 2 + 1 = 13 columns; 4 * 6 * 13 = 312 features.
  EXPECT_EQ((*model)->ToString(), R"(Sequential(
  (0): Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
  (1): ReLU()
  (2): MaxPool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1))
  (3): Conv2d(8, 4, kernel_size=(3, 2), stride=(2, 1), bias=False)
  (4): Flatten(start_dim=1, end_dim=-1)
  (5): Linear(in_features=312, out_features=10, bias=True)
))");
  const Tensor y = (*model)->Forward(Uniform({2, 1, 28, 28}, 0, 1, DefaultGenerator()));
  EXPECT_EQ(y.shape(), (Shape{2, 10}));
  autograd::Backward(autograd::Sum(y));
  for (const auto& [name, p] : (*model)->NamedParameters()) {
    EXPECT_TRUE(autograd::Grad(p).defined()) << name;
  }
}

TEST(SpecTest, ArgumentsMapOntoTheConstructorsWithPyTorchsDefaults) {
  Generator a(5), b(5);
  absl::StatusOr<std::shared_ptr<Sequential>> model = SequentialFromJson(R"({"layers": [
    {"type": "Flatten"}, {"type": "Linear", "in_features": 6, "out_features": 3},
    {"type": "GELU", "approximate": "tanh"}, {"type": "Dropout", "p": 0.25},
    {"type": "LayerNorm", "normalized_shape": 3, "eps": 0.001}, {"type": "Tanh"},
    {"type": "Sigmoid"}, {"type": "Softmax", "dim": -1}, {"type": "Scale", "factor": 2}]})",
                                                                         a);
  ASSERT_TRUE(model.ok()) << model.status();
  const Linear direct(6, 3, true, b);
  const auto& linear = static_cast<const Linear&>(*(*model)->Children()[1].second);
  EXPECT_EQ(linear.weight().ToVector<float>(), direct.weight().ToVector<float>());
  EXPECT_EQ(linear.bias().ToVector<float>(), direct.bias().ToVector<float>());
  EXPECT_EQ((*model)->Children()[2].second->ToString(), "GELU(approximate='tanh')");
  EXPECT_EQ((*model)->Children()[3].second->ToString(), "Dropout(p=0.25)");
  EXPECT_EQ((*model)->size(), 9u);
  (*model)->Eval();
  const Tensor y = (*model)->Forward(Ones({4, 2, 3}));
  EXPECT_NEAR(autograd::Sum(y).item<float>(), 4 * 2.0, 1e-5);  // 4 softmax rows of sum 1, x2
}

TEST(SpecTest, MistakesAreInvalidArgumentsNamingTheLayer) {
  EXPECT_THAT(Message("{\"layers\": [}"), HasSubstr("not valid JSON"));
  EXPECT_THAT(Message(R"({"layers": [{"type": "Dropout", "p": 1e999}]})"),
              HasSubstr("not valid JSON"));
  EXPECT_THAT(Message("[]"), HasSubstr("must be an object {\"layers\""));
  EXPECT_THAT(Message(R"({"layers": [], "extra": 1})"), HasSubstr("and nothing else"));
  EXPECT_THAT(Message(R"({"layers": [{"kind": "ReLU"}]})"),
              HasSubstr("layer 0 must be an object with a \"type\""));
  EXPECT_THAT(Message(R"({"layers": [{"type": "ReLU"}, {"type": "Conv3d"}]})"),
              HasSubstr("layer 1: unknown type \"Conv3d\" (known: Conv2d, Dropout, Embedding, "
                        "Flatten, GELU, LayerNorm, Linear, MaxPool2d, ReLU, Scale, Sigmoid, "
                        "Softmax, Tanh)"));
  EXPECT_THAT(Message(R"({"layers": [{"type": "Linear", "in_features": 3}]})"),
              HasSubstr("layer 0 (Linear): missing argument \"out_features\""));
  EXPECT_THAT(Message(R"({"layers": [{"type": "Linear", "in_features": "3", "out_features": 2}]})"),
              HasSubstr("argument \"in_features\" is \"3\", expected an integer"));
  EXPECT_THAT(
      Message(
          R"({"layers": [{"type": "Linear", "in_features": 3, "out_features": 2, "bias": 1}]})"),
      HasSubstr("argument \"bias\" is 1, expected true or false"));
  EXPECT_THAT(
      Message(
          R"({"layers": [{"type": "Linear", "in_feature": 3, "in_features": 3, "out_features": 2}]})"),
      HasSubstr("layer 0 (Linear): unknown argument \"in_feature\""));
  EXPECT_THAT(Message(R"({"layers": [{"type": "Linear", "in_features": -3, "out_features": 2}]})"),
              HasSubstr("layer 0 (Linear): Linear: sizes must be positive"));
  EXPECT_THAT(
      Message(
          R"({"layers": [{"type": "Conv2d", "in_channels": 1, "out_channels": 2, "kernel_size": [3]}]})"),
      HasSubstr("expected an integer or a pair [height, width]"));
  EXPECT_THAT(Message(R"({"layers": [{"type": "Softmax", "dim": 0}]})"),
              HasSubstr("Softmax runs over the last dimension"));
  EXPECT_THAT(Message(R"({"layers": [{"type": "GELU", "approximate": "fast"}]})"),
              HasSubstr("approximate must be \"tanh\" or \"none\""));
}

// Limits before allocation: a spec that asks for more than 2^28 parameters is refused
// before the weight that passes the limit is made (these would take 30 GB, 9 EB, 1 TB
// and, in all, 1.1 GB); the check multiplies the sizes, not one argument at a time.
TEST(SpecTest, HugeLayersAreRefusedBeforeMemoryIsTaken) {
  EXPECT_THAT(
      Message(R"({"layers": [{"type": "Linear", "in_features": 78400000, "out_features": 100}]})"),
      HasSubstr("layer 0 (Linear): a weight of shape [100, 78400000] has more than the 268435456 "
                "parameters left of the 268435456 a spec may have"));
  EXPECT_THAT(
      Message(
          R"({"layers": [{"type": "Embedding", "num_embeddings": 3037000500, "embedding_dim": 3037000500}]})"),
      HasSubstr("layer 0 (Embedding): a weight of shape [3037000500, 3037000500] has more than"));
  EXPECT_THAT(
      Message(
          R"({"layers": [{"type": "Conv2d", "in_channels": 4096, "out_channels": 4096, "kernel_size": 128}]})"),
      HasSubstr("layer 0 (Conv2d): a weight of shape [4096, 4096, 128, 128] has more than"));
  EXPECT_THAT(
      Message(R"({"layers": [{"type": "Linear", "in_features": 16384, "out_features": 16385}]})"),
      HasSubstr("a weight of shape [16385, 16384] has more than"));
  // The budget is the spec's, not each layer's: a layer checks against what the layers
  // before it left (SequentialFromJson passes it on).
  Generator gen(1);
  const nlohmann::json none = nlohmann::json::object();
  EXPECT_TRUE(LayerArgs(none, gen, 1100).CheckParameters({100, 11}).ok());
  EXPECT_EQ(LayerArgs(none, gen, 1000).CheckParameters({100, 11}).message(),
            "a weight of shape [100, 11] has more than the 1000 parameters left of the 268435456 a "
            "spec may have");
}

TEST(SpecTest, ReadsAFile) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/cnn.json";
  std::ofstream(path) << kCnn;
  absl::StatusOr<std::shared_ptr<Sequential>> model = SequentialFromJsonFile(path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ((*model)->size(), 6u);
  EXPECT_EQ(SequentialFromJsonFile(path + ".missing").status().code(), absl::StatusCode::kNotFound);
  std::ofstream(path) << "{\"layers\": [{\"type\": \"Nope\"}]}";
  EXPECT_THAT(std::string(SequentialFromJsonFile(path).status().message()),
              HasSubstr(path + ": model spec layer 0: unknown type"));
}

// The header's network: a residual sum, a concatenation and Paddle's fully connected
// layer over two inputs, against the same arithmetic written out with its parameters.
constexpr char kGraph[] = R"({"input_size": 8, "layers": [
  {"name": "h1", "type": "Linear", "in_features": 8, "out_features": 16, "activation": "relu"},
  {"name": "h2", "type": "Linear", "in_features": 16, "out_features": 16, "inputs": ["h1"],
   "activation": "tanh"},
  {"name": "sum", "type": "Add", "inputs": ["h1", "h2"]},
  {"name": "both", "type": "Concat", "inputs": ["h1", "sum"]},
  {"name": "out", "type": "FullyConnected", "inputs": ["h1", "both"], "size": 4}],
 "output": "out"})";

std::string GraphMessage(const std::string& spec) {
  return std::string(GraphFromJson(spec).status().message());
}

TEST(GraphSpecTest, ResidualsConcatenationAndAFullyConnectedLayerOverTwoInputs) {
  Generator gen(3);
  const std::shared_ptr<Module> net = *GraphFromJson(kGraph, gen);
  std::map<std::string, Tensor> p;
  std::vector<std::string> names;
  for (const auto& [name, t] : net->NamedParameters()) {
    p[name] = t;
    names.push_back(name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"h1.weight", "h1.bias", "h2.weight", "h2.bias",
                                             "out.weight_0", "out.weight_1", "out.bias"}));
  EXPECT_EQ(p["out.weight_1"].shape(), (Shape{4, 32}));
  const Tensor x = Uniform({5, 8}, -1, 1, gen);
  const Tensor y = (*net)(x);
  namespace ag = autograd;
  const Tensor h1 = ag::Relu(ag::Linear(x, p["h1.weight"], p["h1.bias"]));
  const Tensor h2 = ag::Tanh(ag::Linear(h1, p["h2.weight"], p["h2.bias"]));
  const Tensor both = ag::Cat({h1, ag::Add(h1, h2)}, -1);
  const Tensor want = ag::Add(ag::Linear(h1, p["out.weight_0"], p["out.bias"]),
                              ag::Linear(both, p["out.weight_1"], Tensor()));
  const std::vector<float> got = y.ToVector<float>(), expected = want.ToVector<float>();
  ASSERT_EQ(got.size(), 20u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-6);
  ag::Backward(ag::Sum(y));
  for (const auto& [name, t] : p) EXPECT_TRUE(ag::Grad(t).defined()) << name;
  EXPECT_THAT(net->ToString(),
              HasSubstr("(out): FullyConnected(in_sizes=[16, 32], size=4, bias=True) <- h1, both"));
}

TEST(GraphSpecTest, MistakesAreOneLineErrorsNamingTheLayer) {
  EXPECT_THAT(GraphMessage(R"({"layers": [
      {"name": "a", "type": "ReLU", "inputs": ["b"]},
      {"name": "b", "type": "ReLU", "inputs": ["a"]}]})"),
              HasSubstr("layer a: its inputs form a cycle, a <- b <- a"));
  EXPECT_THAT(GraphMessage(R"({"layers": [{"name": "a", "type": "ReLU", "inputs": ["nope"]}]})"),
              HasSubstr("layer a: unknown input \"nope\""));
  EXPECT_THAT(GraphMessage(R"({"input_size": 8, "layers": [
      {"name": "a", "type": "Linear", "in_features": 8, "out_features": 4},
      {"name": "s", "type": "Add", "inputs": ["input", "a"]}]})"),
              HasSubstr("layer s (Add): its inputs input (8) and a (4) differ in size"));
  EXPECT_THAT(GraphMessage(R"({"input_size": 8, "layers": [
      {"name": "a", "type": "Linear", "in_features": 6, "out_features": 4}]})"),
              HasSubstr("layer a (Linear): in_features 6, but its input input has size 8"));
  EXPECT_THAT(GraphMessage(R"({"layers": [{"name": "f", "type": "FullyConnected", "size": 3}]})"),
              HasSubstr("layer f (FullyConnected): the size of its input input is not known"));
  EXPECT_THAT(
      GraphMessage(R"({"layers": [{"name": "a", "type": "ReLU"}, {"name": "a", "type": "ReLU"}]})"),
      HasSubstr("the name \"a\" is taken by an earlier layer"));
  EXPECT_THAT(GraphMessage(R"({"layers": [{"name": "a", "type": "ReLU", "activation": "swish"}]})"),
              HasSubstr("layer a (ReLU): activation \"swish\""));
  EXPECT_THAT(GraphMessage(R"({"layers": [{"name": "a", "type": "Lienar"}]})"),
              HasSubstr("layer a (Lienar): unknown type"));
  EXPECT_THAT(GraphMessage(R"({"layers": [{"name": "a", "type": "ReLU"}], "output": "b"})"),
              HasSubstr("unknown output \"b\""));
  EXPECT_THAT(
      GraphMessage(R"({"layers": [{"name": "a", "type": "ReLU", "inputs": ["input", "input"]}]})"),
      HasSubstr("layer a (ReLU): takes one input"));
  EXPECT_THAT(GraphMessage("[1, 2"), HasSubstr("network spec is not valid JSON"));
  // A size the spec cannot follow fails when run, naming the layer.
  const std::shared_ptr<Module> net = *GraphFromJson(R"({"layers": [
      {"name": "a", "type": "Linear", "in_features": 3, "out_features": 2}]})");
  EXPECT_THAT(
      [&] {
        (*net)(Zeros({1, 5}));
      },
      testing::ThrowsMessage<Error>(HasSubstr("layer a (Linear): ")));
}

}  // namespace
}  // namespace ember::nn
