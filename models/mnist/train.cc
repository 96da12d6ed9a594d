// Trains an image classifier on Fashion-MNIST or MNIST digits and reports its test
// accuracy:
//
//   bazel run -c opt //models/mnist:train                               # MLP, SGD, 5 epochs
//   bazel run -c opt //models/mnist:train -- --model=cnn --optimizer=adam --epochs=3
//   bazel run -c opt //models/mnist:train -- --dataset=digits --loss=squared_error
//   EMBER_NUM_THREADS=1 bazel run -c opt //models/mnist:train -- --batch_size=32   # one thread
//
// The data (./setup.sh fetches both): --dataset=fashion, Debian's dataset-fashion-mnist,
// 60,000 training and 10,000 test images; --dataset=digits, 10,000 MNIST digits split
// 8,000 / 2,000, each digit in the same proportion (downloads/README.md). Each epoch visits the
// training set in a seeded shuffled order; the progress line shows the epoch, the running loss,
// examples per second and the ETA; after each epoch the test loss and accuracy go to
// --out_dir/metrics.csv (and the loss curves to --out_dir/loss.svg), and at the end the model to
// --save_checkpoint and the final figures (test_accuracy, test_loss, train_loss, train_seconds,
// examples_per_second, epochs, parameters) to
// --metrics_out as one JSON object. train_seconds counts the training steps and
// their batches, not the evaluation. tools/reference/mnist_torch.py runs the same
// configuration in PyTorch.
//
// Stopping and resuming (models/common/checkpoints.h): the checkpoint (the final one,
// --checkpoint_every's, and the one Ctrl-C or SIGTERM writes before exiting 130 or 143)
// holds the weights, the optimizer's state and the run's position; --resume=latest
// continues the run to --epochs exactly as if it had not stopped, with the same flags.
//
// Data parallel: `mpirun -np N .../train --batch_size=B` trains one model on N
// processes, each taking its B rows of every shuffled global batch of N B images (the
// last, partial, global batch is skipped so that every rank has B), with the gradients
// averaged over ranks; rank 0 alone prints and writes. With --fsdp the ranks also split
// the parameters, their gradients and the optimizer's state (each layer an FSDP unit,
// distributed/sharded_model.h); checkpoints hold everything whole either way, so a run
// resumes on any mesh of the same global batch.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "autograd/autograd.h"
#include "base/atomic_file.h"
#include "base/status.h"
#include "data/datasets.h"
#include "data/loader.h"
#include "distributed/process_group.h"
#include "distributed/sharded_model.h"
#include "models/common/checkpoints.h"
#include "models/common/loss_plot.h"
#include "models/common/precision.h"
#include "models/common/run_log.h"
#include "models/common/sharding.h"
#include "models/mnist/classifier.h"
#include "nn/loss.h"
#include "tensor/cuda.h"

ABSL_FLAG(
    std::string, model, "mlp",
    "mlp (784-128-10), cnn (two conv+pool stages, then linear), or a .json model spec "
    "(nn/network_json.h: a network of named layers or a chain) from [B, 1, 28, 28] to 10 logits");
ABSL_FLAG(std::string, optimizer, "sgd", "sgd, momentum (SGD, momentum 0.9), rmsprop or adam");
ABSL_FLAG(int64_t, epochs, 5, "passes over the training images");
ABSL_FLAG(int64_t, batch_size, 32, "images per step (per rank under mpirun)");
ABSL_FLAG(double, lr, 0,
          "learning rate (0: the optimizer's default: sgd 0.1, momentum 0.01, rmsprop/adam 1e-3)");
ABSL_FLAG(uint64_t, seed, 0, "seed of the initialisation and the shuffling");
ABSL_FLAG(std::string, device, "cpu",
          "where to run: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU)");
ABSL_FLAG(std::string, dtype, "auto", ember::models::kDTypeFlagHelp);
ABSL_FLAG(std::string, dataset, "fashion",
          "fashion (Fashion-MNIST: 60,000 / 10,000 images) or digits (MNIST digits: 8,000 / "
          "2,000, downloads/mnist-digits)");
