// The fused kernels at GPT-2 activation shapes, next to a plain copy of the same
// bytes (the memory-bandwidth limit):
//   bazel run -c opt //kernels/cpu:nn_benchmark
// tools/reference/bench_torch_ops.py times PyTorch on the same shapes.

#include <cstring>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/adamw.h"
#include "kernels/attention.h"
#include "kernels/binary.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/layernorm.h"
#include "kernels/softmax.h"
#include "kernels/testing.h"
#include "kernels/unary.h"

namespace ember::kernels::cpu {
namespace {

std::vector<float> Random(int64_t n, float lo, float hi) {
  std::mt19937 rng(3);
  return RandomVector<float>(n, lo, hi, rng);
}

// Bytes that must cross memory at least once: inputs read plus outputs written.
void SetBytes(benchmark::State& state, int64_t bytes) {
  state.SetBytesProcessed(state.iterations() * bytes);
}

void BM_Copy(benchmark::State& state) {
  const int64_t n = state.range(0) * state.range(1);
  const std::vector<float> x = Random(n, -1, 1);
  std::vector<float> y(n);
  for (auto _ : state) {
    std::memcpy(y.data(), x.data(), n * sizeof(float));
    benchmark::ClobberMemory();
  }
  SetBytes(state, 2 * n * 4);
}

void BM_SoftmaxForward(benchmark::State& state) {
  const int64_t rows = state.range(0), n = state.range(1);
  const std::vector<float> x = Random(rows * n, -10, 10);
  std::vector<float> y(rows * n);
  for (auto _ : state) Softmax(DType::kF32, rows, n, x.data(), y.data());
  SetBytes(state, 2 * rows * n * 4);
}

void BM_CrossEntropyForwardBackward(benchmark::State& state) {
  const int64_t rows = state.range(0), n = state.range(1);
  const std::vector<float> x = Random(rows * n, -10, 10);
  std::vector<int64_t> targets(rows);
  for (int64_t r = 0; r < rows; ++r) targets[r] = (r * 7919) % n;
  std::vector<float> losses(rows), row_max(rows), sum_exp(rows), grad(rows, 1.0f / rows);
  std::vector<float> dx(rows * n);
  for (auto _ : state) {
    CrossEntropyForward(DType::kF32, rows, n, n, x.data(), targets.data(), -100, losses.data(),
                        row_max.data(), sum_exp.data());
    CrossEntropyBackward(DType::kF32, rows, n, n, x.data(), targets.data(), -100, row_max.data(),
                         sum_exp.data(), grad.data(), dx.data());
  }
  SetBytes(state, 3 * rows * n * 4);  // logits read twice, dlogits written once
}

// With residual 1, a block's residual add fused into the LayerNorm after it; with 0 the
// add (the elementwise kernel) then the LayerNorm on its result.
void BM_LayerNormForward(benchmark::State& state) {
  const int64_t rows = state.range(0), c = state.range(1);
  const bool fused = state.range(2) == 1;
  const std::vector<float> x = Random(rows * c, -2, 2), r = Random(rows * c, -1, 1),
                           w = Random(c, 0.5, 1.5), b = Random(c, -1, 1);
  std::vector<float> sum(rows * c), y(rows * c), mean(rows), rstd(rows);
  const Shape shape = {rows * c};
  const Strides along = {1};
  for (auto _ : state) {
    if (!fused) Add(DType::kF32, shape, {x.data(), along}, {r.data(), along}, sum.data());
    LayerNormForward(DType::kF32, rows, c, fused ? x.data() : sum.data(),
                     fused ? r.data() : nullptr, w.data(), b.data(), 1e-5, sum.data(), y.data(),
                     mean.data(), rstd.data());
  }
  SetBytes(state, 4 * rows * c * 4);  // x and r read, the sum and y written
}

void BM_LayerNormBackward(benchmark::State& state) {
  const int64_t rows = state.range(0), c = state.range(1);
  const std::vector<float> x = Random(rows * c, -2, 2), w = Random(c, 0.5, 1.5),
                           b = Random(c, -1, 1);
  const std::vector<float> dy = Random(rows * c, -1, 1);
  std::vector<float> y(rows * c), mean(rows), rstd(rows), dx(rows * c), dw(c), db(c);
  LayerNormForward(DType::kF32, rows, c, x.data(), nullptr, w.data(), b.data(), 1e-5, nullptr,
                   y.data(), mean.data(), rstd.data());
  for (auto _ : state) {
    LayerNormBackward(DType::kF32, rows, c, x.data(), w.data(), mean.data(), rstd.data(), dy.data(),
                      dx.data(), dw.data(), db.data());
  }
  SetBytes(state, 3 * rows * c * 4);
}

void BM_GeluTanhForward(benchmark::State& state) {
  const int64_t n = state.range(0) * state.range(1);
  const std::vector<float> x = Random(n, -4, 4);
  std::vector<float> y(n);
  for (auto _ : state) GeluTanh(DType::kF32, n, x.data(), y.data());
  SetBytes(state, 2 * n * 4);
}

void BM_GeluTanhBackward(benchmark::State& state) {
  const int64_t n = state.range(0) * state.range(1);
  const std::vector<float> x = Random(n, -4, 4), dy = Random(n, -1, 1);
  std::vector<float> dx(n);
  for (auto _ : state) GeluTanhBackward(DType::kF32, n, x.data(), dy.data(), dx.data());
  SetBytes(state, 3 * n * 4);
}

// AdamW over GPT-2 124M's parameters (4 arrays read, 3 written: 28 bytes a parameter),
// next to a copy of as many bytes split across the pool as AdamW is (its bound).
constexpr int64_t kGpt2Parameters = 124475904;
void BM_AdamW(benchmark::State& state) {
  const int64_t n = kGpt2Parameters;
  std::vector<float> p = Random(n, -1, 1), g = Random(n, -1, 1), m(n), v(n);
  int64_t step = 0;
  for (auto _ : state) {
    const AdamWTensor all{n,        p.data(), g.data(),
                          m.data(), v.data(), {1e-4, 0.9, 0.95, 1e-8, 0.1, ++step}};
    AdamWStep(DType::kF32, 1, &all);
  }
  SetBytes(state, 7 * n * 4);
}
void BM_CopyOnPool(benchmark::State& state) {
  const int64_t n = 7 * kGpt2Parameters / 2;  // 2 n floats cross memory, as AdamW's 7
  const std::vector<float> x(n, 1.0f);
  std::vector<float> y(n);
  for (auto _ : state) {
    ParallelFor(n, 1 << 16, [&](int64_t begin, int64_t end) {
      std::memcpy(y.data() + begin, x.data() + begin, (end - begin) * sizeof(float));
    });
    benchmark::ClobberMemory();
  }
  SetBytes(state, 2 * n * 4);
}
// Forward and backward of causal attention over `heads` heads of [t, d]. The counter
// is the useful work: six products of t x t x d (two forward, four backward), half of
// each masked away, so 6 t^2 d flops a head (the backward's recomputed scores are not
// counted).
void BM_CausalAttention(benchmark::State& state) {
  const int64_t heads = state.range(0), t = state.range(1), d = state.range(2), n = heads * t * d;
  const std::vector<float> q = Random(n, -1, 1), k = Random(n, -1, 1), v = Random(n, -1, 1),
                           dy = Random(n, -1, 1);
  std::vector<float> y(n), lse(heads * t), dq(n), dk(n), dv(n);
  for (auto _ : state) {
    CausalAttentionForward(DType::kF32, heads, t, t, d, q.data(), k.data(), v.data(), t * d,
                           y.data(), lse.data(), {});
    CausalAttentionBackward(DType::kF32, heads, t, t, d, q.data(), k.data(), v.data(), y.data(),
                            lse.data(), dy.data(), dq.data(), dk.data(), dv.data(), {});
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 6 * heads * t * t * d,
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
// The main job's (16 sequences x 4 heads of 128 x 32) and GPT-2 124M's at B = 4
// (4 x 12 heads of 1024 x 64).
BENCHMARK(BM_CausalAttention)
    ->ArgNames({"heads", "t", "d"})
    ->Args({64, 128, 32})
    ->Args({48, 1024, 64})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// One generated token's attention: a query against a cache of t keys and values, the
// first t rows of heads of 1024 (as GPT-2's decoder reads its cache in place). GB/s: the
// keys' and values' bytes over the time.
void BM_CausalAttentionDecode(benchmark::State& state) {
  const int64_t heads = state.range(0), t = state.range(1), d = state.range(2), capacity = 1024;
  const std::vector<float> q = Random(heads * d, -1, 1), k = Random(heads * capacity * d, -1, 1),
                           v = Random(heads * capacity * d, -1, 1);
  std::vector<float> y(heads * d), lse(heads);
  for (auto _ : state) {
    CausalAttentionForward(DType::kF32, heads, 1, t, d, q.data(), k.data(), v.data(), capacity * d,
                           y.data(), lse.data(), {});
  }
  SetBytes(state, 2 * heads * t * d * 4);
}
BENCHMARK(BM_CausalAttentionDecode)
    ->ArgNames({"heads", "t", "d"})
    ->Args({12, 128, 64})
    ->Args({12, 512, 64})
    ->UseRealTime();
BENCHMARK(BM_AdamW)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CopyOnPool)->Unit(benchmark::kMillisecond)->UseRealTime();

void Activations(benchmark::internal::Benchmark* b) {
  b->ArgNames({"rows", "n"})->Args({256, 768})->Args({256, 3072})->Args({256, 50257});
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}
BENCHMARK(BM_Copy)->Apply(Activations);
BENCHMARK(BM_SoftmaxForward)->Apply(Activations);
BENCHMARK(BM_CrossEntropyForwardBackward)
    ->Args({256, 50257})
    ->ArgNames({"rows", "n"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_LayerNormForward)
    ->Args({256, 768, 0})
    ->Args({256, 768, 1})
    ->Args({8192, 768, 0})
    ->Args({8192, 768, 1})
    ->ArgNames({"rows", "c", "residual"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_LayerNormBackward)
    ->Args({256, 768})
    ->ArgNames({"rows", "c"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_GeluTanhForward)
    ->Args({256, 3072})
    ->ArgNames({"rows", "n"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_GeluTanhBackward)
    ->Args({256, 3072})
    ->ArgNames({"rows", "n"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace ember::kernels::cpu
