// The process group over OpenMPI (built when third_party's HAS_MPI is true).
//
// As PyTorch's MPI backend: MPI is initialised with MPI_THREAD_SERIALIZED and every MPI
// call runs on one communication thread, in the order the collectives were started, so
// that the caller can compute while a collective moves data. CUDA tensors go to NCCL.

#include <mpi.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/cpus.h"
#include "base/error.h"
#include "distributed/internal/transport.h"
#include "kernels/cpu/thread_pool.h"

namespace ember::distributed::internal {
namespace {

void Check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, message, &length);
  EMBER_THROW(call, " failed: ", std::string(message, length));
}

// The MPI type of a reduction over `dtype` (the sums ember needs: f32, f64, i32, i64).
MPI_Datatype ReductionType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return MPI_FLOAT;
    case DType::kF64:
      return MPI_DOUBLE;
    case DType::kI32:
      return MPI_INT32_T;
    case DType::kI64:
      return MPI_INT64_T;
    default:
      EMBER_THROW("MPI reductions take f32, f64, i32 or i64 tensors, not ", DTypeName(dtype));
  }
}

int CountOf(int64_t n, const char* what) {
  EMBER_CHECK(n <= INT_MAX, what, ": ", n, " elements per rank is more than MPI's count of ",
              INT_MAX);
  return static_cast<int>(n);
}

// The one thread that makes every MPI call (MPI_THREAD_SERIALIZED), for the world and
// every group split from it, in the order the calls were started.
class MpiThread {
 public:
  MpiThread() : thread_([this] { Loop(); }) {}