ABSL_FLAG(std::string, data_dir, "",
          "folder of the IDX files (train-*, t10k-*) (default: --dataset's, from ./setup.sh)");
ABSL_FLAG(std::string, loss, "cross_entropy",
          "cross_entropy, or squared_error (the mean squared error of the softmax against "
          "the one-hot label, as Keras's mean_squared_error on a softmax output)");
ABSL_FLAG(std::string, out_dir, "",
          "where metrics.csv goes (default: runs/mnist in the workspace)");
ABSL_FLAG(std::string, save_checkpoint, "",
          "the trained model's safetensors (default: OUT_DIR/<model>.safetensors)");
ABSL_FLAG(int64_t, checkpoint_every, 0,
          "also write OUT_DIR/checkpoints/step_N.safetensors every this many steps (0: never)");
ABSL_FLAG(int64_t, keep_checkpoints, 3,
          "keep the newest this many of OUT_DIR/checkpoints/ (older ones are deleted)");
ABSL_FLAG(std::string, resume, "",
          "continue this checkpoint's run (to --epochs, with its flags); latest: the newest in "
          "--out_dir");
ABSL_FLAG(std::string, metrics_out, "", "write the final figures here as one JSON object");
ABSL_FLAG(std::string, mesh, "", ember::models::kMeshFlagHelp);
ABSL_FLAG(bool, fsdp, false, ember::models::kFsdpFlagHelp);

namespace ember::models::mnist {
namespace {

namespace ag = ::ember::autograd;

constexpr char kCheckpointFormat[] = "ember-mnist";

// The run the flags ask for, checked in the order a user's mistakes are reported.
struct RunOptions {
  std::string model, optimizer, loss, dataset, data_dir, mesh;
  bool fsdp;
  int64_t epochs, batch_size;  // batch_size: per rank
  double lr;
  uint64_t seed;
  Device device;
  DType dtype;  // the products' (models/common/precision.h)

