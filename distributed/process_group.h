#ifndef EMBER_DISTRIBUTED_PROCESS_GROUP_H_
#define EMBER_DISTRIBUTED_PROCESS_GROUP_H_

// The processes of one training run and the collectives between them, as
// torch.distributed's process group: rank, world size, all-reduce, reduce-scatter,
// all-gather, broadcast and barrier. The transport is an existing engine, never ember's
// own: OpenMPI for CPU tensors and NCCL for CUDA tensors (its communicator made on the
// first CUDA collective, with NCCL's unique id broadcast through MPI, as llm.c does).
//
//   mpirun -np 4 bazel-bin/models/gpt2/train ...   # World(): 4 ranks over MPI
//   bazel-bin/models/gpt2/train ...                # World(): one process, no MPI
//
// Which group a process gets is chosen once, by World()'s first call: MPI when mpirun
// started the process (and the build has MPI: third_party's HAS_MPI), otherwise a group
// of one process whose collectives leave their tensors as they are (a sum over one rank).
// mpirun under a build without MPI is an error that says so.
//
// Every collective is called by every rank in the same order, with tensors of the same
// shape and dtype on each (MPI and NCCL assume it; nothing checks it). Tensors are
// contiguous, and all of one call's tensors are on one device. CPU collectives run in
// order on one communication thread, so a caller can start one (the Async forms), keep
// computing, and Wait() for it later; CUDA collectives are queued on the device's stream
// as its kernels are.
//
// A rank that dies makes mpirun end every other rank. A rank that waits longer than
// Timeout() for a collective (another rank hangs, or is stuck before it) prints what it
// was waiting for and exits with status 1, so no run hangs for longer than that.

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/time/time.h"
#include "tensor/tensor.h"

namespace ember::distributed {

enum class ReduceOp { kSum, kMean };

// A collective in flight. Wait() blocks until it is done and then completes it on the
// calling thread (a mean's division), or throws its error.
class Work {
 public:
  // What the communication thread runs, and what Wait() runs after it.
  explicit Work(std::string what, std::function<void()> finish = nullptr)
      : what_(std::move(what)), finish_(std::move(finish)) {}
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  void Wait();
  bool done() const;
  // How long the transport took once it began (the communication thread's time; 0 for a
  // collective on CUDA tensors, which the device runs later in its stream).
  double seconds() const;

  // For process groups: marks it done, with an error message or "".
  void Complete(std::string error, double seconds = 0);
  const std::string& what() const { return what_; }

 private:
  std::string what_;  // "all-reduce of 4194304 f32", for the timeout's message
  std::function<void()> finish_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false, finished_ = false;
  std::string error_;
  double seconds_ = 0;
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // "mpi" or "single".
  virtual std::string backend() const = 0;

  // t = sum (or mean) over ranks of t, in place.
  std::shared_ptr<Work> AllReduceAsync(const Tensor& t, ReduceOp op = ReduceOp::kSum);
  // input [size() * n] (flattened) -> output [n]: rank r's output is the sum (or mean)
  // over ranks of their input[r n, (r + 1) n).
  std::shared_ptr<Work> ReduceScatterAsync(const Tensor& input, const Tensor& output,
                                           ReduceOp op = ReduceOp::kSum);
  // input [n] -> output [size() * n]: output[r n, (r + 1) n) is rank r's input. The
  // input may be this rank's own slice of the output (in place, no copy).
  std::shared_ptr<Work> AllGatherAsync(const Tensor& input, const Tensor& output);
  // t = root's t, in place.
  std::shared_ptr<Work> BroadcastAsync(const Tensor& t, int root = 0);

  void AllReduce(const Tensor& t, ReduceOp op = ReduceOp::kSum) { AllReduceAsync(t, op)->Wait(); }
  void ReduceScatter(const Tensor& input, const Tensor& output, ReduceOp op = ReduceOp::kSum) {
    ReduceScatterAsync(input, output, op)->Wait();
  }
  void AllGather(const Tensor& input, const Tensor& output) {
    AllGatherAsync(input, output)->Wait();
  }
  void Broadcast(const Tensor& t, int root = 0) { BroadcastAsync(t, root)->Wait(); }
  // Returns once every rank has called it.
  virtual void Barrier() = 0;
  // The ranks of this group that pass the same `color`, as a group of their own, ranked
  // by `key` (ties by rank here), as MPI_Comm_split: a mesh's axes (mesh.h). Every rank
  // of this group calls it, in its place among the collectives. The new group shares
  // this one's communication thread and lives until the process ends.
  virtual std::unique_ptr<ProcessGroup> Split(int color, int key) = 0;

  // The sum (or mean) over ranks of one number (a loss, a squared norm), in f64.
  double AllReduce(double value, ReduceOp op = ReduceOp::kSum);

 protected:
  enum class Collective { kAllReduce, kReduceScatter, kAllGather, kBroadcast };
  ProcessGroup(int rank, int size) : rank_(rank), size_(size) {}
  // The transport, given checked arguments (contiguous, one device; for reduce-scatter
  // and all-gather the sizes above; input and output the same tensor for all-reduce
  // and broadcast). It completes `work` once output holds the sum (a mean's division is
  // work's finish step).
  virtual void Run(const std::shared_ptr<Work>& work, Collective collective, const Tensor& input,
                   const Tensor& output, int root) = 0;

 private:
  std::shared_ptr<Work> Start(Collective collective, const Tensor& input, const Tensor& output,
                              ReduceOp op, int root);
  int rank_, size_;
};

// The process's group (see the top of this file), made on the first call.
ProcessGroup& World();

// This process's index among the ranks on its machine (OMPI_COMM_WORLD_LOCAL_RANK; 0
// without mpirun): which GPU a rank takes.
int LocalRank();

// How long a collective may be waited for (default 10 minutes, as PyTorch's); binaries
// set it from --dist_timeout.
absl::Duration Timeout();
void SetTimeout(absl::Duration timeout);

}  // namespace ember::distributed

#endif  // EMBER_DISTRIBUTED_PROCESS_GROUP_H_
