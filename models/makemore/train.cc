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
#include "data/loader.h"
#include "models/common/names.h"
#include "models/common/run_log.h"
#include "models/makemore/mlp.h"
#include "nn/loss.h"
#include "nn/safetensors.h"
#include "optim/optimizer.h"
#include "tensor/cuda.h"

ABSL_FLAG(int64_t, block_size, 3, "characters of context");
ABSL_FLAG(int64_t, embedding, 10, "dimensions of each character's embedding");
ABSL_FLAG(int64_t, hidden, 200, "tanh units");
ABSL_FLAG(int64_t, steps, 200000, "SGD steps");
ABSL_FLAG(int64_t, batch_size, 32, "examples per step, drawn with replacement");
ABSL_FLAG(double, lr, 0.1, "learning rate of the first half of the steps (then a tenth of it)");
ABSL_FLAG(uint64_t, seed, 2147483647, "seed of the initialisation, the minibatches and the samples");
ABSL_FLAG(std::string, device, "cpu", "where to run: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU)");
ABSL_FLAG(int64_t, val_every, 10000, "losses on the whole train and val splits every this many steps");
ABSL_FLAG(int64_t, samples, 20, "names to sample at the end");
ABSL_FLAG(std::string, names_dir, "", "folder with female.txt and male.txt (default: downloads/names)");
ABSL_FLAG(std::string, out_dir, "", "where metrics.csv and the model go (default: runs/makemore)");
ABSL_FLAG(std::string, metrics_out, "", "write the final figures here as one JSON object");

namespace ember::models::makemore {
namespace {

namespace ag = ::ember::autograd;

double SplitLoss(Mlp& model, const data::CharExamples& split) {
  ag::NoGradGuard no_grad;
  return nn::CrossEntropyLoss(model(split.x.To(model.device())), split.y.To(model.device())).item<double>();
}

absl::Status Run() {
  ASSIGN_OR_RETURN(const Device device, cuda::DeviceFromFlag(absl::GetFlag(FLAGS_device)));
  MlpConfig config;
  config.block_size = absl::GetFlag(FLAGS_block_size);
  config.embedding = absl::GetFlag(FLAGS_embedding);
  config.hidden = absl::GetFlag(FLAGS_hidden);
  const int64_t steps = absl::GetFlag(FLAGS_steps), batch_size = absl::GetFlag(FLAGS_batch_size);
  for (const auto& [flag, value] : {std::pair<const char*, int64_t>{"block_size", config.block_size},
                                    {"embedding", config.embedding}, {"hidden", config.hidden},
                                    {"steps", steps}, {"batch_size", batch_size}}) {
    if (value < 1) return absl::InvalidArgumentError(absl::StrCat("--", flag, "=", value, ": expected at least 1"));
  }
  const std::string dir = PathOrWorkspace(absl::GetFlag(FLAGS_names_dir), data::kNamesDir);
  const int block = static_cast<int>(config.block_size);
  absl::StatusOr<NameSplits> names = LoadNameSplits(dir, block);
  if (!names.ok()) return MissingInput(names.status());
  const data::CharExamples &train = names->train.examples, &val = names->val.examples;
  const data::CharExamples &test = names->test.examples;
  config.vocab = static_cast<int64_t>(names->vocab.size());

  Generator gen(absl::GetFlag(FLAGS_seed));
  Mlp model(config, gen);
  model.To(device);
  const double lr = absl::GetFlag(FLAGS_lr);
  auto sgd = optim::Sgd({{model.Parameters(), lr, 0}});
  std::fprintf(stderr, "train: %s on %s, %lld parameters; %lld training examples; %lld steps of %lld\n",
               model.ToString().c_str(), device.ToString().c_str(), static_cast<long long>(model.NumParameters()),
               static_cast<long long>(train.y.size(0)), static_cast<long long>(steps),
               static_cast<long long>(batch_size));
  const std::string out_dir = PathOrWorkspace(absl::GetFlag(FLAGS_out_dir), "runs/makemore");
  std::filesystem::create_directories(out_dir);
  std::ofstream csv(out_dir + "/metrics.csv", std::ios::trunc);
  csv << "step,lr,batch_loss,train_loss,val_loss\n";

  const int64_t val_every = std::max<int64_t>(1, absl::GetFlag(FLAGS_val_every));
  const int64_t n = train.y.size(0);
  const data::BatchFn rows = data::RowBatches(train.x, train.y);
  std::vector<int64_t> index(static_cast<size_t>(batch_size));
  double seconds = 0, batch_loss = 0;
  auto start = std::chrono::steady_clock::now();
  for (int64_t step = 0; step < steps; ++step) {
    for (int64_t& i : index) i = static_cast<int64_t>(gen.NextBelow(static_cast<uint64_t>(n)));
    const data::Batch batch = rows(index);
    const Tensor loss = nn::CrossEntropyLoss(model(batch.x.To(device)), batch.y.To(device));
    sgd->ZeroGrad();
    ag::Backward(loss);
    sgd->param_groups()[0].lr = StepDecayLr(lr, step, steps);
    sgd->Step();
    batch_loss = loss.item<double>();
    const bool last = step + 1 == steps, report = (step + 1) % val_every == 0 || last;
    if ((step + 1) % 500 == 0 || report) {
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      start = std::chrono::steady_clock::now();
      ShowProgress("step", step + 1, steps, 0, absl::StrFormat("loss %.4f", batch_loss), (step + 1) / seconds,
                   "step", seconds);
    }
    if (report) {
      const double train_loss = SplitLoss(model, train), val_loss = SplitLoss(model, val);
      csv << step + 1 << ',' << sgd->param_groups()[0].lr << ',' << batch_loss << ',' << train_loss << ','
          << val_loss << '\n';
      EndProgress();
      std::fprintf(stderr, "step %lld: train loss %.4f, val loss %.4f\n", static_cast<long long>(step + 1),
                   train_loss, val_loss);
      start = std::chrono::steady_clock::now();  // the evaluation is not training time
    }
  }
  const double train_loss = SplitLoss(model, train), val_loss = SplitLoss(model, val),
               test_loss = SplitLoss(model, test);
  std::printf("loss (nats per character): train %.4f, val %.4f, test %.4f (%s of training)\n", train_loss,
              val_loss, test_loss, FormatDuration(seconds).c_str());
  RETURN_IF_ERROR(nn::SaveSafetensors(out_dir + "/mlp.safetensors", model.StateDict()));
  model.Eval();
  std::vector<std::string> samples;
  for (int64_t i = 0; i < absl::GetFlag(FLAGS_samples); ++i) {
    samples.push_back(SampleName([&](const Tensor& x) { return model(x.To(device)); }, block, names->vocab, gen));
    std::printf("%s\n", samples.back().c_str());
  }
  if (const std::string path = absl::GetFlag(FLAGS_metrics_out); !path.empty()) {
    return WriteMetricsJson(path, {{"train_loss", train_loss}, {"val_loss", val_loss}, {"test_loss", test_loss},
                                   {"samples", samples}, {"train_seconds", seconds}, {"steps", steps},
                                   {"parameters", model.NumParameters()}});
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::models::makemore

int main(int argc, char** argv) {
  return ember::RunMain(argc, argv, "train",
                                "trains makemore's MLP on names; see models/makemore/train.cc's header",
                                &ember::models::makemore::Run);
}