  // The flags a resumed run must share with the run that wrote its checkpoint.
  std::map<std::string, std::string> RunFlags(int world_size) const {
    return {{"model", model},
            {"optimizer", optimizer},
            {"loss", loss},
            {"dataset", dataset},
            {"lr", absl::StrCat(lr)},
            {"batch_size", absl::StrCat(batch_size)},
            {"seed", absl::StrCat(seed)},
            {"ranks", absl::StrCat(world_size)}};
  }
};

absl::StatusOr<RunOptions> RunOptionsFromFlags() {
  RunOptions o;
  o.model = absl::GetFlag(FLAGS_model);
  o.optimizer = absl::GetFlag(FLAGS_optimizer);
  o.loss = absl::GetFlag(FLAGS_loss);
  RETURN_IF_ERROR(CheckLoss(o.loss));
  o.dataset = absl::GetFlag(FLAGS_dataset);
  if (o.dataset != "fashion" && o.dataset != "digits") {
    return absl::InvalidArgumentError(
        absl::StrCat("--dataset=", o.dataset, ": expected fashion or digits"));
  }
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  if (o.data_dir.empty()) {
    o.data_dir =
        o.dataset == "fashion" ? data::kFashionMnistDir : WorkspacePath(data::kMnistDigitsDir);
  }
  o.epochs = absl::GetFlag(FLAGS_epochs);
  o.batch_size = absl::GetFlag(FLAGS_batch_size);
  if (o.epochs < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--epochs=", o.epochs, ": expected at least 1"));
  }
  if (o.batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch_size=", o.batch_size, ": expected at least 1"));
  }
  o.lr = absl::GetFlag(FLAGS_lr);
  if (o.lr == 0) {
    ASSIGN_OR_RETURN(o.lr, DefaultLearningRate(o.optimizer));
  }
  o.seed = absl::GetFlag(FLAGS_seed);
  ASSIGN_OR_RETURN(o.device, cuda::DeviceFromFlag(absl::GetFlag(FLAGS_device)));
  ASSIGN_OR_RETURN(o.dtype, ComputeDTypeFromFlag(absl::GetFlag(FLAGS_dtype), o.device));
  o.mesh = absl::GetFlag(FLAGS_mesh);
  o.fsdp = absl::GetFlag(FLAGS_fsdp);
  return o;
}

// Where a run is: `step` optimizer steps done, of which the current epoch's took
// `epoch_examples` images with a summed loss of `loss_sum`; `examples` images in the
// finished epochs; `train_seconds` of training so far.
struct Position {
  int64_t step = 0, examples = 0, epoch_examples = 0;
  double loss_sum = 0, train_seconds = 0;
};

// A checkpoint that resumes the run: the model, the optimizer, the run's flags and its
// position.
absl::Status SaveRun(const std::string& path, const distributed::ShardedModel& model,
                     const optim::Optimizer& optimizer,
                     const std::map<std::string, std::string>& run_flags, const Position& at) {
  // Collective (whole tensors from every rank's shards); rank 0 writes.
  TrainingState state{model.StateDict(), model.OptimizerStateDict(optimizer), run_flags};
  if (distributed::World().rank() != 0) return absl::OkStatus();
  state.metadata.insert({{"format", kCheckpointFormat},
                         {"step", absl::StrCat(at.step)},
                         {"examples", absl::StrCat(at.examples)},
                         {"epoch_examples", absl::StrCat(at.epoch_examples)},
                         {"epoch_loss_sum", ExactDouble(at.loss_sum)},
                         {"train_seconds", ExactDouble(at.train_seconds)}});
  return SaveTrainingState(path, state);
}

// Loads SaveRun's checkpoint into model and optimizer, after checking that it was
// written with the same run flags and that steps remain before total_steps.
absl::StatusOr<Position> ResumeRun(const std::string& path, distributed::ShardedModel& model,
                                   optim::Optimizer& optimizer,
                                   const std::map<std::string, std::string>& run_flags,
                                   int64_t epochs, int64_t total_steps) {
  ASSIGN_OR_RETURN(const TrainingState state, LoadTrainingState(path, kCheckpointFormat));
  // Flags added after checkpoints were written: such a checkpoint ran with their default.
  const std::map<std::string, std::string> added = {{"loss", "cross_entropy"},
                                                    {"dataset", "fashion"}};
  for (const auto& [flag, value] : run_flags) {
    const auto old = added.find(flag);
    if (old != added.end() && state.metadata.count(flag) == 0 && value == old->second) continue;
    RETURN_IF_ERROR(CheckSameRun(state, path, flag, value));
  }
  RETURN_IF_ERROR(model.LoadStateDict(state.model));
  RETURN_IF_ERROR(model.LoadOptimizerStateDict(optimizer, state.optimizer));
  Position at;
  ASSIGN_OR_RETURN(at.step, MetadataInt(state, path, "step"));
  ASSIGN_OR_RETURN(at.examples, MetadataInt(state, path, "examples"));
  ASSIGN_OR_RETURN(at.epoch_examples, MetadataInt(state, path, "epoch_examples"));
  ASSIGN_OR_RETURN(at.loss_sum, MetadataDouble(state, path, "epoch_loss_sum"));
  ASSIGN_OR_RETURN(at.train_seconds, MetadataDouble(state, path, "train_seconds"));
  if (at.step < 1 || at.step >= total_steps) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is at step ", at.step,
                                                   " and --epochs=", epochs, " has ", total_steps,
                                                   ": nothing to continue (more --epochs?)"));
  }
  return at;
}

// After a step: --checkpoint_every's checkpoint, and the stop a signal asked for (every
// rank stops at the same step, whichever of them got it); true to stop.
absl::StatusOr<bool> CheckpointOrStop(distributed::ProcessGroup& world, const std::string& out_dir,
                                      int64_t total_steps,
                                      const std::function<absl::Status(const std::string&)>& save,
                                      int64_t step) {
  bool stop = StopSignal() != 0;
  if (world.size() > 1) stop = world.AllReduce(stop ? 1.0 : 0.0) > 0;
  const int64_t every = absl::GetFlag(FLAGS_checkpoint_every);
  if (!stop && !(every > 0 && step % every == 0 && step < total_steps)) return false;
  const std::string path = StepCheckpointPath(out_dir, step);
  RETURN_IF_ERROR(save(path));  // collective
  if (world.rank() != 0) return stop;
  PruneStepCheckpoints(out_dir, absl::GetFlag(FLAGS_keep_checkpoints));
  if (stop) ReportStop(step, path);
  return stop;
}

