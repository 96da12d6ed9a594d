// Small loops on the pool, the pattern of a small model's step (many ops of tens of
// microseconds), on a quiet machine and with another thread keeping one core busy:
//   bazel run -c opt //kernels/cpu:thread_pool_benchmark
// On 2 cores with a busy core, a pool whose caller waits for a worker that the
// scheduler has not run yet is many times slower than one thread; a pool whose caller
// takes over unstarted chunks is not.

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/cpu/thread_pool.h"

namespace ember::kernels::cpu {
namespace {

// Args: pool threads, busy (1: a spinning thread competes for a core while it runs).
void BM_SmallLoops(benchmark::State& state) {
  ThreadPool pool(static_cast<int>(state.range(0)));
  std::atomic<bool> stop{false};
  std::thread busy;
  if (state.range(1)) {
    busy = std::thread([&] {
      volatile uint64_t spin = 0;
      while (!stop.load(std::memory_order_relaxed)) spin = spin + 1;
    });
  }
  constexpr int64_t kN = 1 << 15;  // floats: a loop of roughly 10 microseconds
  std::vector<float> x(kN, 1.0f);
  for (auto _ : state) {
    pool.ParallelFor(kN, 1 << 12, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) x[i] = x[i] * 0.999f + 0.001f;
    });
  }
  benchmark::DoNotOptimize(x.data());
  stop = true;
  if (busy.joinable()) busy.join();
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_SmallLoops)
    ->ArgNames({"threads", "busy"})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({1, 1})
    ->Args({2, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ember::kernels::cpu
