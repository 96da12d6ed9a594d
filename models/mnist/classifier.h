#ifndef EMBER_MODELS_MNIST_CLASSIFIER_H_
#define EMBER_MODELS_MNIST_CLASSIFIER_H_

// Image classifiers for 28x28 grey images in 10 classes (Fashion-MNIST, MNIST digits),
// the losses and optimizers to train them, named as the train binary's flags name them.
//
//   mlp: Flatten -> Linear(784, 128) -> ReLU -> Linear(128, 10)                 101,770 parameters
//   cnn: Conv2d(1, 32, 3, padding 1) -> ReLU -> MaxPool2d(2)        [N, 32, 14, 14]
//        Conv2d(32, 64, 3, padding 1) -> ReLU -> MaxPool2d(2)       [N, 64, 7, 7]
//        Flatten -> Linear(3136, 10)                                          50,186 parameters
//
// Both take images [N, 1, 28, 28] and give logits [N, 10]; PyTorch's default
// initialisation (nn/layers.h), so tools/reference/mnist_torch.py builds the same models.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nn/layers.h"
#include "optim/optimizer.h"
#include "tensor/random.h"

namespace ember::models::mnist {

// "mlp", "cnn", or a JSON model spec file (a path ending in .json: a network of named
// layers or a Sequential chain, nn/network_json.h) taking [B, 1, 28, 28] images to 10 logits;
// InvalidArgument naming the choices (or the spec's mistake) otherwise.
absl::StatusOr<std::shared_ptr<nn::Module>> MakeClassifier(const std::string& name, Generator& gen);

// "sgd", "momentum" (SGD with momentum 0.9), "rmsprop" or "adam", torch.optim's rules
// with PyTorch's defaults otherwise.
absl::StatusOr<std::unique_ptr<optim::Optimizer>> MakeOptimizer(const std::string& name,
                                                                std::vector<Tensor> params,
                                                                double lr);

// A learning rate that trains these models well with each optimizer at batch 32-64:
// sgd 0.1, momentum 0.01, rmsprop 1e-3, adam 1e-3.
absl::StatusOr<double> DefaultLearningRate(const std::string& optimizer);

// The loss of logits [N, 10] against labels [N] (i64), by name:
//   cross_entropy:  mean over the batch of -log softmax(logits)[label];
//   squared_error:  mean over the batch and the 10 classes of
//                   (softmax(logits) - one_hot(label))^2, Keras's mean_squared_error on a
//                   softmax output (the loss of the SciCore thesis's MNIST table).
// InvalidArgument naming the choices for another name (CheckLoss, before any work).
absl::Status CheckLoss(const std::string& loss);
Tensor ClassifierLoss(const std::string& loss, const Tensor& logits, const Tensor& labels);

struct Evaluation {
  double loss = 0;      // the mean loss (ClassifierLoss)
  double accuracy = 0;  // fraction of argmax(logits) == label
};
// The model in eval mode, without gradients, over images [N, 1, 28, 28] and labels [N]
// in batches of `batch_size` (the model's mode is restored afterwards).
Evaluation Evaluate(nn::Module& model, const Tensor& images, const Tensor& labels,
                    int64_t batch_size = 1000, const std::string& loss = "cross_entropy");

}  // namespace ember::models::mnist

#endif  // EMBER_MODELS_MNIST_CLASSIFIER_H_
