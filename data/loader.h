#ifndef EMBER_DATA_LOADER_H_
#define EMBER_DATA_LOADER_H_

// Batches from a dataset of N examples, as torch.utils.data.DataLoader: an order per
// epoch (shuffled with a seed, the same on every machine, or 0..N-1), batches of
// batch_size examples (the last one smaller, or dropped), and background threads that
// prepare the next batches while the model works on this one.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tensor/tensor.h"

namespace ember::data {

struct Batch {
  Tensor x;
  Tensor y;
};

// Makes the batch of the examples with these indices (called from loader threads, so
// it must be safe to call concurrently).
using BatchFn = std::function<Batch(absl::Span<const int64_t> indices)>;

// The rows of x and y (same first dimension) at the indices, copied into new tensors.
BatchFn RowBatches(Tensor x, Tensor y);

struct LoaderOptions {
  int64_t batch_size = 32;
  bool shuffle = true;
  uint64_t seed = 0;
  bool drop_last = false;
  int prefetch = 2;  // batches made ahead by background threads; 0: made by Next() itself
  int workers = 1;   // background threads, when prefetch > 0
};

class DataLoader {
 public:
  // InvalidArgument for an empty dataset or a batch size below 1.
  static absl::StatusOr<std::unique_ptr<DataLoader>> Create(int64_t size, BatchFn fn,
                                                            LoaderOptions options);
  // Stops the background threads, also in the middle of an epoch.
  ~DataLoader();

  // Starts epoch `epoch` (its order depends on the seed and the epoch only) at batch
  // `first_batch` (to resume a run where it stopped).
  void StartEpoch(int64_t epoch, int64_t first_batch = 0);
  // The epoch's next batch, or nullopt when the epoch is over.
  std::optional<Batch> Next();

  int64_t batches_per_epoch() const { return batches_; }

  // Epoch `epoch`'s order of the examples: Fisher-Yates driven by a Philox generator
  // seeded from (seed, epoch), or 0..size-1 without shuffling.
  static std::vector<int64_t> Order(int64_t size, uint64_t seed, int64_t epoch, bool shuffle);

 private:
  DataLoader(int64_t size, BatchFn fn, LoaderOptions options);
  absl::Span<const int64_t> Indices(int64_t batch) const;
  void Work();

  const int64_t size_;
  const BatchFn fn_;
  const LoaderOptions options_;
  int64_t batches_;
  std::vector<int64_t> order_;

  std::mutex mu_;
  std::condition_variable cv_;
  int64_t generation_ = 0;    // bumped by StartEpoch: older results are dropped
  int64_t next_to_make_ = 0;  // the next batch a worker takes
  int64_t next_to_hand_ = 0;  // the next batch Next() returns
  std::map<int64_t, Batch> ready_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace ember::data

#endif  // EMBER_DATA_LOADER_H_
