// Trains makemore's MLP character model on English first names and samples names:
//
//   bazel run -c opt //models/makemore:train                          # 200,000 steps of 32
//   bazel run -c opt //models/makemore:train -- --steps=20000 --hidden=100
//
// The split is models/common/names.h's (80/10/10), the schedule makemore's: minibatches
// of --batch_size examples drawn uniformly with replacement, SGD at --lr for the first
// half of the steps and --lr / 10 for the second. The progress line shows the step,
// the minibatch loss, steps/s and the ETA; every --val_every steps the loss on the
// whole training and validation splits goes to --out_dir/metrics.csv; at the end the
// losses of the three splits and --samples names are printed, and --metrics_out gets
// one JSON object (train_loss, val_loss, test_loss, samples, train_seconds, steps,
// parameters). tools/reference/makemore_torch.py runs the same in PyTorch.
//
// Stopping and resuming (models/common/checkpoints.h): --checkpoint_every, and Ctrl-C
// or SIGTERM, write the weights and the run's position (its step and where its random
// stream is); --resume=latest continues with the same flags to the same model and
// samples as a run that never stopped.

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
#include "data/loader.h"
#include "models/common/checkpoints.h"
#include "models/common/names.h"
#include "models/common/precision.h"
#include "models/common/run_log.h"
#include "models/makemore/mlp.h"
#include "nn/loss.h"
#include "optim/optimizer.h"
#include "tensor/cuda.h"

ABSL_FLAG(int64_t, block_size, 3, "characters of context");
ABSL_FLAG(int64_t, embedding, 10, "dimensions of each character's embedding");
ABSL_FLAG(int64_t, hidden, 200, "tanh units");
ABSL_FLAG(int64_t, steps, 200000, "SGD steps");
ABSL_FLAG(int64_t, batch_size, 32, "examples per step, drawn with replacement");
ABSL_FLAG(double, lr, 0.1, "learning rate of the first half of the steps (then a tenth of it)");
ABSL_FLAG(uint64_t, seed, 2147483647,
          "seed of the initialisation, the minibatches and the samples");
ABSL_FLAG(std::string, device, "cpu",
          "where to run: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU)");
ABSL_FLAG(std::string, dtype, "auto", ember::models::kDTypeFlagHelp);
ABSL_FLAG(int64_t, val_every, 10000,
          "losses on the whole train and val splits every this many steps");
ABSL_FLAG(int64_t, samples, 20, "names to sample at the end");
ABSL_FLAG(std::string, names_dir, "",
          "folder with female.txt and male.txt (default: downloads/names)");
ABSL_FLAG(std::string, out_dir, "", "where metrics.csv and the model go (default: runs/makemore)");
ABSL_FLAG(std::string, metrics_out, "", "write the final figures here as one JSON object");
ABSL_FLAG(int64_t, checkpoint_every, 0,
          "also write OUT_DIR/checkpoints/step_N.safetensors every this many steps (0: never)");
ABSL_FLAG(int64_t, keep_checkpoints, 3,
          "keep the newest this many of OUT_DIR/checkpoints/ (older ones are deleted)");
ABSL_FLAG(std::string, resume, "",
          "continue this checkpoint's run (with its flags); latest: the newest in --out_dir");

namespace ember::models::makemore {
namespace {

namespace ag = ::ember::autograd;

constexpr char kCheckpointFormat[] = "ember-makemore";

double SplitLoss(Mlp& model, const data::CharExamples& split, DType dtype) {
  ag::NoGradGuard no_grad;
  const ag::AutocastGuard autocast(dtype);
  return nn::CrossEntropyLoss(model(split.x.To(model.device())), split.y.To(model.device()))
      .item<double>();
}

// The MLP's sizes from the flags (vocab is the data's), each flag of a size or count at
// least 1.
absl::StatusOr<MlpConfig> ConfigFromFlags() {
  MlpConfig config;
  config.block_size = absl::GetFlag(FLAGS_block_size);
  config.embedding = absl::GetFlag(FLAGS_embedding);
  config.hidden = absl::GetFlag(FLAGS_hidden);
  for (const auto& [flag, value] :
       {std::pair<const char*, int64_t>{"block_size", config.block_size},
        {"embedding", config.embedding},
        {"hidden", config.hidden},
        {"steps", absl::GetFlag(FLAGS_steps)},
        {"batch_size", absl::GetFlag(FLAGS_batch_size)}}) {
    if (value < 1)
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, "=", value, ": expected at least 1"));
  }
  return config;
}

// Where a run stands: steps done, training seconds, the last batch's loss.
struct Progress {
  int64_t step = 0;
  double seconds = 0, batch_loss = 0;
};

