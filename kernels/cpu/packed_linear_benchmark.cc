// Decoding's products: PackedLinear in each format against Gemm's x W^T (f32 and bf16,
// W unpacked [out, in]) at GPT-2 124M's shapes for a few rows, and the memory's read
// bandwidth, the bound a batch-1 product meets (it reads every weight once):
//   bazel run -c opt //kernels/cpu:packed_linear_benchmark
// "GB/s" is the weights' bytes over the time; "GFLOP/s" 2 M K N over it.

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/matmul.h"
#include "kernels/packed_linear.h"

namespace ember::kernels::cpu {
namespace {

std::vector<float> Random(int64_t n) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

void Report(benchmark::State& state, int64_t m, int64_t k, int64_t n, int64_t weight_bytes) {
  const double calls = static_cast<double>(state.iterations());
  state.counters["GB/s"] =
      benchmark::Counter(calls * weight_bytes / 1e9, benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] =
      benchmark::Counter(calls * 2.0 * m * k * n / 1e9, benchmark::Counter::kIsRate);
}

// Arguments: format (0 f32, 1 bf16, 2 int8), m, k, n.
void BM_PackedLinear(benchmark::State& state) {
  const auto format = static_cast<PackedFormat>(state.range(0));
  const int64_t m = state.range(1), k = state.range(2), n = state.range(3);
  const std::vector<float> w = Random(n * k), a = Random(m * k);
  std::vector<uint8_t> packed(static_cast<size_t>(PackedBytes(format, n, k)));
  PackWeights(format, n, k, w.data(), k, packed.data());
  std::vector<float> c(static_cast<size_t>(m * n));
  for (auto _ : state) {
    PackedLinear(format, DType::kF32, m, k, n, a.data(), k, packed.data(), nullptr, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetLabel(PackedFormatName(format));
  Report(state, m, k, n, static_cast<int64_t>(packed.size()));
}

// Gemm's C = A W^T, W [n, k] f32 (dtype 0) or bf16 (1): what a Linear runs unpacked.
void BM_Gemm(benchmark::State& state) {
  const DType dtype = state.range(0) == 0 ? DType::kF32 : DType::kBF16;
  const int64_t m = state.range(1), k = state.range(2), n = state.range(3);
  const std::vector<float> w = Random(n * k), a = Random(m * k);
  const int64_t item = dtype == DType::kF32 ? 4 : 2;
  std::vector<uint16_t> w16(w.size()), a16(a.size());
  for (size_t i = 0; i < w.size(); ++i) w16[i] = BFloat16::FromFloat(w[i]).bits;
  for (size_t i = 0; i < a.size(); ++i) a16[i] = BFloat16::FromFloat(a[i]).bits;
  const void* wp = dtype == DType::kF32 ? static_cast<const void*>(w.data()) : w16.data();
  const void* ap = dtype == DType::kF32 ? static_cast<const void*>(a.data()) : a16.data();
  std::vector<float> c(static_cast<size_t>(m * n));
  for (auto _ : state) {
    Gemm(dtype, m, k, n, MatrixIn{ap, k, 1}, MatrixIn{wp, 1, k}, c.data(), n, false);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetLabel(dtype == DType::kF32 ? "f32" : "bf16");
  Report(state, m, k, n, n * k * item);
}

// One token of GPT-2 124M at batch 1: the 12 blocks' four products (each block its own
// weights, so that they come from memory as in decoding) and the head, one after
// another, nothing else between them. Against BM_ReadBandwidth: how near the products
// alone come to the memory's bound. Argument: format.
void BM_PackedToken(benchmark::State& state) {
  const auto format = static_cast<PackedFormat>(state.range(0));
  std::vector<std::pair<int64_t, int64_t>> shapes;  // K x N
  for (int layer = 0; layer < 12; ++layer) {
    shapes.insert(shapes.end(), {{768, 2304}, {768, 768}, {768, 3072}, {3072, 768}});
  }
  shapes.emplace_back(768, 50257);
  std::vector<std::vector<uint8_t>> packed;
  int64_t bytes = 0;
  for (const auto& [k, n] : shapes) {
    const std::vector<float> w = Random(n * k);
    packed.emplace_back(static_cast<size_t>(PackedBytes(format, n, k)));
    PackWeights(format, n, k, w.data(), k, packed.back().data());
    bytes += static_cast<int64_t>(packed.back().size());
  }
  const std::vector<float> a = Random(3072);
  std::vector<float> c(50257);
  for (auto _ : state) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      const auto [k, n] = shapes[i];
      PackedLinear(format, DType::kF32, 1, k, n, a.data(), k, packed[i].data(), nullptr, c.data(),
                   n);
    }
    benchmark::DoNotOptimize(c.data());
  }
  state.SetLabel(PackedFormatName(format));
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * bytes / 1e9,
                                              benchmark::Counter::kIsRate);
}

// Sums a 512 MiB buffer across the pool (vector loads, several sums in flight, each
// line asked for 4 KiB ahead as PackedLinear does): the bytes a second that the memory
// gives the threads' reads. The VM's figure moves between runs: compare within one.
void BM_ReadBandwidth(benchmark::State& state) {
  namespace hn = hwy::HWY_NAMESPACE;
  const int64_t count = int64_t{128} << 20;
  std::vector<float> data(static_cast<size_t>(count), 1.0f);
  std::vector<float> sums(static_cast<size_t>(NumThreads()) * 16);
  for (auto _ : state) {
    const int64_t chunks = 1024, per = count / chunks;
    ParallelFor(chunks, 1, [&](int64_t begin, int64_t end) {
      const hn::ScalableTag<float> d;
      const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
      auto s0 = hn::Zero(d), s1 = s0, s2 = s0, s3 = s0;
      for (const float* p = data.data() + begin * per; p < data.data() + end * per;
           p += 4 * lanes) {
        for (int64_t line = 0; line < 4 * lanes; line += 16) hwy::Prefetch(p + 1024 + line);
        s0 = hn::Add(s0, hn::LoadU(d, p));
        s1 = hn::Add(s1, hn::LoadU(d, p + lanes));
        s2 = hn::Add(s2, hn::LoadU(d, p + 2 * lanes));
        s3 = hn::Add(s3, hn::LoadU(d, p + 3 * lanes));
      }
      benchmark::DoNotOptimize(hn::GetLane(hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
    });
  }
  state.counters["GB/s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * count * 4 / 1e9, benchmark::Counter::kIsRate);
}

// GPT-2 124M's products (K x N): attention's qkv and projection, the MLP's two, the head.
void Shapes(benchmark::internal::Benchmark* b, int formats) {
  for (const int64_t m : {1, 8, 32}) {
    for (const auto& [k, n] : std::vector<std::pair<int64_t, int64_t>>{
             {768, 2304}, {768, 768}, {768, 3072}, {3072, 768}, {768, 50257}}) {
      for (int format = 0; format < formats; ++format) b->Args({format, m, k, n});
    }
  }
  b->ArgNames({"format", "m", "k", "n"})->UseRealTime();
}

BENCHMARK(BM_PackedLinear)->Apply([](auto* b) { Shapes(b, 3); });
BENCHMARK(BM_Gemm)->Apply([](auto* b) { Shapes(b, 2); });
BENCHMARK(BM_PackedToken)->ArgName("format")->DenseRange(0, 2)->UseRealTime();
BENCHMARK(BM_ReadBandwidth)->UseRealTime();

}  // namespace
}  // namespace ember::kernels::cpu
