// Fits a character bigram model of English first names and samples from it:
//
//   bazel run -c opt //models/bigram:train                          # counting (add-one smoothing)
//   bazel run -c opt //models/bigram:train -- --model=neural        # 200 steps of gradient descent
//
// The names are ./setup.sh's (downloads/names), split as models/common/names.h says
// (80% train, 10% val, 10% test). Prints the negative log-likelihood per character on
// each split and --samples sampled names; the neural model shows a progress line and
// writes each step's losses to --out_dir/metrics.csv; --metrics_out gets one JSON
// object (train_loss, val_loss, test_loss, samples, parameters).

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "autograd/autograd.h"
#include "base/atomic_file.h"
#include "base/status.h"
#include "models/bigram/bigram.h"
#include "models/common/names.h"
#include "models/common/run_log.h"
#include "optim/optimizer.h"
#include "tensor/cuda.h"

ABSL_FLAG(std::string, model, "counting",
          "counting (pair counts) or neural (a trained [V, V] weight)");
ABSL_FLAG(double, smoothing, 1, "counting: added to every pair count");
ABSL_FLAG(int64_t, steps, 200, "neural: full-batch gradient descent steps");
ABSL_FLAG(double, lr, 50, "neural: learning rate");
ABSL_FLAG(double, reg, 0.01, "neural: weight of mean(W^2) in the loss");
ABSL_FLAG(uint64_t, seed, 2147483647, "seed of the initialisation and the samples");
ABSL_FLAG(std::string, device, "cpu",
          "where to run the neural model: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU)");
ABSL_FLAG(int64_t, samples, 10, "names to sample");
ABSL_FLAG(std::string, names_dir, "",
          "folder with female.txt and male.txt (default: downloads/names)");
ABSL_FLAG(std::string, out_dir, "",
          "where metrics.csv goes (default: runs/bigram in the workspace)");
ABSL_FLAG(std::string, metrics_out, "", "write the final figures here as one JSON object");

namespace ember::models::bigram {
namespace {

namespace ag = ::ember::autograd;

absl::Status Run() {
  const std::string model = absl::GetFlag(FLAGS_model);
  ASSIGN_OR_RETURN(const Device device, cuda::DeviceFromFlag(absl::GetFlag(FLAGS_device)));
  if (model != "counting" && model != "neural") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown model \"", model, "\"; expected counting or neural"));
  }
  const std::string dir = PathOrWorkspace(absl::GetFlag(FLAGS_names_dir), data::kNamesDir);
  absl::StatusOr<NameSplits> names = LoadNameSplits(dir, 1);
  if (!names.ok()) return MissingInput(names.status());
  const data::CharExamples &train = names->train.examples, &val = names->val.examples;
  const data::CharExamples& test = names->test.examples;
  const int64_t vocab = static_cast<int64_t>(names->vocab.size());
  std::fprintf(stderr,
               "train: %s bigram; %zu/%zu/%zu names (train/val/test), %lld/%lld/%lld characters, "
               "vocabulary %lld\n",
               model.c_str(), names->train.names.size(), names->val.names.size(),
               names->test.names.size(), static_cast<long long>(train.y.size(0)),
               static_cast<long long>(val.y.size(0)), static_cast<long long>(test.y.size(0)),
               static_cast<long long>(vocab));

  const std::string out_dir = PathOrWorkspace(absl::GetFlag(FLAGS_out_dir), "runs/bigram");
  RETURN_IF_ERROR(CreateDirectories(out_dir));
  std::ofstream csv(out_dir + "/metrics.csv", std::ios::trunc);
  csv << "step,train_loss,val_loss\n";
  Generator gen(absl::GetFlag(FLAGS_seed));
  std::function<Tensor(const Tensor&)> logits;
  int64_t parameters = vocab * vocab;
  std::shared_ptr<NeuralBigram> neural;
  std::optional<CountingBigram> counting;
  if (model == "counting") {
    const double smoothing = absl::GetFlag(FLAGS_smoothing);
    if (!(smoothing >= 0))
      return absl::InvalidArgumentError(absl::StrCat("--smoothing=", smoothing, ": expected >= 0"));
    counting = CountingBigram::Fit(train, vocab, smoothing);
    logits = [&](const Tensor& x) { return counting->Logits(x); };
  } else {
    const int64_t steps = absl::GetFlag(FLAGS_steps);
    if (steps < 1)
      return absl::InvalidArgumentError(absl::StrCat("--steps=", steps, ": expected at least 1"));
    neural = std::make_shared<NeuralBigram>(vocab, gen);
    neural->To(device);
    auto sgd = optim::Sgd({{neural->Parameters(), absl::GetFlag(FLAGS_lr), 0}});
    const auto start = std::chrono::steady_clock::now();
    for (int64_t step = 0; step < steps; ++step) {
      const Tensor loss = neural->Loss(train, absl::GetFlag(FLAGS_reg));
      sgd->ZeroGrad();
      ag::Backward(loss);
      sgd->Step();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      ShowProgress("step", step + 1, steps, 0, absl::StrFormat("loss %.4f", loss.item<double>()),
                   (step + 1) / seconds, "step", seconds);
      csv << step + 1 << ',' << loss.item<double>() << ",\n";
    }
    EndProgress();
    logits = [&](const Tensor& x) { return (*neural)(x.To(device)).To(Device::Cpu()); };
  }
  const double train_loss = MeanNll(logits(train.x), train.y),
               val_loss = MeanNll(logits(val.x), val.y);
  const double test_loss = MeanNll(logits(test.x), test.y);
  csv << "final," << train_loss << ',' << val_loss << '\n';
  std::printf("loss (nats per character): train %.4f, val %.4f, test %.4f\n", train_loss, val_loss,
              test_loss);
  const std::vector<std::string> samples =
      PrintSampledNames(absl::GetFlag(FLAGS_samples), logits, 1, names->vocab, gen);
  if (const std::string path = absl::GetFlag(FLAGS_metrics_out); !path.empty()) {
    return WriteMetricsJson(path, {{"train_loss", train_loss},
                                   {"val_loss", val_loss},
                                   {"test_loss", test_loss},
                                   {"samples", samples},
                                   {"parameters", parameters}});
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::models::bigram

int main(int argc, char** argv) {
  return ember::RunMain(
      argc, argv, "train",
      "fits a character bigram model of names; see models/bigram/train.cc's header",
      &ember::models::bigram::Run);
}
