#include "kernels/cpu/thread_pool.h"

#include <sched.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/internal/fp_mode.h"

namespace ember::kernels::cpu {
namespace {

// The threads of this process (Linux: one entry per thread in /proc/self/task).
int ProcessThreads() {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++count;
  }
  return count;
}

// First in this file, so that no earlier test's threads are still exiting.
TEST(ThreadPoolTest, WorkersStartWithTheFirstLoopThatSplits) {
  const int before = ProcessThreads();
  ThreadPool pool(3);
  EXPECT_EQ(pool.num_threads(), 3);
  int64_t covered = 0;
  for (int i = 0; i < 10; ++i)
    pool.ParallelFor(100, 100, [&](int64_t b, int64_t e) { covered += e - b; });
  EXPECT_EQ(covered, 1000);
  EXPECT_EQ(ProcessThreads(), before) << "loops of one chunk started workers";
  std::atomic<int64_t> total{0};
  pool.ParallelFor(100, 1, [&](int64_t b, int64_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 100);
  EXPECT_EQ(ProcessThreads(), before + 2);
}

TEST(ThreadPoolTest, CoversTheRangeOnceInEqualChunks) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 2, 7, 100, 1001}) {
      for (int64_t grain : {1, 10, 1000}) {
        for (int64_t per_thread : {1, 4}) {
          std::vector<std::atomic<int>> hits(n);
          std::mutex mutex;
          std::set<std::pair<int64_t, int64_t>> chunks;
          pool.ParallelFor(
              n, grain,
              [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) hits[i]++;
                std::lock_guard<std::mutex> lock(mutex);
                chunks.insert({begin, end});
              },
              per_thread);
          for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
          if (n == 0) continue;
          // The cut: ceil(n / k) per chunk, k = min(threads per_thread, ceil(n / grain)).
          const int64_t k = std::min<int64_t>(threads * per_thread, (n + grain - 1) / grain);
          const int64_t size = (n + k - 1) / k;
          EXPECT_EQ(static_cast<int64_t>(chunks.size()), (n + size - 1) / size);
          for (const auto& [begin, end] : chunks) {
            EXPECT_EQ(begin % size, 0);
            EXPECT_EQ(end, std::min(n, begin + size));
          }
        }
      }
    }
  }
}

TEST(ThreadPoolTest, UsesSeveralThreadsAndNestsSerially) {
  ThreadPool pool(3);
  std::mutex mutex;
  std::set<std::thread::id> ids;
  std::atomic<int64_t> inner_total{0};
  std::atomic<int> started{0};
  pool.ParallelFor(3, 1, [&](int64_t, int64_t) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    }
    // Each chunk waits until all three have started: a thread runs one chunk at a
    // time, so three threads must take part.
    ++started;
    while (started.load() < 3) std::this_thread::yield();
    // A nested loop runs serially on this thread instead of waiting on the pool.
    pool.ParallelFor(10, 1, [&](int64_t b, int64_t e) {
      EXPECT_EQ(b, 0);
      EXPECT_EQ(e, 10);
      inner_total += e - b;
    });
  });
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(inner_total.load(), 30);
}

TEST(ThreadPoolTest, ManyLoopsAndConcurrentCallers) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  auto work = [&] {
    for (int i = 0; i < 500; ++i) {
      pool.ParallelFor(64, 1, [&](int64_t b, int64_t e) { total += e - b; });
    }
  };
  std::thread other(work);
  work();
  other.join();
  EXPECT_EQ(total.load(), 2 * 500 * 64);
}

// Runs ParallelFor(2, 1) on the pool; each chunk records its thread and waits (up to a
// second) until both chunks have started, so that two threads take part whenever the
// pool hands chunks to its worker; the worker's chunk then sleeps `worker_sleep`.
std::set<std::thread::id> TwoChunks(ThreadPool& pool, std::chrono::milliseconds worker_sleep) {
  const std::thread::id caller = std::this_thread::get_id();
  std::mutex mutex;
  std::set<std::thread::id> ids;
  std::atomic<int> started{0};
  pool.ParallelFor(2, 1, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(end, begin + 1);
    {
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    }
    ++started;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (started.load() < 2 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
    if (std::this_thread::get_id() != caller) std::this_thread::sleep_for(worker_sleep);
  });
  return ids;
}

