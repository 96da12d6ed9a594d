#ifndef EMBER_KERNELS_CPU_THREAD_POOL_H_
#define EMBER_KERNELS_CPU_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::kernels::cpu {

// A fixed set of worker threads that split loops with the calling thread.
//
// ParallelFor(n, grain, fn) cuts [0, n) into at most num_threads() contiguous chunks of
// at least `grain` items, equal but for the last, and calls fn(begin, end) once per
// chunk; the calling thread runs one chunk itself and returns when all are done. The
// cut depends only on n, grain and num_threads(), never on timing, so a kernel that
// reduces within a chunk is deterministic for a given thread count. A ParallelFor
// called from inside a chunk runs serially (no nested parallelism, no deadlock).
// One ParallelFor runs at a time per pool; concurrent callers take turns. fn must
// not throw (kernels check their arguments before they split work).
class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void WorkerLoop(int worker);
  void RunChunk(int64_t chunk);

  std::vector<std::thread> workers_;
  std::mutex run_mutex_;  // serialises ParallelFor calls
  std::mutex mutex_;
  std::condition_variable work_ready_, work_done_;
  // The current loop, guarded by mutex_.
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunk_size_ = 0, num_chunks_ = 0;
  // Bumped per loop so that workers see each one once; written under mutex_, also
  // read without it by spinning threads (as is pending_).
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};  // workers still running their chunk
  bool stop_ = false;
};

// The process's pool. Its size is the environment variable EMBER_NUM_THREADS when set
// (a positive integer), otherwise the number of cores.
ThreadPool& DefaultThreadPool();
int NumThreads();
// Replaces the process's pool by one of `num_threads` threads (binaries call this
// from a --threads flag). Not to be called while kernels run.
void SetNumThreads(int num_threads);

// DefaultThreadPool().ParallelFor(...).
void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace ember::kernels::cpu

#endif  // EMBER_KERNELS_CPU_THREAD_POOL_H_
