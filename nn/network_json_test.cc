#include "nn/network_json.h"

#include <cmath>
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

// Initialisation schemes of the tests: every parameter ones, and none changed.
EMBER_REGISTER_INIT_SCHEME(test_ones, [](Module& m) {
  for (const auto& [name, spec] : m.NamedParameterSpecs())
    m.SetInitializer(name, Initializer::Ones());
});
EMBER_REGISTER_INIT_SCHEME(test_declared, [](Module&) {});

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
                        "Flatten, GELU, LayerNorm, Linear, MaxPool2d, PositionEmbedding, ReLU, "
                        "Scale, Sigmoid, "
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
  EXPECT_THAT(GraphMessage(R"({"layers": [{"name": "a", "type": "ReLU"}], "output": 3})"),
              HasSubstr("network spec: \"output\" must be a layer's name"));
  EXPECT_THAT(GraphMessage(
                  R"({"layers": [{"name": "a", "type": "FullyConnected", "size": 2, "bias": 1}]})"),
              HasSubstr("layer a: \"activation\" must be a name, \"bias\" true or false"));
  // A size the spec cannot follow fails when run, naming the layer.
  const std::shared_ptr<Module> net = *GraphFromJson(R"({"layers": [
      {"name": "a", "type": "Linear", "in_features": 3, "out_features": 2}]})");
  EXPECT_THAT(
      [&] {
        (*net)(Zeros({1, 5}));
      },
      testing::ThrowsMessage<Error>(HasSubstr("layer a (Linear): ")));
}

// A language model's shape: token and position embeddings, a LayerNorm, and the token
// table as the head.
constexpr char kTiedLm[] = R"({"layers": [
  {"name": "wte", "type": "Embedding", "num_embeddings": 10, "embedding_dim": 4},
  {"name": "wpe", "type": "PositionEmbedding", "num_positions": 6, "embedding_dim": 4},
  {"name": "ln", "type": "LayerNorm", "normalized_shape": 4},
  {"name": "head", "type": "TiedLinear", "weight_of": "wte"}]})";

TEST(GraphSpecTest, PositionEmbeddingAndAHeadTiedToTheTokenTable) {
  Generator gen(5);
  const std::shared_ptr<Module> net = *GraphFromJson(kTiedLm, gen);
  std::map<std::string, Tensor> p;
  std::vector<std::string> names;
  for (const auto& [name, t] : net->NamedParameters()) {
    p[name] = t;
    names.push_back(name);
  }
  // The head has no parameter of its own.
  EXPECT_EQ(names, (std::vector<std::string>{"wte.weight", "wpe.weight", "ln.weight", "ln.bias"}));
  const Tensor ids = FromVector<int64_t>({3, 1, 4, 1, 5, 9, 2, 6}, {2, 4});
  const Tensor y = (*net)(ids);
  ASSERT_EQ(y.shape(), (Shape{2, 4, 10}));
  // By hand: h[b, t] = wte[ids[b, t]] + wpe[t], logits = ln(h) wte^T.
  const std::vector<float> wte = p["wte.weight"].ToVector<float>();
  const std::vector<float> wpe = p["wpe.weight"].ToVector<float>();
  const std::vector<int64_t> id = ids.ToVector<int64_t>();
  const std::vector<float> got = y.ToVector<float>();
  for (int64_t r = 0; r < 8; ++r) {
    double h[4], mean = 0, var = 0;
    for (int c = 0; c < 4; ++c) {
      h[c] = wte[id[r] * 4 + c] + wpe[(r % 4) * 4 + c];
      mean += h[c] / 4;
    }
    for (int c = 0; c < 4; ++c) var += (h[c] - mean) * (h[c] - mean) / 4;
    for (int64_t v = 0; v < 10; ++v) {
      double logit = 0;
      for (int c = 0; c < 4; ++c) logit += (h[c] - mean) / std::sqrt(var + 1e-5) * wte[v * 4 + c];
      EXPECT_NEAR(got[r * 10 + v], logit, 1e-5) << r << ", " << v;
    }
  }
  // The table's gradient gathers both uses: the lookup's rows and the head's.
  autograd::Backward(autograd::Sum(y));
  const std::vector<float> grad = autograd::Grad(p["wte.weight"]).ToVector<float>();
  EXPECT_NE(grad[7 * 4], 0.0f);  // token 7 is never looked up: its gradient is the head's
  EXPECT_THAT(net->ToString(), HasSubstr("(head): TiedLinear(Embedding(10, 4)) <- ln"));
  EXPECT_THAT(
      [&] {
        (*net)(Zeros({1, 7}, DType::kI64));
      },
      testing::ThrowsMessage<Error>(HasSubstr(
          "layer wpe (PositionEmbedding): PositionEmbedding(6, 4): input of shape [1, 7, 4]")));
}

