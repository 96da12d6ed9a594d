#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "base/error.h"

namespace ember::kernels::cpu {
namespace {

thread_local bool in_parallel_region = false;

// A waiting thread spins this many pauses (some tens of microseconds) before it
// sleeps: kernels issue loops back to back, and waking a sleeping thread costs about
// as much as a small loop.
constexpr int kSpinPauses = 4000;

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or the spin budget runs out; says whether done() came true.
template <typename Done>
bool SpinUntil(const Done& done) {
  for (int i = 0; i < kSpinPauses; ++i) {
    if (done()) return true;
    Pause();
  }
  return done();
}

int ThreadsFromEnvironment() {
  if (const char* env = std::getenv("EMBER_NUM_THREADS")) {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && value > 0 && value <= 1024) return static_cast<int>(value);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::unique_ptr<ThreadPool>& PoolSlot() {
  static auto* slot = new std::unique_ptr<ThreadPool>(new ThreadPool(ThreadsFromEnvironment()));
  return *slot;
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  EMBER_CHECK(num_threads >= 1, "thread pool: need at least 1 thread, got ", num_threads);
  for (int w = 0; w + 1 < num_threads; ++w) workers_.emplace_back([this, w] { WorkerLoop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunChunk(int64_t chunk) {
  const int64_t begin = chunk * chunk_size_;
  const int64_t end = std::min(n_, begin + chunk_size_);
  in_parallel_region = true;
  (*fn_)(begin, end);
  in_parallel_region = false;
}

void ThreadPool::WorkerLoop(int worker) {
  uint64_t seen = 0;
  while (true) {
    SpinUntil([&] { return generation_.load(std::memory_order_acquire) != seen; });
    std::unique_lock<std::mutex> lock(mutex_);
    work_ready_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
    if (stop_) return;
    seen = generation_.load();
    // Worker w runs chunk w + 1; the caller runs chunk 0.
    const int64_t chunk = worker + 1;
    if (chunk >= num_chunks_) continue;
    lock.unlock();
    RunChunk(chunk);
    lock.lock();
    if (--pending_ == 0) work_done_.notify_one();
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = std::min<int64_t>(num_threads(), (n + grain - 1) / grain);
  if (chunks <= 1 || in_parallel_region) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    chunk_size_ = (n + chunks - 1) / chunks;
    num_chunks_ = (n + chunk_size_ - 1) / chunk_size_;
    pending_.store(static_cast<int>(num_chunks_) - 1);
    generation_.fetch_add(1, std::memory_order_release);
  }
  work_ready_.notify_all();
  RunChunk(0);
  SpinUntil([&] { return pending_.load(std::memory_order_acquire) == 0; });
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [&] { return pending_.load() == 0; });
  fn_ = nullptr;
}

ThreadPool& DefaultThreadPool() { return *PoolSlot(); }

int NumThreads() { return DefaultThreadPool().num_threads(); }

void SetNumThreads(int num_threads) {
  EMBER_CHECK(num_threads >= 1, "set_num_threads: need at least 1 thread, got ", num_threads);
  if (num_threads != NumThreads()) PoolSlot() = std::make_unique<ThreadPool>(num_threads);
}

void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  DefaultThreadPool().ParallelFor(n, grain, fn);
}

}  // namespace ember::kernels::cpu
