// ember's Gemm against OpenBLAS's cblas_sgemm and Eigen's matrix product (built for
// this CPU, OpenMP threads) at GPT-2's shapes, on 1 and 2 threads:
//   bazel run -c opt //kernels/cpu:matmul_benchmark
// Each row reports GFLOP/s (2 M K N per multiply); compare rows of the same shape
// (tools/reference/gemm_ratio.py prints the ratios).

#include <cblas.h>

#include <Eigen/Core>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"

namespace ember::kernels::cpu {
namespace {

struct Operands {
  Operands(int64_t m, int64_t k, int64_t n) : a(m * k), b(k * n), c(m * n) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
  }
  std::vector<float> a, b, c;
};

void SetFlops(benchmark::State& state, int64_t m, int64_t k, int64_t n) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * m * k * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void BM_Ember(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  SetNumThreads(static_cast<int>(state.range(3)));
  Operands x(m, k, n);
  for (auto _ : state) {
    Gemm(DType::kF32, m, k, n, {x.a.data(), k, 1}, {x.b.data(), n, 1}, x.c.data(), n, false);
    benchmark::DoNotOptimize(x.c.data());
  }
  SetFlops(state, m, k, n);
}

// A W^T with W [N, K] stored row-major: nn::Linear's forward, B read transposed.
void BM_EmberTransposedB(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  SetNumThreads(static_cast<int>(state.range(3)));
  Operands x(m, k, n);
  for (auto _ : state) {
    Gemm(DType::kF32, m, k, n, {x.a.data(), k, 1}, {x.b.data(), 1, k}, x.c.data(), n, false);
    benchmark::DoNotOptimize(x.c.data());
  }
  SetFlops(state, m, k, n);
}

// G^T X with G [K, M] stored row-major: nn::Linear's weight gradient (dW = dY^T X), A
// read transposed.
void BM_EmberTransposedA(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  SetNumThreads(static_cast<int>(state.range(3)));
  Operands x(m, k, n);
  for (auto _ : state) {
    Gemm(DType::kF32, m, k, n, {x.a.data(), 1, m}, {x.b.data(), n, 1}, x.c.data(), n, false);
    benchmark::DoNotOptimize(x.c.data());
  }
  SetFlops(state, m, k, n);
}

void BM_OpenBlas(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  openblas_set_num_threads(static_cast<int>(state.range(3)));
  Operands x(m, k, n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, x.a.data(), k, x.b.data(),
                n, 0.0f, x.c.data(), n);
    benchmark::DoNotOptimize(x.c.data());
  }
  SetFlops(state, m, k, n);
}

void BM_Eigen(benchmark::State& state) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  Eigen::setNbThreads(static_cast<int>(state.range(3)));
  Operands x(m, k, n);
  const Eigen::Map<const Matrix> a(x.a.data(), m, k), b(x.b.data(), k, n);
  Eigen::Map<Matrix> c(x.c.data(), m, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(x.c.data());
  }
  SetFlops(state, m, k, n);
}

void Shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "K", "N", "threads"});
  for (int threads : {1, 2}) {
    for (auto [m, k, n] : {std::tuple{256, 768, 768},
                           {256, 768, 3072},
                           {256, 3072, 768},
                           {256, 768, 50257},
                           {1024, 1024, 1024}}) {
      b->Args({m, k, n, threads});
    }
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);
}

BENCHMARK(BM_Ember)->Apply(Shapes);
BENCHMARK(BM_EmberTransposedB)->Apply(Shapes);
BENCHMARK(BM_EmberTransposedA)->Apply(Shapes);
BENCHMARK(BM_OpenBlas)->Apply(Shapes);
BENCHMARK(BM_Eigen)->Apply(Shapes);

}  // namespace
}  // namespace ember::kernels::cpu
