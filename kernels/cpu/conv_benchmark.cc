// Convolution at the shapes of a small Fashion-MNIST CNN (batch 64):
//   bazel run -c opt //kernels/cpu:conv_benchmark
// tools/reference/bench_torch_conv.py times PyTorch on the same shapes.

#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/conv.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

std::vector<float> Random(int64_t n) {
  std::mt19937 rng(3);
  return RandomVector<float>(n, -1, 1, rng);
}

// Args: batch, in channels, out channels, size (square images, 3x3 kernel, padding 1).
struct Case {
  int64_t n, c, o, size;
  Window2d window;
  explicit Case(const benchmark::State& state)
      : n(state.range(0)),
        c(state.range(1)),
        o(state.range(2)),
        size(state.range(3)),
        window{size, size, 3, 3, 1, 1, 1, 1} {}
  int64_t flops() const { return 2 * n * o * c * 9 * size * size; }  // one GEMM's worth
};

void BM_Conv2dForward(benchmark::State& state) {
  const Case k(state);
  const std::vector<float> x = Random(k.n * k.c * k.size * k.size), w = Random(k.o * k.c * 9),
                           b = Random(k.o);
  std::vector<float> y(k.n * k.o * k.size * k.size);
  for (auto _ : state) {
    Conv2dForward(DType::kF32, k.n, k.c, k.o, k.window, x.data(), w.data(), b.data(), y.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      static_cast<double>(k.flops()) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void BM_Conv2dBackward(benchmark::State& state) {
  const Case k(state);
  const std::vector<float> x = Random(k.n * k.c * k.size * k.size), w = Random(k.o * k.c * 9),
                           dy = Random(k.n * k.o * k.size * k.size);
  std::vector<float> dx(x.size()), dw(w.size()), db(k.o);
  for (auto _ : state) {
    Conv2dBackward(DType::kF32, k.n, k.c, k.o, k.window, x.data(), w.data(), dy.data(), dx.data(),
                   dw.data(), db.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * k.flops() * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void CnnShapes(benchmark::internal::Benchmark* b) {
  b->Args({64, 1, 32, 28})->Args({64, 32, 64, 14})->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Conv2dForward)->Apply(CnnShapes);
BENCHMARK(BM_Conv2dBackward)->Apply(CnnShapes);

}  // namespace
}  // namespace ember::kernels::cpu