// The dataset's images from its folder, and the loader of its training images in global batches
// (this rank takes its rows of each).
struct Data {
  data::ImageSet train, test;
  std::unique_ptr<data::DataLoader> loader;
};

absl::StatusOr<Data> LoadData(const RunOptions& o, int world_size) {
  const std::string& dir = o.data_dir;
  absl::StatusOr<data::ImageSet> train =
      data::LoadMnist(dir, data::Split::kTrain, data::ImageLayout::kNCHW);
  if (!train.ok()) return MissingInput(train.status());
  absl::StatusOr<data::ImageSet> test =
      data::LoadMnist(dir, data::Split::kTest, data::ImageLayout::kNCHW);
  if (!test.ok()) return MissingInput(test.status());
  data::LoaderOptions loading;
  loading.batch_size = o.batch_size * world_size;
  loading.drop_last = world_size > 1;
  loading.seed = o.seed;
  loading.prefetch = 0;  // a batch is a 100 kB copy, far less than a step: no thread needed
  ASSIGN_OR_RETURN(
      std::unique_ptr<data::DataLoader> loader,
      data::DataLoader::Create(train->images.size(0),
                               data::RowBatches(train->images, train->labels), loading));
  return Data{*std::move(train), *std::move(test), std::move(loader)};
}

// One optimizer step on this rank's rows of `batch`, the gradients averaged over the
// ranks (or reduce-scattered into their shards); returns the global batch's mean loss.
double TrainStep(distributed::ShardedModel& sharded, optim::Optimizer& optimizer,
                 distributed::ProcessGroup& world, const data::Batch& batch, Device device,
                 DType dtype, const std::string& kind) {
  const int64_t n = batch.x.size(0) / world.size(), first = world.rank() * n;
  sharded.ZeroGrad();
  Tensor loss;
  {
    const ag::AutocastGuard autocast(dtype);
    sharded.BeginForward();
    loss = ClassifierLoss(kind, sharded.model()(batch.x.Narrow(0, first, n).To(device)),
                          batch.y.Narrow(0, first, n).To(device));
  }
  sharded.BeginBackward(/*last_micro_batch=*/true);
  ag::Backward(loss);
  sharded.EndBackward();
  sharded.FinishGradients();
  optimizer.Step();
  sharded.ParametersUpdated();
  return world.AllReduce(loss.item<double>(), distributed::ReduceOp::kMean);
}

// On the lead rank: out_dir made, metrics.csv opened (a resumed run appends after the
// epochs its checkpoint had finished, dropping later rows) and the run's banner printed.
absl::StatusOr<std::ofstream> StartLog(const RunOptions& o, const std::string& out_dir,
                                       const nn::Module& model, const Data& data,
                                       const Position& at, int64_t steps_per_epoch,
                                       int64_t total_steps, int world_size, bool fsdp) {
  RETURN_IF_ERROR(CreateDirectories(out_dir));
  if (at.step > 0)
    RETURN_IF_ERROR(DropRowsAfter(out_dir + "/metrics.csv", at.step / steps_per_epoch));
  std::ofstream csv(out_dir + "/metrics.csv", at.step > 0 ? std::ios::app : std::ios::trunc);
  if (at.step == 0)
    csv << "epoch,train_loss,test_loss,test_accuracy,train_seconds,examples_per_second\n";
  std::fprintf(
      stderr,
      "train: %s (%lld parameters) on %s%s, %s lr %g, %lld epochs of %lld images in batches of "
      "%s%lld%s\n",
      o.model.c_str(), static_cast<long long>(model.NumParameters()),
      world_size > 1 ? absl::StrCat(world_size, fsdp ? " ranks (FSDP) x " : " ranks x ").c_str()
                     : "",
      o.device.ToString().c_str(), o.optimizer.c_str(), o.lr, static_cast<long long>(o.epochs),
      static_cast<long long>(data.train.images.size(0)),
      world_size > 1 ? absl::StrCat(world_size, " x ").c_str() : "",
      static_cast<long long>(o.batch_size),
      at.step > 0 ? absl::StrCat("; resuming at step ", at.step, " of ", total_steps).c_str() : "");
  return csv;
}

