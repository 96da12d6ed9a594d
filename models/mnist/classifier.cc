#include "models/mnist/classifier.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "nn/loss.h"
#include "nn/network_json.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/reduce.h"

namespace ember::models::mnist {

absl::StatusOr<std::shared_ptr<nn::Module>> MakeClassifier(const std::string& name,
                                                           Generator& gen) {
  if (absl::EndsWith(name, ".json")) return nn::ModelFromJsonFile(name, gen);
  auto model = std::make_shared<nn::Sequential>();
  if (name == "mlp") {
    model->Append(std::make_shared<nn::Flatten>());
    model->Append(std::make_shared<nn::Linear>(784, 128, true, gen));
    model->Append(std::make_shared<nn::Relu>());
    model->Append(std::make_shared<nn::Linear>(128, 10, true, gen));
  } else if (name == "cnn") {
    nn::Conv2dOptions same;
    same.padding = {1, 1};
    model->Append(std::make_shared<nn::Conv2d>(1, 32, std::array<int64_t, 2>{3, 3}, same, gen));
    model->Append(std::make_shared<nn::Relu>());
    model->Append(std::make_shared<nn::MaxPool2d>(std::array<int64_t, 2>{2, 2}));
    model->Append(std::make_shared<nn::Conv2d>(32, 64, std::array<int64_t, 2>{3, 3}, same, gen));
    model->Append(std::make_shared<nn::Relu>());
    model->Append(std::make_shared<nn::MaxPool2d>(std::array<int64_t, 2>{2, 2}));
    model->Append(std::make_shared<nn::Flatten>());
    model->Append(std::make_shared<nn::Linear>(64 * 7 * 7, 10, true, gen));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown model \"", name, "\"; expected mlp, cnn or a .json model spec"));
  }
  return model;
}

absl::StatusOr<std::unique_ptr<optim::Optimizer>> MakeOptimizer(const std::string& name,
                                                                std::vector<Tensor> params,
                                                                double lr) {
  if (!(lr > 0))
    return absl::InvalidArgumentError(absl::StrCat("learning rate ", lr, ": expected > 0"));
  std::vector<optim::ParamGroup> groups = {{std::move(params), lr, 0}};
  if (name == "sgd") return optim::Sgd(std::move(groups));
  if (name == "momentum") {
    optim::SgdOptions momentum;
    momentum.momentum = 0.9;
    return optim::Sgd(std::move(groups), momentum);
  }
  if (name == "rmsprop") return optim::Rmsprop(std::move(groups));
  if (name == "adam") return optim::Adam(std::move(groups));
  return absl::InvalidArgumentError(
      absl::StrCat("unknown optimizer \"", name, "\"; expected sgd, momentum, rmsprop or adam"));
}

absl::StatusOr<double> DefaultLearningRate(const std::string& optimizer) {
  if (optimizer == "sgd") return 0.1;
  if (optimizer == "momentum") return 0.01;
  if (optimizer == "rmsprop" || optimizer == "adam") return 1e-3;
  return absl::InvalidArgumentError(absl::StrCat("unknown optimizer \"", optimizer,
                                                 "\"; expected sgd, momentum, rmsprop or adam"));
}

absl::Status CheckLoss(const std::string& loss) {
  if (loss == "cross_entropy" || loss == "squared_error") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown loss \"", loss, "\"; expected cross_entropy or squared_error"));
}

Tensor ClassifierLoss(const std::string& loss, const Tensor& logits, const Tensor& labels) {
  if (loss == "cross_entropy") return nn::CrossEntropyLoss(logits, labels);
  EMBER_CHECK(loss == "squared_error", "unknown loss ", loss);
  const int64_t classes = logits.size(-1);
  const Tensor one_hot =
      ops::Eq(labels.Reshape({labels.numel(), 1}), Arange(Scalar(classes)).To(labels.device()))
          .To(DType::kF32);
  return nn::MseLoss(autograd::Softmax(logits), one_hot);
}

Evaluation Evaluate(nn::Module& model, const Tensor& images, const Tensor& labels,
                    int64_t batch_size, const std::string& loss) {
  const bool training = model.is_training();
  model.Eval();
  autograd::NoGradGuard no_grad;
  const int64_t n = images.size(0);
  double loss_sum = 0;
  int64_t correct = 0;
  for (int64_t start = 0; start < n; start += batch_size) {
    const int64_t end = std::min(n, start + batch_size);
    const Tensor logits = model(images.Slice(0, start, end).To(model.device())).Contiguous();
    const Tensor y = labels.Slice(0, start, end).Contiguous();
    loss_sum += ClassifierLoss(loss, logits, y.To(model.device())).item<double>() *
                static_cast<double>(end - start);
    const Tensor predicted = ops::ArgMax(logits, 1).To(Device::Cpu()).Contiguous();
    const int64_t* p = predicted.data<int64_t>();
    const int64_t* t = y.data<int64_t>();
    for (int64_t i = 0; i < end - start; ++i) correct += p[i] == t[i];
  }
  model.Train(training);
  return {loss_sum / static_cast<double>(n), static_cast<double>(correct) / static_cast<double>(n)};
}

}  // namespace ember::models::mnist
