// Max pooling at the shapes of a small Fashion-MNIST CNN (batch 64):
//   bazel run -c opt //kernels/cpu:pool_benchmark
// tools/reference/bench_torch_conv.py times PyTorch on the same shapes.

#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/pool.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

// Args: batch, channels, size; 2x2 windows, stride 2.
void BM_MaxPool2dForwardBackward(benchmark::State& state) {
  const int64_t planes = state.range(0) * state.range(1), size = state.range(2);
  const Window2d window{size, size, 2, 2, 2, 2};
  std::mt19937 rng(3);
  const std::vector<float> x = RandomVector<float>(planes * size * size, -1, 1, rng);
  const int64_t outs = planes * window.out_h() * window.out_w();
  std::vector<float> y(outs), dx(x.size());
  std::vector<int64_t> argmax(outs);
  for (auto _ : state) {
    MaxPool2dForward(DType::kF32, planes, window, x.data(), y.data(), argmax.data());
    MaxPool2dBackward(DType::kF32, planes, window, argmax.data(), y.data(), dx.data());
  }
}

BENCHMARK(BM_MaxPool2dForwardBackward)
    ->Args({64, 32, 28})
    ->Args({64, 64, 14})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ember::kernels::cpu
