// Every CUDA kernel family at GPT-2 (124M) shapes, timed with CUDA events, next to a
// device-to-device copy of the same bytes (the bandwidth roof):
//   bazel build --config=cuda -c opt //kernels/cuda:cuda_benchmark   (run on a GPU)
// Memory-bound kernels report bytes_per_second (inputs read + outputs written, once);
// matmul and convolution report TFLOP/s. tools/reference/bench_torch_cuda.py times
// PyTorch on the same shapes. Without a GPU every benchmark reports the reason.

#include <cuda_runtime.h>

#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/adamw.h"
#include "kernels/attention.h"
#include "kernels/binary.h"
#include "kernels/conv.h"
#include "kernels/copy.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/runtime.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"
#include "kernels/matmul.h"
#include "kernels/pool.h"
#include "kernels/random.h"
#include "kernels/reduce.h"
#include "kernels/sampling.h"
#include "kernels/softmax.h"
#include "kernels/unary.h"

namespace ember::kernels::cuda {
namespace {

// A device buffer of n random floats in [lo, hi), drawn on the device (UniformFill's
// [0, 1), then scaled: x (hi - lo) + lo), so that the head's 411M-float output costs no
// host time.
class Floats {
 public:
  Floats(int64_t n, float lo = -1, float hi = 1) : bytes_(n * 4), data_(Allocate(0, bytes_)) {
    UniformFill(DType::kF32, n, /*seed=*/3, /*offset=*/0, data_);
    const float host[2] = {hi - lo, lo};
    void* scalars = Allocate(0, sizeof(host));
    CopyBytes(scalars, 0, host, kHost, sizeof(host));
    const Shape shape = {n};
    const Strides along = {1}, broadcast = {0};
    Mul(DType::kF32, shape, {data_, along}, {scalars, broadcast}, data_);
    Add(DType::kF32, shape, {data_, along}, {static_cast<float*>(scalars) + 1, broadcast}, data_);
    Synchronize();
    Deallocate(0, scalars, sizeof(host));
  }
  ~Floats() { Deallocate(0, data_, bytes_); }
  void* get() const { return data_; }

 private:
  int64_t bytes_;
  void* data_;
};

// A device buffer of n bf16 values: Floats' draws, rounded.
class Bf16s {
 public:
  explicit Bf16s(int64_t n) : bytes_(n * 2), data_(Allocate(0, bytes_)) {
    Floats values(n);
    const Shape shape = {n};
    const Strides along = {1};
    CopyCast(shape, DType::kF32, values.get(), along, DType::kBF16, data_, along);
    Synchronize();
  }
  ~Bf16s() { Deallocate(0, data_, bytes_); }
  void* get() const { return data_; }

