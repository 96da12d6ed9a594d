#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "base/cpus.h"
#include "base/error.h"
#include "kernels/cpu/internal/fp_mode.h"

namespace ember::kernels::cpu {
namespace {

thread_local bool in_parallel_region = false;

// A waiting thread first spins this many pauses (some microseconds): kernels issue
// loops back to back, and waking a sleeping thread costs about as much as a small loop.
constexpr int kSpinPauses = 2000;
// Then it yields its core this many times before it sleeps: on a machine where
// another process keeps a core busy, a spinning thread would take the time of the
// very thread it waits for.
constexpr int kYields = 50;

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins, then yields, until done() or the budget runs out; says whether done() came
// true (if not, the caller sleeps on a condition variable).
template <typename Done>
bool SpinThenYield(const Done& done) {
  for (int i = 0; i < kSpinPauses; ++i) {
    if (done()) return true;
    Pause();
  }
  for (int i = 0; i < kYields; ++i) {
    if (done()) return true;
    std::this_thread::yield();
  }
  return done();
}

constexpr uint64_t kChunkMask = 0xffffffffu;

int ThreadsFromEnvironment() {
  if (const char* env = std::getenv("EMBER_NUM_THREADS")) {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && value > 0 && value <= 1024) return static_cast<int>(value);
  }
  return AvailableCpus();
}

std::unique_ptr<ThreadPool>& PoolSlot() {
  static auto* slot = new std::unique_ptr<ThreadPool>(new ThreadPool(ThreadsFromEnvironment()));
  return *slot;
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads) {
  EMBER_CHECK(num_threads >= 1, "thread pool: need at least 1 thread, got ", num_threads);
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int64_t ThreadPool::RunChunks(uint32_t generation, const Loop& loop) {
  int64_t ran = 0;
  uint64_t claim = claim_.load(std::memory_order_acquire);
  while ((claim >> 32) == generation &&
         static_cast<int64_t>(claim & kChunkMask) < loop.num_chunks) {
    if (!claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel)) continue;
    const int64_t begin = static_cast<int64_t>(claim & kChunkMask) * loop.chunk_size;
    in_parallel_region = true;
    (*loop.fn)(begin, std::min(loop.n, begin + loop.chunk_size));
    in_parallel_region = false;
    ++ran;
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == loop.num_chunks) {
      std::lock_guard<std::mutex> lock(mutex_);  // so that a sleeping caller cannot miss it
      work_done_.notify_all();
    }
    claim = claim_.load(std::memory_order_acquire);
  }
  return ran;
}

void ThreadPool::WorkerLoop() {
  uint32_t seen = 0;
  bool late = false;  // the last loop was over before this worker got to it
  while (true) {
    // A worker that keeps arriving late is not getting a core (another process has
    // it): it sleeps at once instead of spinning against the threads that do the work.
    if (!late) SpinThenYield([&] { return generation_.load(std::memory_order_acquire) != seen; });
    Loop loop;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
      if (stop_) return;
      seen = generation_.load();
      loop = loop_;
    }
    if (internal::FpMode() != loop.fp_mode) internal::SetFpMode(loop.fp_mode);
    late = RunChunks(seen, loop) == 0;
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn,
                             int64_t chunks_per_thread) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks =
      std::min<int64_t>(num_threads() * chunks_per_thread, (n + grain - 1) / grain);
  if (chunks <= 1 || in_parallel_region) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  Loop loop;
  loop.fn = &fn;
  loop.n = n;
  loop.chunk_size = (n + chunks - 1) / chunks;
  loop.num_chunks = (n + loop.chunk_size - 1) / loop.chunk_size;
  loop.fp_mode = internal::FpMode();
  const Clock::time_point start = Clock::now();
  if (start <
      serial_until_.load(std::memory_order_relaxed)) {  // the same chunks, all on this thread
    in_parallel_region = true;
    for (int64_t begin = 0; begin < n; begin += loop.chunk_size)
      fn(begin, std::min(n, begin + loop.chunk_size));
    in_parallel_region = false;
    return;
  }
  if (workers_.empty()) {
    for (int w = 0; w + 1 < num_threads_; ++w) workers_.emplace_back([this] { WorkerLoop(); });
  }
  uint32_t generation;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    loop_ = loop;
    done_.store(0, std::memory_order_relaxed);
    generation = generation_.load() + 1;
    claim_.store(uint64_t{generation} << 32, std::memory_order_release);
    generation_.store(generation, std::memory_order_release);
  }
  work_ready_.notify_all();
  ++split_loops_;
  // A caller that ran every chunk itself had no help: the workers were asleep and woke
  // too late for a loop this short, or had no core. Each such loop still paid for
  // waking them, and a woken worker takes its core from the caller when another process
  // holds the other one, so after kAloneLoops of them in a row loops go serial (below).
  const bool alone = RunChunks(generation, loop) == loop.num_chunks;
  alone_loops_ = alone ? alone_loops_ + 1 : 0;
  // What is left are chunks that workers have started.
  const auto finished = [&] { return done_.load(std::memory_order_acquire) == loop.num_chunks; };
  if (finished()) {
    if (alone_loops_ >= kAloneLoops) GoSerial(Clock::now());
    return;
  }
  const Clock::time_point worked = Clock::now();
  if (!SpinThenYield(finished)) {
    std::unique_lock<std::mutex> lock(mutex_);
    work_done_.wait(lock, finished);
  }
  // A worker that took over three times as long as the caller over its (equal) share,
  // and kStallSlack besides, lost its core mid-chunk (one that shares its core with
  // another process but keeps running takes about twice as long, and still helps):
  // loops go serial for a while. The stretch doubles while stalls keep coming (within
  // kMaxSerialPeriod of the last: a core that stays busy), and starts short again after
  // a stall out of the blue (a hiccup on a quiet machine).
  const Clock::time_point end = Clock::now();
  if (end - worked > 2 * (worked - start) + kStallSlack) {
    if (split_loops_ - last_stall_loop_ <= kStallWindow) GoSerial(end);
    last_stall_loop_ = split_loops_;
  }
}

void ThreadPool::GoSerial(Clock::time_point now) {
  serial_period_ = now - last_stall_ < kMaxSerialPeriod
                       ? std::min(2 * serial_period_, kMaxSerialPeriod)
                       : kMinSerialPeriod;
  serial_until_.store(now + serial_period_, std::memory_order_relaxed);
  last_stall_ = now;
  alone_loops_ = 0;
}

ThreadPool& DefaultThreadPool() { return *PoolSlot(); }

int NumThreads() { return DefaultThreadPool().num_threads(); }

int ThreadsNow() { return DefaultThreadPool().threads_now(); }

void SetNumThreads(int num_threads) {
  EMBER_CHECK(num_threads >= 1, "set_num_threads: need at least 1 thread, got ", num_threads);
  if (num_threads != NumThreads()) PoolSlot() = std::make_unique<ThreadPool>(num_threads);
}

void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn,
                 int64_t chunks_per_thread) {
  DefaultThreadPool().ParallelFor(n, grain, fn, chunks_per_thread);
}

}  // namespace ember::kernels::cpu