  void Enqueue(const std::shared_ptr<Work>& work, std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace_back(work, std::move(fn));
    }
    ready_.notify_one();
  }

  // Lets the queue drain, then stops the thread (before MPI_Finalize).
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }

 private:
  void Loop() {
    while (true) {
      std::pair<std::shared_ptr<Work>, std::function<void()>> item;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      std::string error;
      const auto start = std::chrono::steady_clock::now();
      try {
        item.second();
      } catch (const std::exception& e) {
        error = e.what();
      }
      item.first->Complete(
          std::move(error),
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::pair<std::shared_ptr<Work>, std::function<void()>>> queue_;
  bool stop_ = false;
  std::thread thread_;  // last: it starts once the rest is built
};

// A group over one MPI communicator: the world's (MPI_COMM_WORLD) or one split from it.
class MpiGroup final : public ProcessGroup {
 public:
  MpiGroup(int rank, int size, MPI_Comm comm, std::shared_ptr<MpiThread> thread)
      : ProcessGroup(rank, size), comm_(comm), thread_(std::move(thread)) {}

  std::string backend() const override { return "mpi"; }

  void Barrier() override {
    auto work = std::make_shared<Work>(absl::StrCat("rank ", rank(), ": barrier"));
    Enqueue(work, [comm = comm_] { Check(MPI_Barrier(comm), "MPI_Barrier"); });
    work->Wait();
  }

  std::unique_ptr<ProcessGroup> Split(int color, int key) override {
    MPI_Comm sub = MPI_COMM_NULL;
    int sub_rank = 0, sub_size = 0;
    auto work =
        std::make_shared<Work>(absl::StrCat("rank ", rank(), ": split (color ", color, ")"));
    Enqueue(work, [&, comm = comm_] {
      Check(MPI_Comm_split(comm, color, key, &sub), "MPI_Comm_split");
      Check(MPI_Comm_rank(sub, &sub_rank), "MPI_Comm_rank");
      Check(MPI_Comm_size(sub, &sub_size), "MPI_Comm_size");
    });
    work->Wait();
    return std::make_unique<MpiGroup>(sub_rank, sub_size, sub, thread_);
  }

  MpiThread& thread() { return *thread_; }

 private:
  void Run(const std::shared_ptr<Work>& work, Collective collective, const Tensor& input,
           const Tensor& output, int root) override {
    if (!input.device().is_cpu()) {
      RunOnDevice(collective, input, output, root);
      work->Complete("");
      return;
    }
    // The closures hold the tensors, so their memory lives until the data has moved.
    switch (collective) {
      case Collective::kAllReduce: {
        const MPI_Datatype type = ReductionType(input.dtype());
        const int64_t n = input.numel(), item = input.itemsize();
        Enqueue(work, [=, comm = comm_] {
          char* out = static_cast<char*>(output.raw_data());
          // MPI counts are ints: a larger tensor goes in pieces.
          for (int64_t begin = 0; begin < n; begin += INT_MAX) {
            Check(MPI_Allreduce(MPI_IN_PLACE, out + begin * item,
                                static_cast<int>(std::min<int64_t>(INT_MAX, n - begin)), type,
                                MPI_SUM, comm),
                  "MPI_Allreduce");
          }
        });
        return;
      }
      case Collective::kReduceScatter: {
        const MPI_Datatype type = ReductionType(input.dtype());
        const int count = CountOf(output.numel(), "reduce-scatter");
        Enqueue(work, [=, comm = comm_] {
          Check(MPI_Reduce_scatter_block(input.raw_data(), output.raw_data(), count, type, MPI_SUM,
                                         comm),
                "MPI_Reduce_scatter_block");
        });
        return;
      }
      case Collective::kAllGather: {
        const int bytes = CountOf(input.numel() * input.itemsize(), "all-gather (bytes)");
        const bool in_place =
            input.raw_data() == static_cast<char*>(output.raw_data()) + int64_t{rank()} * bytes;
        Enqueue(work, [=, comm = comm_] {
          Check(MPI_Allgather(in_place ? MPI_IN_PLACE : input.raw_data(), bytes, MPI_BYTE,
                              output.raw_data(), bytes, MPI_BYTE, comm),
                "MPI_Allgather");
        });
        return;
      }
      case Collective::kBroadcast: {
        const int64_t bytes = input.numel() * input.itemsize();
        Enqueue(work, [=, comm = comm_] {
          char* out = static_cast<char*>(output.raw_data());
          for (int64_t begin = 0; begin < bytes; begin += INT_MAX) {
            Check(
                MPI_Bcast(out + begin, static_cast<int>(std::min<int64_t>(INT_MAX, bytes - begin)),
                          MPI_BYTE, root, comm),
                "MPI_Bcast");
          }
        });
        return;
      }
    }
  }

  void RunOnDevice(Collective collective, const Tensor& input, const Tensor& output, int root) {
    const int device = input.device().index;
    if (device_ == nullptr) {
      device_index_ = device;
      // NCCL's unique id goes from rank 0 to every rank through MPI, on the thread that
      // makes every MPI call.
      device_ = NewNcclCommunicator(rank(), size(), device, [this](void* bytes, size_t n) {
        auto work = std::make_shared<Work>(absl::StrCat("rank ", rank(), ": NCCL's unique id"));
        Enqueue(work, [=, comm = comm_] {
          Check(MPI_Bcast(bytes, static_cast<int>(n), MPI_BYTE, 0, comm), "MPI_Bcast");
        });
        work->Wait();
      });
    }
    EMBER_CHECK(device == device_index_, "this rank's NCCL communicator is on cuda:", device_index_,
                ", not cuda:", device, " (one device per rank)");
    switch (collective) {
      case Collective::kAllReduce:
        return device_->AllReduceSum(output);
      case Collective::kReduceScatter:
        return device_->ReduceScatterSum(input, output);
      case Collective::kAllGather:
        return device_->AllGather(input, output);
      case Collective::kBroadcast:
        return device_->Broadcast(output, root);
    }
  }

  void Enqueue(const std::shared_ptr<Work>& work, std::function<void()> fn) {
    thread_->Enqueue(work, std::move(fn));
  }

  MPI_Comm comm_;
  std::shared_ptr<MpiThread> thread_;
  std::unique_ptr<DeviceCommunicator> device_;
  int device_index_ = -1;
};

MpiGroup* world = nullptr;
// A communicator of the world's ranks used only by AtExit's barrier, so that it cannot
// match a collective that other ranks are waiting in.
MPI_Comm exit_comm = MPI_COMM_NULL;

// How long a failing rank waits for the others to fail too before it aborts them.
constexpr auto kExitGrace = std::chrono::seconds(5);

// At exit: a run that succeeded finalizes MPI; one that failed aborts every rank (they
// may be waiting in a collective this rank will never join). Before aborting, a failing
// rank waits up to kExitGrace at a barrier of exit_comm: an error that every rank finds
// (a mesh that is not the world, heads that do not split) is then printed by every rank
// before mpirun ends the job, not only by whichever rank aborted first. A rank stuck in a
// collective never reaches the barrier, and the failing one aborts after the grace.
void AtExit(int status, void*) {
  if (status == 0) {
    world->thread().Stop();
    MPI_Finalize();
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + kExitGrace;
  auto work = std::make_shared<Work>("exit barrier");
  // Runs on the communication thread (MPI_THREAD_SERIALIZED), if it is free in time.
  world->thread().Enqueue(work, [deadline] {
    MPI_Request request;
    if (MPI_Ibarrier(exit_comm, &request) != MPI_SUCCESS) return;
    int done = 0;
    while (!done && std::chrono::steady_clock::now() < deadline) {
      if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return;
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  while (!work->done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  MPI_Abort(MPI_COMM_WORLD, status);
}

}  // namespace

std::unique_ptr<ProcessGroup> NewMpiWorld() {
  int provided = 0;
  Check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  EMBER_CHECK(provided >= MPI_THREAD_SERIALIZED,
              "MPI: this MPI library does not allow calls from a thread other than ",
              "the main one (MPI_THREAD_SERIALIZED)");
  int rank = 0, size = 0;
  Check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  Check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  // The cores are shared among the ranks on this machine, unless EMBER_NUM_THREADS says.
  int local = 0;
  const char* env = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (std::getenv("EMBER_NUM_THREADS") == nullptr && env != nullptr &&
      absl::SimpleAtoi(env, &local) && local > 1) {
    kernels::cpu::SetNumThreads(std::max(1, AvailableCpus() / local));
  }
  auto group =
      std::make_unique<MpiGroup>(rank, size, MPI_COMM_WORLD, std::make_shared<MpiThread>());
  world = group.get();
  Check(MPI_Comm_dup(MPI_COMM_WORLD, &exit_comm), "MPI_Comm_dup");
  on_exit(&AtExit, nullptr);
  return group;
}

}  // namespace ember::distributed::internal
