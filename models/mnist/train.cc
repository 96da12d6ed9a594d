// Trains an image classifier on Fashion-MNIST and reports its test accuracy:
//
//   bazel run -c opt //models/mnist:train                               # MLP, SGD, 5 epochs
//   bazel run -c opt //models/mnist:train -- --model=cnn --optimizer=adam --epochs=3
//   EMBER_NUM_THREADS=1 bazel run -c opt //models/mnist:train -- --batch_size=32   # one thread
//
// The data is Debian's dataset-fashion-mnist (./setup.sh installs it): 60,000 training
// and 10,000 test images. Each epoch visits the training set in a seeded shuffled
// order; the progress line shows the epoch, the running loss, examples per second and
// the ETA; after each epoch the test loss and accuracy go to --out_dir/metrics.csv, and
// at the end the model to --save_checkpoint and the final figures (test_accuracy,
// test_loss, train_loss, train_seconds, examples_per_second, epochs, parameters) to
// --metrics_out as one JSON object. train_seconds counts the training steps and
// their batches, not the evaluation. tools/reference/mnist_torch.py runs the same
// configuration in PyTorch.
//
// Data parallel: `mpirun -np N .../train --batch_size=B` trains one model on N
// processes, each taking its B rows of every shuffled global batch of N B images (the
// last, partial, global batch is skipped so that every rank has B), with the gradients
// averaged over ranks (distributed::GradientAverager); rank 0 alone prints and writes.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status.h"
#include "autograd/autograd.h"
#include "data/datasets.h"
#include "data/loader.h"
#include "distributed/data_parallel.h"
#include "distributed/process_group.h"
#include "models/common/run_log.h"
#include "models/mnist/classifier.h"
#include "nn/loss.h"
#include "nn/safetensors.h"
#include "tensor/cuda.h"

ABSL_FLAG(std::string, model, "mlp", "mlp (784-128-10) or cnn (two conv+pool stages, then linear)");
ABSL_FLAG(std::string, optimizer, "sgd", "sgd, momentum (SGD, momentum 0.9), rmsprop or adam");
ABSL_FLAG(int64_t, epochs, 5, "passes over the 60,000 training images");
ABSL_FLAG(int64_t, batch_size, 32, "images per step (per rank under mpirun)");
ABSL_FLAG(double, lr, 0, "learning rate (0: the optimizer's default: sgd 0.1, momentum 0.01, rmsprop/adam 1e-3)");
ABSL_FLAG(uint64_t, seed, 0, "seed of the initialisation and the shuffling");
ABSL_FLAG(std::string, device, "cpu", "where to run: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU)");
ABSL_FLAG(std::string, data_dir, ember::data::kFashionMnistDir, "folder of the IDX files (train-*, t10k-*)");
ABSL_FLAG(std::string, out_dir, "", "where metrics.csv goes (default: runs/mnist in the workspace)");
ABSL_FLAG(std::string, save_checkpoint, "", "the trained model's safetensors (default: OUT_DIR/<model>.safetensors)");
ABSL_FLAG(std::string, metrics_out, "", "write the final figures here as one JSON object");