TEST(ThreadPoolTest, StallsInARowSendLoopsToTheCallerForAWhile) {
  ThreadPool pool(2);
  EXPECT_EQ(pool.threads_now(), 2);
  // The worker's chunk takes 30 ms against the caller's microseconds: a worker that
  // lost its core. One such stall alone (a quiet VM's hiccup) changes nothing...
  ASSERT_EQ(TwoChunks(pool, std::chrono::milliseconds(30)).size(), 2u);
  EXPECT_EQ(TwoChunks(pool, std::chrono::milliseconds(0)).size(), 2u);
  EXPECT_EQ(pool.threads_now(), 2);
  // ...a second within kStallWindow loops does: the next loops run on the caller alone,
  // the same chunks, and kernels plan for one thread...
  TwoChunks(pool, std::chrono::milliseconds(30));
  EXPECT_EQ(pool.threads_now(), 1);
  EXPECT_EQ(TwoChunks(pool, std::chrono::milliseconds(0)), std::set{std::this_thread::get_id()});
  // ...for the first stretch's 50 ms; then the worker is back.
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(pool.threads_now(), 2);
  EXPECT_EQ(TwoChunks(pool, std::chrono::milliseconds(0)).size(), 2u);
}

TEST(ThreadPoolTest, LoopsTheCallerRunsAloneGoSerialForAWhile) {
  // The worker shares the caller's core and runs only when the caller sleeps (it is
  // SCHED_IDLE there): a worker whose core another process holds. Threads inherit
  // their creator's affinity and policy, so a helper thread with both makes the pool.
  cpu_set_t all, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &all)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  std::unique_ptr<ThreadPool> pool;
  std::thread([&] {
    const sched_param idle{};
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    ASSERT_EQ(sched_setscheduler(0, SCHED_IDLE, &idle), 0);
    pool = std::make_unique<ThreadPool>(2);
  }).join();
  ASSERT_NE(pool, nullptr);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  // Loops of no work: the caller runs both chunks before the worker gets the core.
  // Sixteen in a row send the next loops to the caller alone (64 loops: should the
  // worker get a chunk now and then beside other tests, the count starts again).
  for (int i = 0; i < 64; ++i) pool->ParallelFor(2, 1, [](int64_t, int64_t) {});
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
  // (The stretch ends as a stall's does, StallsInARowSendLoopsToTheCallerForAWhile;
  // this worker, SCHED_IDLE on one core, could not show it reliably beside other tests.)
  EXPECT_EQ(TwoChunks(*pool, std::chrono::milliseconds(0)), std::set{std::this_thread::get_id()});
}

TEST(ThreadPoolTest, EveryChunkRunsInTheCallersFpMode) {
  for (bool flushed : {true, false}) {
    // The worker starts in the other mode (a thread inherits its creator's), so it runs
    // its chunk in the loop's only if the pool hands the mode over. One loop per pool:
    // its chunks wait for each other, which a later loop sent to the caller alone (a
    // stall under load, thread_pool.h) could not do.
    std::optional<ThreadPool> pool;
    {
      std::optional<internal::FlushSubnormals> other;
      if (!flushed) other.emplace();
      pool.emplace(2);
    }
    std::optional<internal::FlushSubnormals> flush;
    if (flushed) flush.emplace();
    const uint32_t caller = internal::FpMode() & internal::kFlushSubnormals;
#if defined(__x86_64__) || defined(__i386__)
    ASSERT_EQ(caller, flushed ? internal::kFlushSubnormals : 0u);
#endif
    std::atomic<int> started{0};
    std::mutex mutex;
    std::set<std::thread::id> ids;
    std::vector<uint32_t> modes;
    pool->ParallelFor(2, 1, [&](int64_t, int64_t) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        ids.insert(std::this_thread::get_id());
        modes.push_back(internal::FpMode() & internal::kFlushSubnormals);
      }
      // Each chunk waits for the other to start: the worker runs one of them.
      ++started;
      while (started.load() < 2) std::this_thread::yield();
    });
    EXPECT_EQ(ids.size(), 2u);
    EXPECT_EQ(modes, std::vector<uint32_t>(2, caller)) << "flushed " << flushed;
  }
}

TEST(ThreadPoolTest, DefaultPoolCanBeResized) {
  const int before = NumThreads();
  SetNumThreads(3);
  EXPECT_EQ(NumThreads(), 3);
  std::atomic<int64_t> total{0};
  ParallelFor(100, 1, [&](int64_t b, int64_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 100);
  SetNumThreads(before);
  EXPECT_EQ(NumThreads(), before);
}

}  // namespace
}  // namespace ember::kernels::cpu