// The run a checkpoint holds, loaded into model and gen after checking that it was made
// with the same run_flags and is within --steps.
absl::StatusOr<Progress> Resume(const std::string& path,
                                const std::map<std::string, std::string>& run_flags, int64_t steps,
                                Mlp& model, Generator& gen) {
  ASSIGN_OR_RETURN(const TrainingState state, LoadTrainingState(path, kCheckpointFormat));
  for (const auto& [flag, value] : run_flags)
    RETURN_IF_ERROR(CheckSameRun(state, path, flag, value));
  RETURN_IF_ERROR(model.LoadStateDict(state.model));
  Progress at;
  ASSIGN_OR_RETURN(at.step, MetadataInt(state, path, "step"));
  ASSIGN_OR_RETURN(const int64_t offset, MetadataInt(state, path, "generator_offset"));
  ASSIGN_OR_RETURN(at.seconds, MetadataDouble(state, path, "train_seconds"));
  ASSIGN_OR_RETURN(at.batch_loss, MetadataDouble(state, path, "batch_loss"));
  if (at.step < 1 || at.step > steps || offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is at step ", at.step, " of --steps=", steps));
  }
  gen.set_offset(static_cast<uint64_t>(offset));
  return at;
}

// After the last step: the splits' losses, the final checkpoint (by `save`), sampled
// names and --metrics_out's JSON.
absl::Status Finish(Mlp& model, const NameSplits& names, DType dtype, Device device, int block,
                    const Progress& at, int64_t steps, Generator& gen, const std::string& out_dir,
                    const std::function<absl::Status(const std::string&, int64_t)>& save) {
  const double train_loss = SplitLoss(model, names.train.examples, dtype),
               val_loss = SplitLoss(model, names.val.examples, dtype),
               test_loss = SplitLoss(model, names.test.examples, dtype);
  std::printf("loss (nats per character): train %.4f, val %.4f, test %.4f (%s of training)\n",
              train_loss, val_loss, test_loss, FormatDuration(at.seconds).c_str());
  RETURN_IF_ERROR(save(out_dir + "/mlp.safetensors", at.step));
  model.Eval();
  const std::vector<std::string> samples = PrintSampledNames(
      absl::GetFlag(FLAGS_samples), [&](const Tensor& x) { return model(x.To(device)); }, block,
      names.vocab, gen);
  if (const std::string path = absl::GetFlag(FLAGS_metrics_out); !path.empty()) {
    return WriteMetricsJson(path, {{"train_loss", train_loss},
                                   {"val_loss", val_loss},
                                   {"test_loss", test_loss},
                                   {"samples", samples},
                                   {"train_seconds", at.seconds},
                                   {"steps", steps},
                                   {"parameters", model.NumParameters()}});
  }
  return absl::OkStatus();
}

