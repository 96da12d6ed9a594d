// Autograd's per-op overhead: a tiny graph of 100 elementwise ops on 16-element
// tensors (so that the arithmetic is negligible), forward and backward.
//   bazel run -c opt //autograd:overhead_benchmark
// against the same graph in PyTorch 1.13:
//   OMP_NUM_THREADS=1 /usr/bin/python3 tools/reference/bench_torch_autograd.py

#include "autograd/elementwise.h"
#include "autograd/engine.h"
#include "autograd/reduce.h"
#include "benchmark/benchmark.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::autograd {
namespace {

constexpr int kRounds = 25;  // four ops each

void BM_TinyGraphForwardBackward(benchmark::State& state) {
  Generator gen(1);
  const Tensor x = SetRequiresGrad(Randn({16}, gen));
  const Tensor w = SetRequiresGrad(Randn({16}, gen));
  const Tensor b = SetRequiresGrad(Randn({16}, gen));
  for (auto _ : state) {
    Tensor y = x;
    for (int i = 0; i < kRounds; ++i) y = Tanh(y * w + b) - 0.5;
    Backward(Sum(y));
  }
  state.counters["us_per_op"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * (4 * kRounds + 1),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_TinyGraphForwardBackward)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ember::autograd