namespace ember::models::mnist {
namespace {

namespace ag = ::ember::autograd;

absl::Status Run() {
  const std::string model_name = absl::GetFlag(FLAGS_model), optimizer_name = absl::GetFlag(FLAGS_optimizer);
  const int64_t epochs = absl::GetFlag(FLAGS_epochs), batch_size = absl::GetFlag(FLAGS_batch_size);
  if (epochs < 1) return absl::InvalidArgumentError(absl::StrCat("--epochs=", epochs, ": expected at least 1"));
  if (batch_size < 1) return absl::InvalidArgumentError(absl::StrCat("--batch_size=", batch_size, ": expected at least 1"));
  double lr = absl::GetFlag(FLAGS_lr);
  if (lr == 0) {
    ASSIGN_OR_RETURN(double by_default, DefaultLearningRate(optimizer_name));
    lr = by_default;
  }
  ASSIGN_OR_RETURN(const Device device, cuda::DeviceFromFlag(absl::GetFlag(FLAGS_device)));
  distributed::ProcessGroup& world = distributed::World();
  const bool lead = world.rank() == 0;  // the rank that prints and writes
  Generator gen(absl::GetFlag(FLAGS_seed));
  ASSIGN_OR_RETURN(std::shared_ptr<nn::Sequential> model, MakeClassifier(model_name, gen));
  model->To(device);
  ASSIGN_OR_RETURN(std::unique_ptr<optim::Optimizer> optimizer, MakeOptimizer(optimizer_name, (model)->Parameters(), lr));
  std::unique_ptr<distributed::GradientAverager> averager;
  if (world.size() > 1) averager = std::make_unique<distributed::GradientAverager>(world, model->Parameters());

  const std::string dir = absl::GetFlag(FLAGS_data_dir);
  absl::StatusOr<data::ImageSet> train = data::LoadMnist(dir, data::Split::kTrain, data::ImageLayout::kNCHW);
  if (!train.ok()) return MissingInput(train.status());
  absl::StatusOr<data::ImageSet> test = data::LoadMnist(dir, data::Split::kTest, data::ImageLayout::kNCHW);
  if (!test.ok()) return MissingInput(test.status());
  data::LoaderOptions loading;
  loading.batch_size = batch_size * world.size();  // the global batch; this rank's rows below
  loading.drop_last = world.size() > 1;
  loading.seed = absl::GetFlag(FLAGS_seed);
  loading.prefetch = 0;  // a batch is a 100 kB copy, far less than a step: no thread needed
  ASSIGN_OR_RETURN(const std::unique_ptr<data::DataLoader> loader,
                   data::DataLoader::Create(train->images.size(0), data::RowBatches(train->images, train->labels),
                                            loading));

  const std::string out_dir = PathOrWorkspace(absl::GetFlag(FLAGS_out_dir), "runs/mnist");
  std::ofstream csv;
  if (lead) {
    std::filesystem::create_directories(out_dir);
    csv.open(out_dir + "/metrics.csv", std::ios::trunc);
    csv << "epoch,train_loss,test_loss,test_accuracy,train_seconds,examples_per_second\n";
    std::fprintf(stderr, "train: %s (%lld parameters) on %s%s, %s lr %g, %lld epochs of %lld images in batches of %s%lld\n",
                 model_name.c_str(), static_cast<long long>((model)->NumParameters()),
                 world.size() > 1 ? absl::StrCat(world.size(), " ranks x ").c_str() : "", device.ToString().c_str(),
                 optimizer_name.c_str(), lr, static_cast<long long>(epochs),
                 static_cast<long long>(train->images.size(0)),
                 world.size() > 1 ? absl::StrCat(world.size(), " x ").c_str() : "", static_cast<long long>(batch_size));
  }

  const int64_t steps_per_epoch = loader->batches_per_epoch(), total_steps = epochs * steps_per_epoch;
  double train_seconds = 0, train_loss = 0;
  int64_t examples = 0;
  Evaluation evaluation;
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    loader->StartEpoch(epoch);
    double loss_sum = 0;
    int64_t epoch_examples = 0, step = 0;
    const auto start = std::chrono::steady_clock::now();
    double before = train_seconds;
    while (std::optional<data::Batch> batch = loader->Next()) {
      const int64_t n = batch->x.size(0) / world.size(), first = world.rank() * n;
      const Tensor loss = nn::CrossEntropyLoss((*model)(batch->x.Narrow(0, first, n).To(device)),
                                               batch->y.Narrow(0, first, n).To(device));
      (optimizer)->ZeroGrad();
      if (averager) averager->Arm();
      ag::Backward(loss);
      if (averager) averager->Finish();
      (optimizer)->Step();
      // The global batch's mean loss.
      loss_sum += world.AllReduce(loss.item<double>(), distributed::ReduceOp::kMean) * static_cast<double>(n * world.size());
      epoch_examples += n * world.size();
      ++step;
      if (lead && (step % 25 == 0 || step == steps_per_epoch)) {
        train_seconds = before + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        ShowProgress("step", epoch * steps_per_epoch + step, total_steps, 0,
                     absl::StrFormat("epoch %d/%d | loss %.4f", epoch + 1, epochs, loss_sum / epoch_examples),
                     (examples + epoch_examples) / train_seconds, "img", train_seconds);
      }
    }
    examples += epoch_examples;
    train_loss = loss_sum / static_cast<double>(epoch_examples);
    evaluation = Evaluate(*model, test->images, test->labels);  // the same model on every rank
    if (!lead) continue;
    EndProgress();
    std::fprintf(stderr, "epoch %lld: train loss %.4f, test loss %.4f, test accuracy %.2f%%\n",
                 static_cast<long long>(epoch + 1), train_loss, evaluation.loss, 100 * evaluation.accuracy);
    csv << epoch + 1 << ',' << train_loss << ',' << evaluation.loss << ',' << evaluation.accuracy << ','
        << train_seconds << ',' << examples / train_seconds << '\n';
  }
  if (!lead) return absl::OkStatus();
  const double examples_per_second = examples / train_seconds;
  const std::string checkpoint = absl::GetFlag(FLAGS_save_checkpoint).empty()
                                     ? absl::StrCat(out_dir, "/", model_name, ".safetensors")
                                     : absl::GetFlag(FLAGS_save_checkpoint);
  RETURN_IF_ERROR(nn::SaveSafetensors(checkpoint, (model)->StateDict()));
  std::fprintf(stderr, "train: test accuracy %.2f%% after %lld epochs, %s of training, %.0f images/s; wrote %s and %s/metrics.csv\n",
               100 * evaluation.accuracy, static_cast<long long>(epochs), FormatDuration(train_seconds).c_str(),
               examples_per_second, checkpoint.c_str(), out_dir.c_str());
  if (const std::string path = absl::GetFlag(FLAGS_metrics_out); !path.empty()) {
    return WriteMetricsJson(path, {{"test_accuracy", evaluation.accuracy}, {"test_loss", evaluation.loss},
                                   {"train_loss", train_loss}, {"train_seconds", train_seconds},
                                   {"examples_per_second", examples_per_second}, {"epochs", epochs},
                                   {"parameters", (model)->NumParameters()}});
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::models::mnist

int main(int argc, char** argv) {
  return ember::RunMain(argc, argv, "train",
                                "trains a Fashion-MNIST classifier; see models/mnist/train.cc's header",
                                &ember::models::mnist::Run);
}