absl::Status Run() {
  ASSIGN_OR_RETURN(const Device device, cuda::DeviceFromFlag(absl::GetFlag(FLAGS_device)));
  ASSIGN_OR_RETURN(const DType dtype, ComputeDTypeFromFlag(absl::GetFlag(FLAGS_dtype), device));
  ASSIGN_OR_RETURN(MlpConfig config, ConfigFromFlags());
  const int64_t steps = absl::GetFlag(FLAGS_steps), batch_size = absl::GetFlag(FLAGS_batch_size);
  const std::string dir = PathOrWorkspace(absl::GetFlag(FLAGS_names_dir), data::kNamesDir);
  const int block = static_cast<int>(config.block_size);
  absl::StatusOr<NameSplits> names = LoadNameSplits(dir, block);
  if (!names.ok()) return MissingInput(names.status());
  const data::CharExamples &train = names->train.examples, &val = names->val.examples;
  config.vocab = static_cast<int64_t>(names->vocab.size());

  Generator gen(absl::GetFlag(FLAGS_seed));
  Mlp model(config, gen);
  model.To(device);
  const double lr = absl::GetFlag(FLAGS_lr);
  auto sgd = optim::Sgd({{model.Parameters(), lr, 0}});
  const std::string out_dir = PathOrWorkspace(absl::GetFlag(FLAGS_out_dir), "runs/makemore");
  // What a resumed run must share with the run that wrote its checkpoint.
  const std::map<std::string, std::string> run_flags = {
      {"block_size", absl::StrCat(config.block_size)},
      {"embedding", absl::StrCat(config.embedding)},
      {"hidden", absl::StrCat(config.hidden)},
      {"steps", absl::StrCat(steps)},
      {"batch_size", absl::StrCat(batch_size)},
      {"lr", absl::StrCat(lr)},
      {"seed", absl::StrCat(absl::GetFlag(FLAGS_seed))}};
  Progress at;
  std::string resume = absl::GetFlag(FLAGS_resume);
  if (resume == "latest") {
    ASSIGN_OR_RETURN(resume, LatestCheckpoint(out_dir, "mlp.safetensors"));
  }
  if (!resume.empty()) {
    ASSIGN_OR_RETURN(at, Resume(resume, run_flags, steps, model, gen));
  }
  int64_t& step = at.step;  // steps done
  double &seconds = at.seconds, &batch_loss = at.batch_loss;
  const int64_t first_step = step;
  std::fprintf(
      stderr, "train: %s on %s, %lld parameters; %lld training examples; %lld steps of %lld%s\n",
      model.ToString().c_str(), device.ToString().c_str(),
      static_cast<long long>(model.NumParameters()), static_cast<long long>(train.y.size(0)),
      static_cast<long long>(steps), static_cast<long long>(batch_size),
      step > 0 ? absl::StrCat("; resuming at step ", step).c_str() : "");
  RETURN_IF_ERROR(CreateDirectories(out_dir));
  if (step > 0) RETURN_IF_ERROR(DropRowsAfter(out_dir + "/metrics.csv", step));
  std::ofstream csv(out_dir + "/metrics.csv", step > 0 ? std::ios::app : std::ios::trunc);
  if (step == 0) csv << "step,lr,batch_loss,train_loss,val_loss\n";

  // The run so far, for a checkpoint that resumes it.
  auto save = [&](const std::string& path, int64_t done) {
    TrainingState state{model.StateDict(), {}, run_flags};
    state.metadata.insert({{"format", kCheckpointFormat},
                           {"step", absl::StrCat(done)},
                           {"generator_offset", absl::StrCat(gen.offset())},
                           {"train_seconds", ExactDouble(seconds)},
                           {"batch_loss", ExactDouble(batch_loss)}});
    return SaveTrainingState(path, state);
  };
  const int64_t val_every = std::max<int64_t>(1, absl::GetFlag(FLAGS_val_every));
  const int64_t checkpoint_every = absl::GetFlag(FLAGS_checkpoint_every);
  const int64_t n = train.y.size(0);
  const data::BatchFn rows = data::RowBatches(train.x, train.y);
  std::vector<int64_t> index(static_cast<size_t>(batch_size));
  CatchStopSignals();
  auto start = std::chrono::steady_clock::now();
  for (; step < steps; ++step) {
    for (int64_t& i : index) i = static_cast<int64_t>(gen.NextBelow(static_cast<uint64_t>(n)));
    const data::Batch batch = rows(index);
    Tensor loss;
    {
      const ag::AutocastGuard autocast(dtype);
      loss = nn::CrossEntropyLoss(model(batch.x.To(device)), batch.y.To(device));
    }
    sgd->ZeroGrad();
    ag::Backward(loss);
    sgd->param_groups()[0].lr = StepDecayLr(lr, step, steps);
    sgd->Step();
    batch_loss = loss.item<double>();
    const int64_t done = step + 1;
    const bool last = done == steps, report = done % val_every == 0 || last;
    const auto now = std::chrono::steady_clock::now();
    seconds += std::chrono::duration<double>(now - start).count();
    start = now;
    if (done % 500 == 0 || report) {
      ShowProgress("step", done, steps, first_step, absl::StrFormat("loss %.4f", batch_loss),
                   (done - first_step) / seconds, "step", seconds);
    }
    if (report) {
      const double train_loss = SplitLoss(model, train, dtype),
                   val_loss = SplitLoss(model, val, dtype);
      csv << done << ',' << sgd->param_groups()[0].lr << ',' << batch_loss << ',' << train_loss
          << ',' << val_loss << '\n';
      csv.flush();
      EndProgress();
      std::fprintf(stderr, "step %lld: train loss %.4f, val loss %.4f\n",
                   static_cast<long long>(done), train_loss, val_loss);
      start = std::chrono::steady_clock::now();  // the evaluation is not training time
    }
    const bool stop = StopSignal() != 0;
    if ((stop || (checkpoint_every > 0 && done % checkpoint_every == 0)) && !last) {
      const std::string path = StepCheckpointPath(out_dir, done);
      RETURN_IF_ERROR(save(path, done));
      PruneStepCheckpoints(out_dir, absl::GetFlag(FLAGS_keep_checkpoints));
      if (stop) {
        ReportStop(done, path);
        return absl::OkStatus();  // main exits with 128 + the signal
      }
    }
  }
  return Finish(model, *names, dtype, device, block, at, steps, gen, out_dir, save);
}

}  // namespace
}  // namespace ember::models::makemore

int main(int argc, char** argv) {
  const int code = ember::RunMain(
      argc, argv, "train", "trains makemore's MLP on names; see models/makemore/train.cc's header",
      &ember::models::makemore::Run);
  return ember::models::ExitCodeAfterSignal(code);
}
