#include "distributed/process_group.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "distributed/internal/transport.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"

namespace ember::distributed {
namespace {

std::atomic<int64_t> timeout_ms{10 * 60 * 1000};

const char* Name(int collective) {
  static const char* const kNames[] = {"all-reduce", "reduce-scatter", "all-gather", "broadcast"};
  return kNames[collective];
}

// A world of one process: a sum over one rank is the tensor itself.
class SingleProcessGroup final : public ProcessGroup {
 public:
  SingleProcessGroup() : ProcessGroup(0, 1) {}
  std::string backend() const override { return "single"; }
  void Barrier() override {}
  std::unique_ptr<ProcessGroup> Split(int, int) override {
    return std::make_unique<SingleProcessGroup>();
  }

 private:
  void Run(const std::shared_ptr<Work>& work, Collective collective, const Tensor& input,
           const Tensor& output, int root) override {
    if ((collective == Collective::kReduceScatter || collective == Collective::kAllGather) &&
        input.raw_data() != output.raw_data()) {
      output.View({output.numel()}).CopyFrom(input.View({input.numel()}));
    }
    work->Complete("");
  }
};

}  // namespace

void Work::Wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto limit = std::chrono::milliseconds(timeout_ms.load());
  if (!cv_.wait_for(lock, limit, [&] { return done_; })) {
    // The other ranks are gone or stuck, and this one cannot know which: leave, so that
    // mpirun ends the run rather than every rank waiting for ever.
    std::fprintf(stderr,
                 "\n%s did not finish within %s: another rank has died or is stuck; exiting "
                 "(--dist_timeout sets this limit)\n",
                 what_.c_str(), absl::FormatDuration(Timeout()).c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
  if (!error_.empty()) EMBER_THROW(what_, ": ", error_);
  if (finished_) return;
  finished_ = true;
  lock.unlock();
  if (finish_) finish_();
}

bool Work::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

double Work::seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return seconds_;
}

void Work::Complete(std::string error, double seconds) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    error_ = std::move(error);
    seconds_ = seconds;
  }
  cv_.notify_all();
}

std::shared_ptr<Work> ProcessGroup::AllReduceAsync(const Tensor& t, ReduceOp op) {
  return Start(Collective::kAllReduce, t, t, op, 0);
}

std::shared_ptr<Work> ProcessGroup::ReduceScatterAsync(const Tensor& input, const Tensor& output,
                                                       ReduceOp op) {
  EMBER_CHECK(input.defined() && output.defined() && input.numel() == output.numel() * size_,
              "reduce-scatter: the input has ", input.defined() ? input.numel() : 0,
              " elements, which must be the world size ", size_, " times the output's ",
              output.defined() ? output.numel() : 0);
  return Start(Collective::kReduceScatter, input, output, op, 0);
}

std::shared_ptr<Work> ProcessGroup::AllGatherAsync(const Tensor& input, const Tensor& output) {
  EMBER_CHECK(input.defined() && output.defined() && output.numel() == input.numel() * size_,
              "all-gather: the output has ", output.defined() ? output.numel() : 0,
              " elements, which must be the world size ", size_, " times the input's ",
              input.defined() ? input.numel() : 0);
  return Start(Collective::kAllGather, input, output, ReduceOp::kSum, 0);
}

std::shared_ptr<Work> ProcessGroup::BroadcastAsync(const Tensor& t, int root) {
  EMBER_CHECK(root >= 0 && root < size_, "broadcast: root ", root, " is not a rank of a world of ",
              size_);
  return Start(Collective::kBroadcast, t, t, ReduceOp::kSum, root);
}

double ProcessGroup::AllReduce(double value, ReduceOp op) {
  const Tensor t = Full({1}, value, DType::kF64);
  AllReduce(t, op);
  return t.item<double>();
}

std::shared_ptr<Work> ProcessGroup::Start(Collective collective, const Tensor& input,
                                          const Tensor& output, ReduceOp op, int root) {
  const char* name = Name(static_cast<int>(collective));
  EMBER_CHECK(input.defined() && output.defined(), name, ": undefined tensor");
  EMBER_CHECK(input.is_contiguous() && output.is_contiguous(), name,
              ": tensors must be contiguous");
  EMBER_CHECK(input.dtype() == output.dtype(), name, ": the input is ", DTypeName(input.dtype()),
              ", the output ", DTypeName(output.dtype()));
  EMBER_CHECK(input.device() == output.device(), name, ": the input is on ",
              input.device().ToString(), ", the output on ", output.device().ToString());
  EMBER_CHECK(op != ReduceOp::kMean || IsFloatingPoint(input.dtype()), name,
              ": a mean needs a floating dtype, not ", DTypeName(input.dtype()));
  std::function<void()> finish;
  if (op == ReduceOp::kMean && size_ > 1) {
    finish = [output, scale = 1.0 / size_] { ops::MulInPlace(output, scale); };
  }
  auto work = std::make_shared<Work>(
      absl::StrCat("rank ", rank_, ": ", name, " of ", input.numel(), " ", DTypeName(input.dtype()),
                   " on ", input.device().ToString()),
      std::move(finish));
  Run(work, collective, input, output, root);
  return work;
}

ProcessGroup& World() {
  static ProcessGroup* const world = [] {
    std::unique_ptr<ProcessGroup> group;
    if (internal::LauncherWorldSize() > 0) group = internal::NewMpiWorld();
    if (group == nullptr) group = std::make_unique<SingleProcessGroup>();
    return group.release();  // lives until exit, when MPI is finalized (mpi.cc)
  }();
  return *world;
}

absl::Duration Timeout() { return absl::Milliseconds(timeout_ms.load()); }

void SetTimeout(absl::Duration timeout) {
  EMBER_CHECK(timeout > absl::ZeroDuration(), "distributed: the timeout must be positive, not ",
              absl::FormatDuration(timeout));
  timeout_ms = absl::ToInt64Milliseconds(timeout);
}

int LocalRank() {
  int rank = 0;
  const char* env = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  return env != nullptr && absl::SimpleAtoi(env, &rank) && rank >= 0 ? rank : 0;
}

namespace internal {

int LauncherWorldSize() {
  int size = 0;
  const char* env = std::getenv("OMPI_COMM_WORLD_SIZE");
  return env != nullptr && absl::SimpleAtoi(env, &size) && size > 0 ? size : 0;
}

}  // namespace internal
}  // namespace ember::distributed
