#include "data/windows.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tensor/tensor.h"

namespace ember::data {
namespace {

// Row b of x and y from the T + 1 tokens at `start`.
void FillRow(const TokenShard& shard, int64_t start, int64_t block, int64_t b, Batch& out) {
  int64_t* x = out.x.data<int64_t>() + b * block;
  int64_t* y = out.y.data<int64_t>() + b * block;
  const uint16_t* t = shard.tokens() + start;
  for (int64_t i = 0; i < block; ++i) {
    x[i] = t[i];
    y[i] = t[i + 1];
  }
}

}  // namespace

absl::StatusOr<Batch> RandomWindows(const TokenShard& shard, int64_t batch, int64_t block,
                                    Generator& gen) {
  if (batch < 1 || block < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch ", batch, " and block ", block, " must be positive"));
  }
  if (shard.size() < block + 1) {
    return absl::InvalidArgumentError(absl::StrCat(shard.path(), " holds ", shard.size(),
                                                   " tokens, fewer than a window of ", block + 1));
  }
  Batch out{Empty({batch, block}, DType::kI64), Empty({batch, block}, DType::kI64)};
  const uint64_t starts = static_cast<uint64_t>(shard.size() - block);  // [0, size - T - 1]
  for (int64_t b = 0; b < batch; ++b)
    FillRow(shard, static_cast<int64_t>(gen.NextBelow(starts)), block, b, out);
  return out;
}

int64_t WindowCount(const TokenShard& shard, int64_t block) {
  return block < 1 ? 0 : std::max<int64_t>(0, (shard.size() - 1) / block);
}

BatchFn WindowBatches(const TokenShard& shard, int64_t block) {
  return [&shard, block](absl::Span<const int64_t> windows) {
    const int64_t n = static_cast<int64_t>(windows.size());
    Batch out{Empty({n, block}, DType::kI64), Empty({n, block}, DType::kI64)};
    for (int64_t b = 0; b < n; ++b) FillRow(shard, windows[b] * block, block, b, out);
    return out;
  };
}

Batch SequentialBatch(const TokenShard& shard, int64_t k, int64_t batch, int64_t block) {
  Batch out{Empty({batch, block}, DType::kI64), Empty({batch, block}, DType::kI64)};
  for (int64_t b = 0; b < batch; ++b) FillRow(shard, (k * batch + b) * block, block, b, out);
  return out;
}

}  // namespace ember::data