// On the lead rank, after epoch `epoch` (0-based): its line on stderr and in
// metrics.csv, and loss.svg redrawn from every epoch's row (a resumed run's too).
absl::Status ReportEpoch(const RunOptions& o, const std::string& out_dir, int64_t epoch,
                         double train_loss, const Evaluation& evaluation, const Position& at,
                         std::ofstream& csv) {
  EndProgress();
  std::fprintf(stderr, "epoch %lld: train loss %.4f, test loss %.4f, test accuracy %.2f%%\n",
               static_cast<long long>(epoch + 1), train_loss, evaluation.loss,
               100 * evaluation.accuracy);
  csv << epoch + 1 << ',' << train_loss << ',' << evaluation.loss << ',' << evaluation.accuracy
      << ',' << at.train_seconds << ',' << at.examples / at.train_seconds << '\n';
  csv.flush();
  LossCurves curves = ReadLossCurves(out_dir + "/metrics.csv");
  curves.title =
      absl::StrCat(o.model, ", ", o.optimizer, " lr ", o.lr, ", ", o.loss, ", ", o.dataset);
  curves.x_label = "epoch";
  curves.y_label = absl::StrCat("loss (", o.loss, ")");
  curves.val_label = "test";
  return WriteLossSvg(out_dir + "/loss.svg", curves, /*log_scale=*/false);
}

// On the lead rank, at the end (the final checkpoint written): the summary line and
// --metrics_out's JSON.
absl::Status Finish(const RunOptions& o, const std::string& out_dir, const std::string& checkpoint,
                    const nn::Module& model, double train_loss, const Evaluation& evaluation,
                    const Position& at) {
  const double examples_per_second = at.examples / at.train_seconds;
  std::fprintf(stderr,
               "train: test accuracy %.2f%% after %lld epochs, %s of training, %.0f images/s; "
               "wrote %s and %s/metrics.csv\n",
               100 * evaluation.accuracy, static_cast<long long>(o.epochs),
               FormatDuration(at.train_seconds).c_str(), examples_per_second, checkpoint.c_str(),
               out_dir.c_str());
  if (const std::string path = absl::GetFlag(FLAGS_metrics_out); !path.empty()) {
    return WriteMetricsJson(path, {{"test_accuracy", evaluation.accuracy},
                                   {"test_loss", evaluation.loss},
                                   {"train_loss", train_loss},
                                   {"train_seconds", at.train_seconds},
                                   {"examples_per_second", examples_per_second},
                                   {"epochs", o.epochs},
                                   {"parameters", model.NumParameters()}});
  }
  return absl::OkStatus();
}

