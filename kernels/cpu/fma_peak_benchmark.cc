// The machine's measured f32 FMA peak, the roof that GEMM and the GPT-2 step are
// measured against:
//   bazel run -c opt //kernels/cpu:fma_peak_benchmark
// Each thread runs independent multiply-adds on registers only (no memory traffic), in
// the widest vectors Highway picks for this CPU, as ember's kernels do (EMBER_SIMD=AVX2
// measures an AVX-512 machine's AVX2 peak). GFLOP/s counts
// 2 per lane per FMA. A core's peak is its FMA ports times their latency in flight:
// kChains independent accumulators cover 2 ports x 4-5 cycles with room to spare.
// BM_Bf16DotPeak is the bf16 roof on a CPU with AVX512-BF16: vdpbf16ps on zmm, 4 flops
// per f32 lane (two products, two adds), as the bf16 GEMM counts them.

#include <immintrin.h>

#include <cstdint>

#include "benchmark/benchmark.h"
#include "kernels/cpu/internal/gemm_bf16.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/thread_pool.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/fma_peak_benchmark.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int kChains = 12;  // independent FMA chains (AVX2 has 16 registers)

// Runs `rounds` x kChains vector FMAs; returns the flops done (a sum is returned
// through `sink` so that the compiler keeps the loop).
double FmaLoop(int64_t rounds, float* sink) {
  const hn::ScalableTag<float> d;
  using V = decltype(hn::Zero(d));
  const V mul = hn::Set(d, 0.999999f), add = hn::Set(d, 1e-7f);
  V acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = hn::Set(d, static_cast<float>(i));
  for (int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = hn::MulAdd(acc[i], mul, add);
  }
  V sum = acc[0];
  for (int i = 1; i < kChains; ++i) sum = hn::Add(sum, acc[i]);
  *sink = hn::GetLane(sum);
  return 2.0 * static_cast<double>(rounds) * kChains * static_cast<double>(hn::Lanes(d));
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {
namespace {

HWY_EXPORT(FmaLoop);

// Arg: threads, each running its own FmaLoop on the pool.
void BM_FmaPeak(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  ThreadPool pool(threads);
  constexpr int64_t kRounds = 1 << 20;  // ~1 ms a thread
  float sinks[64] = {};
  double flops_per_thread = 0;
  for (auto _ : state) {
    pool.ParallelFor(threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const double flops = HWY_DYNAMIC_DISPATCH(FmaLoop)(kRounds, &sinks[t]);
        if (t == 0) flops_per_thread = flops;
      }
    });
  }
  benchmark::DoNotOptimize(sinks);
  state.SetLabel(SimdTarget());
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_thread * threads * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

BENCHMARK(BM_FmaPeak)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Runs `rounds` x kChains vdpbf16ps; returns the flops done.
constexpr int kChains = 12;
__attribute__((target("avx512f,avx512bf16"))) double Bf16DotLoop(int64_t rounds, float* sink) {
  const __m512bh a = reinterpret_cast<__m512bh>(_mm512_set1_epi32(0x3f803f80));  // (1, 1)
  const __m512bh b = reinterpret_cast<__m512bh>(_mm512_set1_epi32(0x33d633d6));  // 1e-7
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < kChains; ++i) sum = _mm512_add_ps(sum, acc[i]);
  *sink = _mm512_reduce_add_ps(sum);
  return 4.0 * 16 * static_cast<double>(rounds) * kChains;
}

void BM_Bf16DotPeak(benchmark::State& state) {
  if (!internal::HasAvx512Bf16()) {
    state.SkipWithError("this CPU has no avx512_bf16");
    return;
  }
  const int threads = static_cast<int>(state.range(0));
  ThreadPool pool(threads);
  constexpr int64_t kRounds = 1 << 20;
  float sinks[64] = {};
  double flops_per_thread = 0;
  for (auto _ : state) {
    pool.ParallelFor(threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const double flops = Bf16DotLoop(kRounds, &sinks[t]);
        if (t == 0) flops_per_thread = flops;
      }
    });
  }
  benchmark::DoNotOptimize(sinks);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops_per_thread * threads * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Bf16DotPeak)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
