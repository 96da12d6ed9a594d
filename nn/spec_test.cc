#include "nn/spec.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "autograd/autograd.h"
#include "base/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nn/registry.h"
#include "tensor/creation.h"

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

}  // namespace
}  // namespace ember::nn