TEST(GraphSpecTest, AnInitSchemeSetsTheParametersBeforeTheyAreDrawnInTheirOrder) {
  Generator a(9), b(9);
  const std::shared_ptr<Module> plain = *GraphFromJson(kGraph, a);
  std::string declared = kGraph;
  declared.insert(1, R"("init": "test_declared", )");
  const std::shared_ptr<Module> drawn_later = *GraphFromJson(declared, b);
  // Declared, then drawn in the parameters' order: the numbers of drawing each at once.
  const auto want = plain->NamedParameters(), got = drawn_later->NamedParameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].second.device(), Device::Cpu());
    EXPECT_EQ(got[i].second.ToVector<float>(), want[i].second.ToVector<float>()) << got[i].first;
  }
  EXPECT_EQ(a.offset(), b.offset());
  std::string ones = kTiedLm;
  ones.insert(1, R"("init": "test_ones", )");
  for (const auto& [name, t] : (*GraphFromJson(ones))->NamedParameters()) {
    for (const float v : t.ToVector<float>()) ASSERT_EQ(v, 1.0f) << name;
  }
}

TEST(GraphSpecTest, TiedHeadsInitsAndSizeRulesAreCheckedWhenBuilt) {
  EXPECT_THAT(GraphMessage(R"({"init": "xavier", "layers": [{"name": "a", "type": "ReLU"}]})"),
              HasSubstr("network spec: unknown \"init\" \"xavier\" (known: "));
  EXPECT_THAT(GraphMessage(R"({"layers": [{"name": "h", "type": "TiedLinear"}]})"),
              HasSubstr("layer h (TiedLinear): needs \"weight_of\""));
  EXPECT_THAT(
      GraphMessage(R"({"layers": [{"name": "h", "type": "TiedLinear", "weight_of": "wte"}]})"),
      HasSubstr("layer h: unknown weight_of \"wte\""));
  EXPECT_THAT(GraphMessage(R"({"input_size": 4, "layers": [{"name": "r", "type": "ReLU"},
      {"name": "h", "type": "TiedLinear", "weight_of": "r"}]})"),
              HasSubstr("layer h (TiedLinear): weight_of \"r\" has no 2-D \"weight\""));
  EXPECT_THAT(
      GraphMessage(R"({"layers": [
      {"name": "wte", "type": "Embedding", "num_embeddings": 10, "embedding_dim": 4},
      {"name": "up", "type": "Linear", "in_features": 4, "out_features": 8},
      {"name": "h", "type": "TiedLinear", "weight_of": "wte"}]})"),
      HasSubstr("layer h (TiedLinear): wte's weight is [10, 4], but its input up has size 8"));
  // Each registered layer's LayerSizes: LayerNorm keeps the size and checks its own.
  EXPECT_THAT(GraphMessage(R"({"layers": [
      {"name": "wte", "type": "Embedding", "num_embeddings": 10, "embedding_dim": 4},
      {"name": "ln", "type": "LayerNorm", "normalized_shape": 4},
      {"name": "out", "type": "Linear", "in_features": 5, "out_features": 2}]})"),
              HasSubstr("layer out (Linear): in_features 5, but its input ln has size 4"));
  EXPECT_THAT(
      GraphMessage(R"({"input_size": 8, "layers": [
      {"name": "ln", "type": "LayerNorm", "normalized_shape": 6}]})"),
      HasSubstr("layer ln (LayerNorm): normalized_shape 6, but its input input has size 8"));
}

}  // namespace
}  // namespace ember::nn