absl::Status Run() {
  ASSIGN_OR_RETURN(const RunOptions o, RunOptionsFromFlags());
  distributed::ProcessGroup& world = distributed::World();
  const bool lead = world.rank() == 0;  // the rank that prints and writes
  Generator gen(o.seed);
  ASSIGN_OR_RETURN(std::shared_ptr<nn::Module> model, MakeClassifier(o.model, gen));
  ASSIGN_OR_RETURN(const std::unique_ptr<distributed::ShardedModel> sharded,
                   ShardLayers(model, o.mesh, o.fsdp, o.device, gen));
  ASSIGN_OR_RETURN(std::unique_ptr<optim::Optimizer> optimizer,
                   MakeOptimizer(o.optimizer, sharded->parameters(), o.lr));
  ASSIGN_OR_RETURN(const Data data, LoadData(o, world.size()));
  data::DataLoader* const loader = data.loader.get();

  const int64_t steps_per_epoch = loader->batches_per_epoch(),
                total_steps = o.epochs * steps_per_epoch;
  const std::map<std::string, std::string> run_flags = o.RunFlags(world.size());
  const std::string out_dir = PathOrWorkspace(absl::GetFlag(FLAGS_out_dir), "runs/mnist");
  const std::string checkpoint =
      absl::GetFlag(FLAGS_save_checkpoint).empty()
          ? absl::StrCat(out_dir, "/", std::filesystem::path(o.model).stem().string(),
                         ".safetensors")
          : absl::GetFlag(FLAGS_save_checkpoint);
  std::string resume = absl::GetFlag(FLAGS_resume);
  if (resume == "latest") {
    ASSIGN_OR_RETURN(
        resume, LatestCheckpoint(out_dir, std::filesystem::path(checkpoint).filename().string()));
  }
  Position at;
  if (!resume.empty()) {
    ASSIGN_OR_RETURN(at, ResumeRun(resume, *sharded, *optimizer, run_flags, o.epochs, total_steps));
  }
  const int64_t first_step = at.step;
  std::ofstream csv;
  if (lead) {
    ASSIGN_OR_RETURN(csv, StartLog(o, out_dir, *model, data, at, steps_per_epoch, total_steps,
                                   world.size(), sharded->fsdp() != nullptr));
  }
  const auto save = [&](const std::string& path) {
    return SaveRun(path, *sharded, *optimizer, run_flags, at);
  };
  CatchStopSignals();
  double train_loss = 0;
  Evaluation evaluation;
  for (int64_t epoch = at.step / steps_per_epoch; epoch < o.epochs; ++epoch) {
    loader->StartEpoch(epoch);
    for (int64_t done = at.step - epoch * steps_per_epoch; done > 0; --done)
      loader->Next();  // resumed mid-epoch
    auto start = std::chrono::steady_clock::now();
    while (std::optional<data::Batch> batch = loader->Next()) {
      const double loss = TrainStep(*sharded, *optimizer, world, *batch, o.device, o.dtype, o.loss);
      at.loss_sum += loss * static_cast<double>(batch->x.size(0));
      at.epoch_examples += batch->x.size(0);
      ++at.step;
      const auto now = std::chrono::steady_clock::now();
      at.train_seconds += std::chrono::duration<double>(now - start).count();
      start = now;
      if (lead && (at.step % 25 == 0 || at.step % steps_per_epoch == 0)) {
        ShowProgress("step", at.step, total_steps, first_step,
                     absl::StrFormat("epoch %d/%d | loss %.4f", epoch + 1, o.epochs,
                                     at.loss_sum / at.epoch_examples),
                     (at.examples + at.epoch_examples) / at.train_seconds, "img", at.train_seconds);
      }
      // The epoch's last step stops after its evaluation, below.
      if (at.step % steps_per_epoch != 0) {
        ASSIGN_OR_RETURN(const bool stop,
                         CheckpointOrStop(world, out_dir, total_steps, save, at.step));
        if (stop) return absl::OkStatus();  // main exits with 128 + the signal
      }
    }
    at.examples += at.epoch_examples;
    train_loss = at.loss_sum / static_cast<double>(at.epoch_examples);
    at.loss_sum = 0, at.epoch_examples = 0;
    {
      const ag::AutocastGuard autocast(o.dtype);
      sharded->BeginForward();
      evaluation = Evaluate(*model, data.test.images, data.test.labels, 1000,
                            o.loss);  // the same on every rank
    }
    if (lead) RETURN_IF_ERROR(ReportEpoch(o, out_dir, epoch, train_loss, evaluation, at, csv));
    ASSIGN_OR_RETURN(const bool stop, CheckpointOrStop(world, out_dir, total_steps, save, at.step));
    if (stop) return absl::OkStatus();
  }
  RETURN_IF_ERROR(save(checkpoint));  // collective
  if (!lead) return absl::OkStatus();
  return Finish(o, out_dir, checkpoint, *model, train_loss, evaluation, at);
}

}  // namespace
}  // namespace ember::models::mnist

int main(int argc, char** argv) {
  const int code = ember::RunMain(
      argc, argv, "train",
      "trains a Fashion-MNIST or MNIST-digits classifier; see models/mnist/train.cc's header",
      &ember::models::mnist::Run);
  return ember::models::ExitCodeAfterSignal(code);
}
