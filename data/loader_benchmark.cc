// Batches per second of the DataLoader, with and without background prefetch:
//   bazel run -c opt //data:loader_benchmark
// On Fashion-MNIST (60000 28x28 images, batch 64, shuffled) and on a token shard of 4M
// tokens (windows of 1024 + 1, batch 8, shuffled). The "work" variants have the consumer
// spend 1 ms per batch on a stand-in for the model step, which is where prefetching
// pays: the next batch is made meanwhile.

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "data/datasets.h"
#include "data/loader.h"
#include "data/shards.h"
#include "data/windows.h"
#include "tensor/random.h"

namespace ember::data {
namespace {

void Spin(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

void Run(benchmark::State& state, int64_t size, const BatchFn& fn, int64_t batch_size) {
  LoaderOptions options;
  options.batch_size = batch_size;
  options.prefetch = static_cast<int>(state.range(0));
  options.workers = static_cast<int>(state.range(1));
  const auto work = std::chrono::microseconds(state.range(2));
  absl::StatusOr<std::unique_ptr<DataLoader>> created = DataLoader::Create(size, fn, options);
  if (!created.ok()) {
    state.SkipWithError(std::string(created.status().message()).c_str());
    return;
  }
  const std::unique_ptr<DataLoader> loader = *std::move(created);
  int64_t epoch = 0, batches = 0;
  for (auto _ : state) {
    std::optional<Batch> b = loader->Next();
    if (!b) {
      loader->StartEpoch(++epoch);
      b = loader->Next();
    }
    benchmark::DoNotOptimize(b->x.raw_data());
    Spin(work);
    ++batches;
  }
  state.counters["batches/s"] =
      benchmark::Counter(static_cast<double>(batches), benchmark::Counter::kIsRate);
}

void BM_FashionMnist(benchmark::State& state) {
  static const absl::StatusOr<ImageSet>* set =
      new absl::StatusOr<ImageSet>(LoadMnist(kFashionMnistDir, Split::kTrain, ImageLayout::kNCHW));
  if (!set->ok()) {
    state.SkipWithError(std::string(set->status().message()).c_str());  // ./setup.sh installs it
    return;
  }
  Run(state, (*set)->images.shape()[0], RowBatches((*set)->images, (*set)->labels), 64);
}

void BM_TokenShard(benchmark::State& state) {
  static const absl::StatusOr<TokenShard>* shard = [] {
    std::vector<uint16_t> tokens(4 << 20);
    Generator gen(1);
    for (uint16_t& t : tokens) t = static_cast<uint16_t>(gen.NextBelow(50257));
    const std::string path = "/tmp/ember_loader_benchmark.bin";
    const absl::Status written = WriteTokenShard(path, tokens);
    return new absl::StatusOr<TokenShard>(written.ok() ? TokenShard::Open(path) : written);
  }();
  if (!shard->ok()) {
    state.SkipWithError(std::string(shard->status().message()).c_str());
    return;
  }
  Run(state, WindowCount(**shard, 1024), WindowBatches(**shard, 1024), 8);
}

// Args: prefetch, workers, consumer's work per batch (microseconds).
#define LOADER_ARGS                            \
  ArgNames({"prefetch", "workers", "work_us"}) \
      ->Args({0, 1, 0})                        \
      ->Args({2, 1, 0})                        \
      ->Args({4, 2, 0})                        \
      ->Args({0, 1, 1000})                     \
      ->Args({2, 1, 1000})                     \
      ->Args({4, 2, 1000})                     \
      ->UseRealTime()

BENCHMARK(BM_FashionMnist)->LOADER_ARGS;
BENCHMARK(BM_TokenShard)->LOADER_ARGS;

}  // namespace
}  // namespace ember::data

BENCHMARK_MAIN();
