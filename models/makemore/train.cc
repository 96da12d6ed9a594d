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
//
// Several processes (`mpirun -np N`): every rank draws the global minibatch of N x
// --batch_size examples and keeps its rows, the gradients are averaged, and rank 0
// alone prints and writes; with --fsdp the ranks also split the parameters (each layer
// an FSDP unit, distributed/sharded_model.h), and rank 0 samples from the whole model.

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
#include "distributed/process_group.h"
#include "distributed/sharded_model.h"
#include "models/common/checkpoints.h"
#include "models/common/names.h"
#include "models/common/precision.h"
#include "models/common/run_log.h"
#include "models/common/sharding.h"
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
ABSL_FLAG(std::string, mesh, "", ember::models::kMeshFlagHelp);
ABSL_FLAG(bool, fsdp, false, ember::models::kFsdpFlagHelp);

namespace ember::models::makemore {
namespace {

namespace ag = ::ember::autograd;

constexpr char kCheckpointFormat[] = "ember-makemore";

// The model's mean loss on a whole split (collective: every rank computes all of it).
double SplitLoss(distributed::ShardedModel& sharded, const data::CharExamples& split, DType dtype) {
  ag::NoGradGuard no_grad;
  const ag::AutocastGuard autocast(dtype);
  const Device device = sharded.options().device;
  sharded.BeginForward();
  return nn::CrossEntropyLoss(sharded.model()(split.x.To(device)), split.y.To(device))
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
                                distributed::ShardedModel& model, Generator& gen) {
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

// After the last step: the splits' losses, the final checkpoint (by `save`), and on
// rank 0 the sampled names and --metrics_out's JSON.
absl::Status Finish(distributed::ShardedModel& sharded, const NameSplits& names, DType dtype,
                    int block, const Progress& at, int64_t steps, Generator& gen,
                    const std::string& out_dir,
                    const std::function<absl::Status(const std::string&, int64_t)>& save) {
  const double train_loss = SplitLoss(sharded, names.train.examples, dtype),
               val_loss = SplitLoss(sharded, names.val.examples, dtype),
               test_loss = SplitLoss(sharded, names.test.examples, dtype);
  RETURN_IF_ERROR(save(out_dir + "/mlp.safetensors", at.step));  // collective
  // Split parameters: rank 0 samples from the whole model, gathered (collective).
  nn::Module* model = &sharded.model();
  std::unique_ptr<Mlp> whole;
  if (sharded.split()) {
    Generator unused(0);
    whole = std::make_unique<Mlp>(static_cast<Mlp&>(sharded.model()).config(), unused);
    RETURN_IF_ERROR(whole->LoadStateDict(sharded.StateDict()));
    model = whole.get();
  }
  if (distributed::World().rank() != 0) return absl::OkStatus();
  std::printf("loss (nats per character): train %.4f, val %.4f, test %.4f (%s of training)\n",
              train_loss, val_loss, test_loss, FormatDuration(at.seconds).c_str());
  model->To(sharded.options().device);
  model->Eval();
  const std::vector<std::string> samples = PrintSampledNames(
      absl::GetFlag(FLAGS_samples),
      [&](const Tensor& x) { return (*model)(x.To(sharded.options().device)); }, block, names.vocab,
      gen);
  if (const std::string path = absl::GetFlag(FLAGS_metrics_out); !path.empty()) {
    return WriteMetricsJson(path, {{"train_loss", train_loss},
                                   {"val_loss", val_loss},
                                   {"test_loss", test_loss},
                                   {"samples", samples},
                                   {"train_seconds", at.seconds},
                                   {"steps", steps},
                                   {"parameters", model->NumParameters()}});
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
  distributed::ProcessGroup& world = distributed::World();
  const bool lead = world.rank() == 0;  // the rank that prints and writes
  const int ranks = world.size(), rank = world.rank();
  ASSIGN_OR_RETURN(const std::unique_ptr<distributed::ShardedModel> sharded,
                   ShardLayers(std::make_shared<Mlp>(config, gen), absl::GetFlag(FLAGS_mesh),
                               absl::GetFlag(FLAGS_fsdp), device, gen));
  const nn::Module& model = sharded->model();
  const double lr = absl::GetFlag(FLAGS_lr);
  auto sgd = optim::Sgd({{sharded->parameters(), lr, 0}});
  const std::string out_dir = PathOrWorkspace(absl::GetFlag(FLAGS_out_dir), "runs/makemore");
  // What a resumed run must share with the run that wrote its checkpoint (and its ranks:
  // the minibatch is theirs together).
  std::map<std::string, std::string> run_flags = {
      {"block_size", absl::StrCat(config.block_size)},
      {"embedding", absl::StrCat(config.embedding)},
      {"hidden", absl::StrCat(config.hidden)},
      {"steps", absl::StrCat(steps)},
      {"batch_size", absl::StrCat(batch_size)},
      {"lr", absl::StrCat(lr)},
      {"seed", absl::StrCat(absl::GetFlag(FLAGS_seed))}};
  if (ranks > 1) run_flags["ranks"] = absl::StrCat(ranks);
  Progress at;
  std::string resume = absl::GetFlag(FLAGS_resume);
  if (resume == "latest") {
    ASSIGN_OR_RETURN(resume, LatestCheckpoint(out_dir, "mlp.safetensors"));
  }
  if (!resume.empty()) {
    ASSIGN_OR_RETURN(at, Resume(resume, run_flags, steps, *sharded, gen));
  }
  int64_t& step = at.step;  // steps done
  double &seconds = at.seconds, &batch_loss = at.batch_loss;
  const int64_t first_step = step;
  std::ofstream csv;
  if (lead) {
    std::fprintf(
        stderr,
        "train: %s on %s%s, %lld parameters; %lld training examples; %lld steps of %s%lld%s\n",
        model.ToString().c_str(),
        ranks > 1 ? absl::StrCat(ranks, sharded->fsdp() ? " ranks (FSDP) x " : " ranks x ").c_str()
                  : "",
        device.ToString().c_str(), static_cast<long long>(model.NumParameters()),
        static_cast<long long>(train.y.size(0)), static_cast<long long>(steps),
        ranks > 1 ? absl::StrCat(ranks, " x ").c_str() : "", static_cast<long long>(batch_size),
        step > 0 ? absl::StrCat("; resuming at step ", step).c_str() : "");
    RETURN_IF_ERROR(CreateDirectories(out_dir));
    if (step > 0) RETURN_IF_ERROR(DropRowsAfter(out_dir + "/metrics.csv", step));
    csv.open(out_dir + "/metrics.csv", step > 0 ? std::ios::app : std::ios::trunc);
    if (step == 0) csv << "step,lr,batch_loss,train_loss,val_loss\n";
  }

  // The run so far, for a checkpoint that resumes it (collective: rank 0 writes).
  auto save = [&](const std::string& path, int64_t done) {
    TrainingState state{sharded->StateDict(), {}, run_flags};
    if (!lead) return absl::OkStatus();
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
  // Every rank draws the global minibatch and keeps its rows.
  std::vector<int64_t> index(static_cast<size_t>(batch_size * ranks));
  CatchStopSignals();
  auto start = std::chrono::steady_clock::now();
  for (; step < steps; ++step) {
    for (int64_t& i : index) i = static_cast<int64_t>(gen.NextBelow(static_cast<uint64_t>(n)));
    const data::Batch batch = rows(index);
    sharded->ZeroGrad();
    Tensor loss;
    {
      const ag::AutocastGuard autocast(dtype);
      sharded->BeginForward();
      loss = nn::CrossEntropyLoss(
          sharded->model()(batch.x.Narrow(0, rank * batch_size, batch_size).To(device)),
          batch.y.Narrow(0, rank * batch_size, batch_size).To(device));
    }
    sharded->BeginBackward(/*last_micro_batch=*/true);
    ag::Backward(loss);
    sharded->EndBackward();
    sharded->FinishGradients();
    sgd->param_groups()[0].lr = StepDecayLr(lr, step, steps);
    sgd->Step();
    sharded->ParametersUpdated();
    batch_loss = world.AllReduce(loss.item<double>(), distributed::ReduceOp::kMean);
    const int64_t done = step + 1;
    const bool last = done == steps, report = done % val_every == 0 || last;
    const auto now = std::chrono::steady_clock::now();
    seconds += std::chrono::duration<double>(now - start).count();
    start = now;
    if (lead && (done % 500 == 0 || report)) {
      ShowProgress("step", done, steps, first_step, absl::StrFormat("loss %.4f", batch_loss),
                   (done - first_step) / seconds, "step", seconds);
    }
    if (report) {
      const double train_loss = SplitLoss(*sharded, train, dtype),
                   val_loss = SplitLoss(*sharded, val, dtype);
      if (lead) {
        csv << done << ',' << sgd->param_groups()[0].lr << ',' << batch_loss << ',' << train_loss
            << ',' << val_loss << '\n';
        csv.flush();
        EndProgress();
        std::fprintf(stderr, "step %lld: train loss %.4f, val loss %.4f\n",
                     static_cast<long long>(done), train_loss, val_loss);
      }
      start = std::chrono::steady_clock::now();  // the evaluation is not training time
    }
    // Every rank stops at the same step, whichever of them got the signal.
    bool stop = StopSignal() != 0;
    if (ranks > 1) stop = world.AllReduce(stop ? 1.0 : 0.0) > 0;
    if ((stop || (checkpoint_every > 0 && done % checkpoint_every == 0)) && !last) {
      const std::string path = StepCheckpointPath(out_dir, done);
      RETURN_IF_ERROR(save(path, done));
      if (lead) PruneStepCheckpoints(out_dir, absl::GetFlag(FLAGS_keep_checkpoints));
      if (stop) {
        if (lead) ReportStop(done, path);
        return absl::OkStatus();  // main exits with 128 + the signal
      }
    }
  }
  return Finish(*sharded, *names, dtype, block, at, steps, gen, out_dir, save);
}

}  // namespace
}  // namespace ember::models::makemore

int main(int argc, char** argv) {
  const int code = ember::RunMain(
      argc, argv, "train", "trains makemore's MLP on names; see models/makemore/train.cc's header",
      &ember::models::makemore::Run);
  return ember::models::ExitCodeAfterSignal(code);
}
