#ifndef EMBER_DATA_WINDOWS_H_
#define EMBER_DATA_WINDOWS_H_

// Next-token training examples from a token shard: windows of T + 1 tokens, inputs the
// first T and targets the last T (the inputs shifted by one).

#include <cstdint>

#include "absl/status/statusor.h"
#include "data/loader.h"
#include "data/shards.h"
#include "tensor/random.h"

namespace ember::data {

// B windows at starts drawn uniformly from [0, size - T - 1] by `gen` (so the same seed
// gives the same batches on every machine); x and y are i64 [B, T]. InvalidArgument if
// the shard is shorter than T + 1 tokens.
absl::StatusOr<Batch> RandomWindows(const TokenShard& shard, int64_t batch, int64_t block,
                                    Generator& gen);

// The shard as consecutive windows: window i is tokens [i·T, i·T + T], so there are
// (size - 1) / T of them; for a DataLoader. Without shuffling, batch k of B windows reads
// tokens [k·B·T, (k+1)·B·T + 1), as llm.c's sequential loader does. `shard` must outlive
// the function.
int64_t WindowCount(const TokenShard& shard, int64_t block);
BatchFn WindowBatches(const TokenShard& shard, int64_t block);

// Batch k of B consecutive windows (windows kB .. kB+B-1): llm.c's batch k.
Batch SequentialBatch(const TokenShard& shard, int64_t k, int64_t batch, int64_t block);

}  // namespace ember::data

#endif  // EMBER_DATA_WINDOWS_H_
