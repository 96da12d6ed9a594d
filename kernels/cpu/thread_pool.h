#ifndef EMBER_KERNELS_CPU_THREAD_POOL_H_
#define EMBER_KERNELS_CPU_THREAD_POOL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::kernels::cpu {

// A fixed set of worker threads that split loops with the calling thread (started by
// the first loop that splits).
//
// ParallelFor(n, grain, fn) cuts [0, n) into at most num_threads() contiguous chunks of
// at least `grain` items, equal but for the last, and calls fn(begin, end) once per
// chunk. The cut depends only on n, grain and num_threads(), never on timing, so a
// kernel that reduces within a chunk is deterministic for a given thread count. A loop
// whose results do not depend on the cut (each item computed whole by the call that
// holds it) may ask for chunks_per_thread > 1: up to that many chunks a thread, so that
// a thread that gets less of the memory or of its core (a busy machine) claims fewer. Which
// thread runs a chunk is not fixed: the caller and the woken workers claim chunks one
// at a time, and the caller keeps claiming until none is left, so a worker that the
// scheduler has not run yet (another process holds its core) never holds the caller
// up; the caller waits only for chunks a worker has started. Waiting threads spin
// briefly, then yield their core, then sleep. A worker can still lose its core in the
// middle of a chunk (another process wants it) and hold the caller up for the
// scheduler's time slice, milliseconds, against microseconds of work: when the caller
// has waited for a worker twice as long as its own share took (plus kStallSlack), and
// such a stall came within the kStallWindow loops before too (a busy core stalls loop
// after loop; a quiet VM's rare hiccup, its vCPU held by the host now and then, is let
// pass), the pool runs every loop on the caller for a while (50 ms, doubling up to 1 s
// while stalls recur), with the same chunks, then tries the workers again. So do kAloneLoops loops
// in a row whose every chunk the caller ran itself: loops too short for a sleeping
// worker to wake in time, which gain nothing from the pool and pay for the wake-ups.
// Every chunk runs in the caller's floating-point mode (rounding, subnormals flushed or
// not: internal/fp_mode.h), whichever thread runs it.
// A ParallelFor called from inside a chunk runs serially (no nested parallelism, no
// deadlock). One ParallelFor runs at a time per pool; concurrent callers take turns.
// fn must not throw (kernels check their arguments before they split work).
class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  // The threads a loop that starts now would run on: 1 while loops go to the caller
  // alone (the stretches above), else num_threads(). For a kernel whose plan (how it
  // packs and splits its work), never its results, depends on how many threads share
  // the work: run on the caller alone, a plan made for two threads can do more work
  // than one made for one (a GEMM's operands packed per chunk, or not packed at all).
  int threads_now() const {
    return Clock::now() < serial_until_.load(std::memory_order_relaxed) ? 1 : num_threads_;
  }

  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                   int64_t chunks_per_thread = 1);

 private:
  struct Loop {
    const std::function<void(int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0, chunk_size = 0, num_chunks = 0;
    uint32_t fp_mode = 0;  // the caller's floating-point mode (internal/fp_mode.h)
  };

  using Clock = std::chrono::steady_clock;
  static constexpr Clock::duration kStallSlack = std::chrono::microseconds(200);
  static constexpr Clock::duration kMinSerialPeriod = std::chrono::milliseconds(50);
  static constexpr Clock::duration kMaxSerialPeriod = std::chrono::seconds(1);
  static constexpr int kAloneLoops = 16;
  static constexpr int64_t kStallWindow = 64;

  void WorkerLoop();
  // Claims chunks of loop `generation` and runs them until none is left; returns how
  // many it ran.
  int64_t RunChunks(uint32_t generation, const Loop& loop);
  // Sends the loops of the next serial_period_ to the caller alone, the period doubled
  // when the last stretch began within kMaxSerialPeriod (workers that stay unhelpful),
  // else kMinSerialPeriod again.
  void GoSerial(Clock::time_point now);

  const int num_threads_;
  // Started by the first loop that splits (under run_mutex_), not with the pool: a
  // process whose loops all stay on the caller stays single-threaded, and glibc's
  // malloc and free then skip their locks. makemore's MLP, whose every op is below the
  // grain, ran 2-4% slower at two threads than at one while an idle worker merely
  // existed (2-vCPU Xeon, three alternating rounds).
  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // serialises ParallelFor calls
  std::mutex mutex_;
  std::condition_variable work_ready_, work_done_;
  Loop loop_;  // the current loop, guarded by mutex_
  // Bumped per loop (under mutex_, read without it by spinning workers).
  std::atomic<uint32_t> generation_{0};
  // The loop's generation (high 32 bits) and its next unclaimed chunk (low 32 bits),
  // claimed by compare-and-swap: a worker that wakes late can never claim a chunk of a
  // later loop.
  std::atomic<uint64_t> claim_{0};
  std::atomic<int64_t> done_{0};  // chunks of the current loop finished
  // Loops before serial_until_ run on the caller (written under run_mutex_, read by
  // threads_now() without it); serial_period_ is the last stretch's length, last_stall_
  // when it began (guarded by run_mutex_).
  std::atomic<Clock::time_point> serial_until_{Clock::time_point()};
  Clock::time_point last_stall_;
  Clock::duration serial_period_ = kMinSerialPeriod;
  int alone_loops_ = 0;  // loops in a row whose every chunk the caller ran (run_mutex_)
  // Loops that split so far, and the count at the last stall (run_mutex_).
  int64_t split_loops_ = 0, last_stall_loop_ = -kStallWindow - 1;
  bool stop_ = false;
};

// The process's pool. Its size is the environment variable EMBER_NUM_THREADS when set
// (a positive integer), otherwise the CPUs the process can use (base/cpus.h: its
// affinity mask, capped by its cgroup's CPU quota).
ThreadPool& DefaultThreadPool();
int NumThreads();
// DefaultThreadPool().threads_now().
int ThreadsNow();
// Replaces the process's pool by one of `num_threads` threads (binaries call this
// from a --threads flag). Not to be called while kernels run.
void SetNumThreads(int num_threads);

// DefaultThreadPool().ParallelFor(...).
void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                 int64_t chunks_per_thread = 1);

}  // namespace ember::kernels::cpu

#endif  // EMBER_KERNELS_CPU_THREAD_POOL_H_
