#include "models/mnist/classifier.h"

#include <cmath>
#include <optional>
#include <string>

#include "autograd/autograd.h"
#include "data/datasets.h"
#include "gtest/gtest.h"
#include "nn/loss.h"
#include "tensor/creation.h"
#include "tensor/cuda.h"

namespace ember::models::mnist {
namespace {

namespace ag = ::ember::autograd;

TEST(ClassifierTest, ModelsHaveTheDocumentedShapesAndNames) {
  Generator gen(0);
  const auto mlp = MakeClassifier("mlp", gen).value();
  EXPECT_EQ(mlp->NumParameters(), 784 * 128 + 128 + 128 * 10 + 10);
  const auto cnn = MakeClassifier("cnn", gen).value();
  EXPECT_EQ(cnn->NumParameters(), 32 * 9 + 32 + 64 * 32 * 9 + 64 + 3136 * 10 + 10);
  std::vector<std::string> names;
  for (const auto& [name, p] : cnn->NamedParameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "3.weight", "3.bias", "7.weight",
                                             "7.bias"}));
  const Tensor images = Zeros({5, 1, 28, 28});
  EXPECT_EQ((*mlp)(images).shape(), (Shape{5, 10}));
  EXPECT_EQ((*cnn)(images).shape(), (Shape{5, 10}));
  EXPECT_EQ(MakeClassifier("resnet", gen).status().message(),
            "unknown model \"resnet\"; expected mlp, cnn or a .json model spec");
}

TEST(ClassifierTest, OptimizersAndDefaultsByName) {
  for (const char* name : {"sgd", "momentum", "rmsprop", "adam"}) {
    const double lr = DefaultLearningRate(name).value();
    EXPECT_GT(lr, 0) << name;
    EXPECT_TRUE(MakeOptimizer(name, {ag::SetRequiresGrad(Zeros({2}))}, lr).ok()) << name;
  }
  EXPECT_EQ(MakeOptimizer("lbfgs", {}, 0.1).status().message(),
            "unknown optimizer \"lbfgs\"; expected sgd, momentum, rmsprop or adam");
  EXPECT_EQ(MakeOptimizer("sgd", {}, -1).status().message(), "learning rate -1: expected > 0");
  EXPECT_FALSE(DefaultLearningRate("lbfgs").ok());
}

TEST(ClassifierTest, EvaluationIsTheMeanOverBatchesOfAnySize) {
  Generator gen(1);
  const auto model = MakeClassifier("mlp", gen).value();
  const Tensor images = Uniform({10, 1, 28, 28}, 0, 1, gen);
  const Tensor labels = FromList({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, DType::kI64);
  const Evaluation whole = Evaluate(*model, images, labels, 10),
                   batched = Evaluate(*model, images, labels, 4);
  EXPECT_NEAR(whole.loss, batched.loss, 1e-6);
  EXPECT_EQ(whole.accuracy, batched.accuracy);
  // By hand: the loss of the whole batch, the share of rows whose argmax is the label.
  const Tensor logits = (*model)(images);
  EXPECT_NEAR(whole.loss, nn::CrossEntropyLoss(logits, labels).item<double>(), 1e-6);
  int correct = 0;
  for (int i = 0; i < 10; ++i) {
    int best = 0;
    for (int c = 1; c < 10; ++c) best = logits.at({i, c}) > logits.at({i, best}) ? c : best;
    correct += best == i;
  }
  EXPECT_EQ(whole.accuracy, correct / 10.0);
  EXPECT_TRUE(model->is_training());  // restored
}

// The MLP (seed 2) after one pass over the first 8,000 training images in batches of 32
// with `optimizer` at its default learning rate on `device`, evaluated on the first
// 2,000 test images; nullopt when Fashion-MNIST is not installed (./setup.sh).
std::optional<Evaluation> TrainMlp(const std::string& optimizer, Device device) {
  static const auto* const train = new absl::StatusOr<data::ImageSet>(
      data::LoadMnist(data::kFashionMnistDir, data::Split::kTrain, data::ImageLayout::kNCHW));
  static const auto* const test = new absl::StatusOr<data::ImageSet>(
      data::LoadMnist(data::kFashionMnistDir, data::Split::kTest, data::ImageLayout::kNCHW));
  if (!train->ok() || !test->ok()) return std::nullopt;
  const data::ImageSet& images = **train;
  Generator gen(2);
  const auto model = MakeClassifier("mlp", gen).value();
  model->To(device);
  auto opt =
      MakeOptimizer(optimizer, model->Parameters(), DefaultLearningRate(optimizer).value()).value();
  for (int64_t start = 0; start < 8000; start += 32) {
    opt->ZeroGrad();
    ag::Backward(
        nn::CrossEntropyLoss((*model)(images.images.Slice(0, start, start + 32).To(device)),
                             images.labels.Slice(0, start, start + 32).To(device)));
    opt->Step();
  }
  return Evaluate(*model, (*test)->images.Slice(0, 0, 2000), (*test)->labels.Slice(0, 0, 2000));
}

// Each optimizer, at its default learning rate, takes the MLP from chance (10%) to a
// useful classifier on a slice of the real data in one pass.
TEST(ClassifierTest, EveryOptimizerLearnsFashionMnist) {
  for (const char* name : {"sgd", "momentum", "rmsprop", "adam"}) {
    const std::optional<Evaluation> e = TrainMlp(name, Device::Cpu());
    if (!e) GTEST_SKIP() << "Fashion-MNIST is not installed (./setup.sh)";
    EXPECT_GT(e->accuracy, 0.72) << name;
    EXPECT_LT(e->loss, 0.8) << name;
  }
}

// The same training on a GPU reaches the CPU's accuracy (within 0.3 points): the
// model moved with To(Device), the batches moved to it, the same seed.
TEST(ClassifierTest, TheMlpLearnsAsWellOnAGpu) {
  if (!cuda::IsAvailable()) GTEST_SKIP() << "no CUDA device here";
  const std::optional<Evaluation> cpu = TrainMlp("adam", Device::Cpu());
  if (!cpu) GTEST_SKIP() << "Fashion-MNIST is not installed (./setup.sh)";
  const std::optional<Evaluation> gpu = TrainMlp("adam", Device::Cuda(0));
  EXPECT_GT(cpu->accuracy, 0.72);
  EXPECT_NEAR(gpu->accuracy, cpu->accuracy, 0.003);
}

TEST(ClassifierTest, TheCnnLearnsABatch) {
  Generator gen(3);
  const auto model = MakeClassifier("cnn", gen).value();
  auto optimizer = MakeOptimizer("adam", model->Parameters(), 1e-3).value();
  const Tensor x = Uniform({16, 1, 28, 28}, 0, 1, gen);
  const Tensor y = FromList({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3, 4, 5}, DType::kI64);
  double first = 0, last = 0;
  for (int step = 0; step < 20; ++step) {
    const Tensor loss = nn::CrossEntropyLoss((*model)(x), y);
    (step == 0 ? first : last) = loss.item<double>();
    optimizer->ZeroGrad();
    ag::Backward(loss);
    optimizer->Step();
  }
  EXPECT_NEAR(first, std::log(10.0), 0.3);
  EXPECT_LT(last, 0.5 * first);
}

}  // namespace
}  // namespace ember::models::mnist