 private:
  int64_t bytes_;
  void* data_;
};

// Times `launch` with CUDA events around each iteration (after one warm-up call).
template <typename Fn>
void TimeOnGpu(benchmark::State& state, Fn&& launch) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  launch();  // warm-up: caches, cuBLAS heuristics
  for (auto _ : state) {
    cudaEventRecord(start);
    launch();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

bool HaveGpu(benchmark::State& state) {
  if (DeviceCount() > 0) return true;
  state.SkipWithError("no CUDA device here");
  return false;
}

void SetBytes(benchmark::State& state, int64_t bytes) {
  state.SetBytesProcessed(state.iterations() * bytes);
}

void SetFlops(benchmark::State& state, double flops) {
  state.counters["TFLOP/s"] =
      benchmark::Counter(flops * state.iterations() / 1e12, benchmark::Counter::kIsRate);
}

constexpr int64_t kRows = 8 * 1024, kC = 768;  // B T and C of a GPT-2 step

void BM_Copy(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const int64_t n = state.range(0);
  Floats x(n), y(n);
  TimeOnGpu(state, [&] { CopyBytes(y.get(), 0, x.get(), 0, n * 4); });
  SetBytes(state, 2 * n * 4);
}
BENCHMARK(BM_Copy)->Arg(kRows* kC)->Arg(kRows * 4 * kC)->UseManualTime();

void BM_CopyCastStrided(benchmark::State& state) {  // a transpose, f32 -> f32
  if (!HaveGpu(state)) return;
  Floats x(kRows * kC), y(kRows * kC);
  const Shape shape = {kRows, kC};
  const Strides from = {1, kRows}, to = {kC, 1};
  TimeOnGpu(state, [&] { CopyCast(shape, DType::kF32, x.get(), from, DType::kF32, y.get(), to); });
  SetBytes(state, 2 * kRows * kC * 4);
}
BENCHMARK(BM_CopyCastStrided)->UseManualTime();

// One head-split view of a qkv projection [B, T, 3 C] made contiguous: [B, 12, T, 64]
// with rows 3 C apart, as attention's q, k and v were before it read them in place.
void BM_CopyHeads(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const int64_t b = 8, t = 1024, h = 12, d = 64;
  Floats x(b * t * 3 * kC), y(b * t * kC);
  const Shape shape = {b, h, t, d};
  const Strides from = {t * 3 * kC, d, 3 * kC, 1}, to = {h * t * d, t * d, d, 1};
  TimeOnGpu(state, [&] { CopyCast(shape, DType::kF32, x.get(), from, DType::kF32, y.get(), to); });
  SetBytes(state, 2 * b * t * kC * 4);
}
BENCHMARK(BM_CopyHeads)->UseManualTime();

void BM_GeluTanh(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const int64_t n = kRows * 4 * kC;
  Floats x(n), y(n);
  TimeOnGpu(state, [&] { GeluTanh(DType::kF32, n, x.get(), y.get()); });
  SetBytes(state, 2 * n * 4);
}
BENCHMARK(BM_GeluTanh)->UseManualTime();

void BM_GeluTanhBackward(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const int64_t n = kRows * 4 * kC;
  Floats x(n), dy(n), dx(n);
  TimeOnGpu(state, [&] { GeluTanhBackward(DType::kF32, n, x.get(), dy.get(), dx.get()); });
  SetBytes(state, 3 * n * 4);
}
BENCHMARK(BM_GeluTanhBackward)->UseManualTime();

void BM_AddBroadcastRow(benchmark::State& state) {  // x [rows, C] + bias [C]
  if (!HaveGpu(state)) return;
  Floats x(kRows * kC), b(kC), y(kRows * kC);
  const Shape shape = {kRows, kC};
  const Strides xs = {kC, 1}, bs = {0, 1};
  TimeOnGpu(state, [&] { Add(DType::kF32, shape, {x.get(), xs}, {b.get(), bs}, y.get()); });
  SetBytes(state, 2 * kRows * kC * 4);
}
BENCHMARK(BM_AddBroadcastRow)->UseManualTime();

void BM_SumRows(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  Floats x(kRows * kC), y(kRows);
  TimeOnGpu(state, [&] { SumRows(DType::kF32, kRows, kC, x.get(), kC, y.get()); });
  SetBytes(state, kRows * kC * 4);
}
BENCHMARK(BM_SumRows)->UseManualTime();

void BM_SumColumns(benchmark::State& state) {  // a Linear bias gradient
  if (!HaveGpu(state)) return;
  Floats x(kRows * kC), y(kC);
  TimeOnGpu(state, [&] { SumColumns(DType::kF32, kRows, kC, x.get(), kC, y.get()); });
  SetBytes(state, kRows * kC * 4);
}
BENCHMARK(BM_SumColumns)->UseManualTime();

void BM_Softmax(benchmark::State& state) {  // attention rows
  if (!HaveGpu(state)) return;
  const int64_t rows = 8 * 12 * 1024, n = 1024;
  Floats x(rows * n), y(rows * n);
  TimeOnGpu(state, [&] { Softmax(DType::kF32, rows, n, x.get(), y.get()); });
  SetBytes(state, 2 * rows * n * 4);
}
BENCHMARK(BM_Softmax)->UseManualTime();

void BM_CrossEntropy(benchmark::State& state) {  // forward + backward over the vocabulary
  if (!HaveGpu(state)) return;
  const int64_t rows = 1024, n = 50257;
  Floats logits(rows * n, -5, 5), losses(rows), row_max(rows), sum_exp(rows), grad(rows),
      dlogits(rows * n);
  std::vector<int64_t> host_targets(rows);
  for (int64_t r = 0; r < rows; ++r) host_targets[r] = (r * 7919) % n;
  void* targets = Allocate(0, rows * 8);
  CopyBytes(targets, 0, host_targets.data(), kHost, rows * 8);
  const auto* t = static_cast<const int64_t*>(targets);
  TimeOnGpu(state, [&] {
    CrossEntropyForward(DType::kF32, rows, n, n, logits.get(), t, -100, losses.get(), row_max.get(),
                        sum_exp.get());
    CrossEntropyBackward(DType::kF32, rows, n, n, logits.get(), t, -100, row_max.get(),
                         sum_exp.get(), grad.get(), dlogits.get());
  });
  Deallocate(0, targets, rows * 8);
  SetBytes(state, 3 * rows * n * 4);  // logits read twice, dlogits written
}
BENCHMARK(BM_CrossEntropy)->UseManualTime();

// A block's residual add and the LayerNorm after it: the add kernel then the LayerNorm
// (residual 0: x is the sum already, as before the fusion) or both in one (residual 1).
void BM_LayerNormForward(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  Floats x(kRows * kC), r(kRows * kC), sum(kRows * kC), w(kC), b(kC), y(kRows * kC), mean(kRows),
      rstd(kRows);
  const bool fused = state.range(0) == 1;
  const Shape shape = {kRows * kC};
  const Strides along = {1};
  TimeOnGpu(state, [&] {
    if (!fused) Add(DType::kF32, shape, {x.get(), along}, {r.get(), along}, sum.get());
    LayerNormForward(DType::kF32, kRows, kC, fused ? x.get() : sum.get(), fused ? r.get() : nullptr,
                     w.get(), b.get(), 1e-5, sum.get(), y.get(), mean.get(), rstd.get());
  });
  SetBytes(state, 4 * kRows * kC * 4);  // x and r read, the sum and y written
}
BENCHMARK(BM_LayerNormForward)->ArgName("residual")->Arg(0)->Arg(1)->UseManualTime();

void BM_LayerNormBackward(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  Floats x(kRows * kC), w(kC), mean(kRows), rstd(kRows, 0.5, 2), dy(kRows * kC), dx(kRows * kC),
      dw(kC), db(kC);
  TimeOnGpu(state, [&] {
    LayerNormBackward(DType::kF32, kRows, kC, x.get(), w.get(), mean.get(), rstd.get(), dy.get(),
                      dx.get(), dw.get(), db.get());
  });
  SetBytes(state, 3 * kRows * kC * 4);
}
BENCHMARK(BM_LayerNormBackward)->UseManualTime();

void BM_Embedding(benchmark::State& state) {  // forward and backward of wte
  if (!HaveGpu(state)) return;
  const int64_t vocab = 50257;
  Floats weight(vocab * kC), out(kRows * kC), dweight(vocab * kC);
  std::vector<int64_t> host_ids(kRows);
  for (int64_t i = 0; i < kRows; ++i) host_ids[i] = (i * 104729) % vocab;
  void* ids = Allocate(0, kRows * 8);
  CopyBytes(ids, 0, host_ids.data(), kHost, kRows * 8);
  const auto* p = static_cast<const int64_t*>(ids);
  TimeOnGpu(state, [&] {
    EmbeddingForward(DType::kF32, kRows, kC, vocab, weight.get(), p, out.get());
    EmbeddingBackward(DType::kF32, kRows, kC, vocab, p, out.get(), dweight.get());
  });
  Deallocate(0, ids, kRows * 8);
  SetBytes(state, 4 * kRows * kC * 4);  // rows gathered, written, read back, added into
}
BENCHMARK(BM_Embedding)->UseManualTime();

// Causal attention of one GPT-2 layer: B = 8 sequences x 12 heads, T = 1024, d = 64.
// Flops as the math needs them (causal: half of each T x T product): forward
// S = Q K^T and Y = P V, 2 T^2 d a head; backward dV = P^T dY, dP = dY V^T,
// dQ = dS K and dK = dS^T Q, 4 T^2 d a head.
constexpr int64_t kHeads = 8 * 12, kT = 1024, kD = 64;

// tf32 1: on tensor cores (SetAllowTf32).
void BM_AttentionForward(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  Floats q(kHeads * kT * kD), k(kHeads * kT * kD), v(kHeads * kT * kD), y(kHeads * kT * kD),
      lse(kHeads * kT);
  SetAllowTf32(state.range(0) == 1);
  TimeOnGpu(state, [&] {
    CausalAttentionForward(DType::kF32, kHeads, kT, kT, kD, q.get(), k.get(), v.get(), kT * kD,
                           y.get(), lse.get(), {});
  });
  SetAllowTf32(false);
  SetFlops(state, 2.0 * kHeads * kT * kT * kD);
}
BENCHMARK(BM_AttentionForward)->ArgName("tf32")->Arg(0)->Arg(1)->UseManualTime();

void BM_AttentionBackward(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const int64_t n = kHeads * kT * kD;
  Floats q(n), k(n), v(n), y(n), lse(kHeads * kT), dy(n), dq(n), dk(n), dv(n);
  CausalAttentionForward(DType::kF32, kHeads, kT, kT, kD, q.get(), k.get(), v.get(), kT * kD,
                         y.get(), lse.get(), {});
  SetAllowTf32(state.range(0) == 1);
  TimeOnGpu(state, [&] {
    CausalAttentionBackward(DType::kF32, kHeads, kT, kT, kD, q.get(), k.get(), v.get(), y.get(),
                            lse.get(), dy.get(), dq.get(), dk.get(), dv.get(), {});
  });
  SetAllowTf32(false);
  SetFlops(state, 4.0 * kHeads * kT * kT * kD);
}
BENCHMARK(BM_AttentionBackward)->ArgName("tf32")->Arg(0)->Arg(1)->UseManualTime();

// The same in bf16 (attention_bf16.cu's mma.sync kernels; lse f32).
void BM_AttentionForwardBf16(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const int64_t n = kHeads * kT * kD;
  Bf16s q(n), k(n), v(n), y(n);
  Floats lse(kHeads * kT);
  TimeOnGpu(state, [&] {
    CausalAttentionForward(DType::kBF16, kHeads, kT, kT, kD, q.get(), k.get(), v.get(), kT * kD,
                           y.get(), lse.get(), {});
  });
  SetFlops(state, 2.0 * kHeads * kT * kT * kD);
}
BENCHMARK(BM_AttentionForwardBf16)->UseManualTime();

void BM_AttentionBackwardBf16(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const int64_t n = kHeads * kT * kD;
  Bf16s q(n), k(n), v(n), y(n), dy(n), dq(n), dk(n), dv(n);
  Floats lse(kHeads * kT);
  CausalAttentionForward(DType::kBF16, kHeads, kT, kT, kD, q.get(), k.get(), v.get(), kT * kD,
                         y.get(), lse.get(), {});
  TimeOnGpu(state, [&] {
    CausalAttentionBackward(DType::kBF16, kHeads, kT, kT, kD, q.get(), k.get(), v.get(), y.get(),
                            lse.get(), dy.get(), dq.get(), dk.get(), dv.get(), {});
  });
  SetFlops(state, 4.0 * kHeads * kT * kT * kD);
}
BENCHMARK(BM_AttentionBackwardBf16)->UseManualTime();

// GPT-2 124M's 148 parameter tensors (wte, wpe, 12 blocks of 12, ln_f's 2), stepped in
// one call (1) or one call per tensor (0), from arrays laid end to end.
void BM_AdamW(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  std::vector<int64_t> sizes = {50257 * kC, 1024 * kC};
  for (int layer = 0; layer < 12; ++layer) {
    for (int64_t s :
         {kC, kC, 3 * kC * kC, 3 * kC, kC * kC, kC, kC, kC, 4 * kC * kC, 4 * kC, 4 * kC * kC, kC}) {
      sizes.push_back(s);
    }
  }
  sizes.push_back(kC);
  sizes.push_back(kC);
  int64_t n = 0;
  for (int64_t s : sizes) n += s;
  Floats p(n), g(n), m(n), v(n, 0, 1);
  const AdamWHyper hyper{6e-4, 0.9, 0.95, 1e-8, 0.1, 10};
  std::vector<AdamWTensor> table;
  int64_t at = 0;
  for (int64_t s : sizes) {
    table.push_back({s, static_cast<float*>(p.get()) + at, static_cast<float*>(g.get()) + at,
                     static_cast<float*>(m.get()) + at, static_cast<float*>(v.get()) + at, hyper});
    at += s;
  }
  TimeOnGpu(state, [&] {
    if (state.range(0) == 1) {
      AdamWStep(DType::kF32, static_cast<int64_t>(table.size()), table.data());
    } else {
      for (const AdamWTensor& t : table) AdamWStep(DType::kF32, 1, &t);
    }
  });
  SetBytes(state, 7 * n * 4);  // p, g, m, v read; p, m, v written
}
BENCHMARK(BM_AdamW)->ArgName("one_call")->Arg(0)->Arg(1)->UseManualTime();

// C [m, n] = A [m, k] B [k, n], B row-major (0) or transposed (1, a Linear's weight),
// in f32 (tf32 0) or on TF32 tensor cores (tf32 1, SetAllowTf32).
void BM_Matmul(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const bool transposed = state.range(3) == 1;
  SetAllowTf32(state.range(4) == 1);
  Floats a(m * k), b(k * n), c(m * n);
  const MatrixIn mb = transposed ? MatrixIn{b.get(), 1, k} : MatrixIn{b.get(), n, 1};
  TimeOnGpu(state, [&] { Gemm(DType::kF32, m, k, n, {a.get(), k, 1}, mb, c.get(), n, false); });
  SetAllowTf32(false);
  SetFlops(state, 2.0 * m * k * n);
}
// A Linear layer and its bias at GPT-2's MLP up-projection (x [kRows, 768] W^T to 3072
// outputs): the bias added in the GEMM's epilogue (GemmBias, fused 1) against C's rows
// set to the bias and the product accumulated onto them (fused 0); f32 on TF32 tensor
// cores (bf16 0) or bf16 (bf16 1).
void BM_LinearBias(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const int64_t m = kRows, k = kC, n = 4 * kC;
  const bool fused = state.range(0) == 1;
  const DType dtype = state.range(1) == 1 ? DType::kBF16 : DType::kF32;
  SetAllowTf32(true);
  Floats x(m * k), w(n * k), bias(n), y(m * n);
  const int64_t item = ItemSize(dtype);
  // The operands in `dtype` (bf16 copies of the f32 values, or the f32 buffers).
  std::vector<std::pair<void*, int64_t>> copies;
  auto in_dtype = [&](const Floats& f, int64_t count) -> void* {
    if (dtype == DType::kF32) return f.get();
    copies.emplace_back(Allocate(0, count * item), count * item);
    const Shape shape = {count};
    const Strides along = {1};
    CopyCast(shape, DType::kF32, f.get(), along, dtype, copies.back().first, along);
    return copies.back().first;
  };
  void* xs = in_dtype(x, m * k);
  void* ws = in_dtype(w, n * k);
  void* bs = in_dtype(bias, n);
  void* ys = in_dtype(y, m * n);
  const Shape shape = {m, n};
  const Strides broadcast = {0, 1}, rows = {n, 1};
  TimeOnGpu(state, [&] {
    if (fused) {
      GemmBias(dtype, m, k, n, {xs, k, 1}, {ws, 1, k}, bs, ys, n);
    } else {
      CopyCast(shape, dtype, bs, broadcast, dtype, ys, rows);
      Gemm(dtype, m, k, n, {xs, k, 1}, {ws, 1, k}, ys, n, /*accumulate=*/true);
    }
  });
  Synchronize();
  for (const auto& [p, bytes] : copies) Deallocate(0, p, bytes);
  SetAllowTf32(false);
  SetFlops(state, 2.0 * m * k * n);
}
BENCHMARK(BM_LinearBias)
    ->ArgNames({"fused", "bf16"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->UseManualTime();

// The language-model head's three products on TF32 tensor cores (X [m, 768], W [50257,
// 768], L the logits and dL their gradient, rows `ld` floats apart: 50257, or padded to
// 16-byte (50260) or 256-byte (50304, as llm.c pads its vocabulary) multiples):
// product 0 L = X W^T, 1 dX = dL W, 2 dW = dL^T X.
void BM_HeadMatmul(benchmark::State& state) {
  if (!HaveGpu(state)) return;
  const int64_t m = 2 * kRows, c = kC, product = state.range(0), ld = state.range(1),
                v = state.range(2);
  SetAllowTf32(true);
  Floats x(m * c), w(v * c), logits(m * ld), out(v * c);
  TimeOnGpu(state, [&] {
    if (product == 0)
      Gemm(DType::kF32, m, c, v, {x.get(), c, 1}, {w.get(), 1, c}, logits.get(), ld, false);
    if (product == 1)
      Gemm(DType::kF32, m, v, c, {logits.get(), ld, 1}, {w.get(), c, 1}, out.get(), c, false);
    if (product == 2)
      Gemm(DType::kF32, v, m, c, {logits.get(), 1, ld}, {x.get(), c, 1}, out.get(), c, false);
  });
  SetAllowTf32(false);
  SetFlops(state, 2.0 * m * c * v);
}
BENCHMARK(BM_HeadMatmul)
    ->ArgNames({"product", "ld", "vocab"})
    ->ArgsProduct({{0, 1, 2}, {50257, 50304}, {50257}})
    ->ArgsProduct({{0, 1, 2}, {50304}, {50304}})
    ->UseManualTime();

BENCHMARK(BM_Matmul)
    ->ArgsProduct({{kRows}, {kC}, {3 * kC}, {1}, {0, 1}})  // qkv
    ->ArgsProduct({{kRows}, {kC}, {4 * kC}, {1}, {0, 1}})  // mlp up
    ->ArgsProduct({{kRows}, {4 * kC}, {kC}, {1}, {0, 1}})  // mlp down
    ->ArgsProduct({{kRows}, {kC}, {50257}, {1}, {0, 1}})   // the head
    ->ArgsProduct({{4096}, {4096}, {4096}, {0}, {0, 1}})
    ->UseManualTime();

void BM_Conv2d(benchmark::State& state) {  // MNIST CNN's second layer, batch 64
  if (!HaveGpu(state)) return;
  const int64_t n = 64, c = 16, o = 32;
  const Window2d window{14, 14, 5, 5, 1, 1, 2, 2};
  Floats x(n * c * 14 * 14), w(o * c * 25), b(o), y(n * o * 14 * 14);
  TimeOnGpu(state, [&] {
    Conv2dForward(DType::kF32, n, c, o, window, x.get(), w.get(), b.get(), y.get());
  });
  SetFlops(state, 2.0 * n * o * 14 * 14 * c * 25);
}
BENCHMARK(BM_Conv2d)->UseManualTime();

void BM_TopK(benchmark::State& state) {  // one generation step's top 40
  if (!HaveGpu(state)) return;
  const int64_t n = 50257, k = 40;
  Floats x(n), values(k);
  void* indices = Allocate(0, k * 8);
  TimeOnGpu(state, [&] {
    TopKRows(DType::kF32, 1, n, k, x.get(), values.get(), static_cast<int64_t*>(indices));
  });
  Deallocate(0, indices, k * 8);
  SetBytes(state, n * 4);
}
BENCHMARK(BM_TopK)->UseManualTime();

}  // namespace
}  // namespace ember::kernels::cuda
