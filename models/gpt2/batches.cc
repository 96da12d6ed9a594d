#include "models/gpt2/batches.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "base/status.h"
#include "data/windows.h"
#include "tensor/creation.h"

namespace ember::models::gpt2 {

TrainingBatches::TrainingBatches(std::vector<const data::TokenShard*> shards,
                                 const std::vector<Conversation>* conversations,
                                 const Options& options)
    : shards_(std::move(shards)),
      conversations_(conversations),
      options_(options),
      gen_(options.seed) {}

absl::Status TrainingBatches::Check(const data::TokenShard* val, int64_t vocab_size) const {
  const int64_t b = options_.batch_size, t = options_.seq_len, n = options_.ranks;
  std::vector<const data::TokenShard*> shards = shards_;
  shards.push_back(val);
  for (const data::TokenShard* shard : shards) {
    if (shard == nullptr) continue;
    if (shard->size() < n * b * t + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(shard->path(), " holds ", shard->size(), " tokens, fewer than one batch of ",
                       n > 1 ? absl::StrCat(n, " x ") : "", b, " x ", t, " needs"));
    }
    RETURN_IF_ERROR(shard->CheckVocabulary(vocab_size));
  }
  if (conversations_ == nullptr) return absl::OkStatus();
  for (const Conversation& c : *conversations_) {
    for (const int64_t token : c.tokens) {
      if (token < 0 || token >= vocab_size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "a conversation's token ", token, " is beyond the model's vocabulary of ", vocab_size,
            " (the conversations must be encoded with the model's tokenizer)"));
      }
    }
  }
  return absl::OkStatus();
}

void TrainingBatches::Seek(int64_t drawn, uint64_t generator_offset) {
  drawn_ = drawn;
  gen_.set_offset(generator_offset);
}

std::pair<Tensor, Tensor> TrainingBatches::NextConversations() {
  const int64_t b = options_.batch_size, t = options_.seq_len, n = options_.ranks,
                r = options_.rank;
  const int64_t count = static_cast<int64_t>(conversations_->size());
  Tensor x = Empty({b, t}, DType::kI64), y = Empty({b, t}, DType::kI64);
  int64_t* xs = x.data<int64_t>();
  int64_t* ys = y.data<int64_t>();
  // Every rank draws the global batch's rows and keeps its own.
  for (int64_t row = 0; row < n * b; ++row) {
    const int64_t pick = options_.sequential
                             ? (drawn_ * n * b + row) % count
                             : static_cast<int64_t>(gen_.NextBelow(static_cast<uint64_t>(count)));
    if (row / b != r) continue;
    const Conversation& c = (*conversations_)[pick];
    const int64_t length = static_cast<int64_t>(c.tokens.size());
    const int64_t pad = c.tokens.back();  // <|endoftext|>, which every conversation ends with
    for (int64_t i = 0; i < t; ++i) {
      xs[(row % b) * t + i] = i < length ? c.tokens[i] : pad;
      ys[(row % b) * t + i] = i + 1 < length && c.trained[i + 1] ? c.tokens[i + 1] : -100;
    }
  }
  ++drawn_;
  return {x, y};
}

std::pair<Tensor, Tensor> TrainingBatches::Next(Device device) {
  if (conversations_ != nullptr) {
    const auto [x, y] = NextConversations();
    return {x.To(device), y.To(device)};
  }
  const int64_t b = options_.batch_size, t = options_.seq_len, n = options_.ranks,
                r = options_.rank;
  EMBER_CHECK(!shards_.empty(), "Trainer: no training shard");
  if (options_.sequential) {
    int64_t total = 0;
    for (const data::TokenShard* shard : shards_) total += data::WindowCount(*shard, t) / (b * n);
    int64_t k = drawn_ % total;
    size_t s = 0;
    while (k >= data::WindowCount(*shards_[s], t) / (b * n))
      k -= data::WindowCount(*shards_[s++], t) / (b * n);
    ++drawn_;
    const data::Batch batch = data::SequentialBatch(*shards_[s], k * n + r, b, t);
    return {batch.x.To(device), batch.y.To(device)};
  }
  size_t s = 0;
  if (shards_.size() > 1) {
    int64_t total = 0;
    for (const data::TokenShard* shard : shards_) total += data::WindowCount(*shard, t);
    int64_t pick = static_cast<int64_t>(gen_.NextBelow(static_cast<uint64_t>(total)));
    while (pick >= data::WindowCount(*shards_[s], t)) pick -= data::WindowCount(*shards_[s++], t);
  }
  // Check() found a window in every shard, so this fails only on a broken invariant.
  absl::StatusOr<data::Batch> batch = data::RandomWindows(*shards_[s], b * n, t, gen_);
  EMBER_CHECK(batch.ok(), "train: ", batch.status().message());
  ++drawn_;
  return {batch->x.Narrow(0, r * b, b).To(device), batch->y.Narrow(0, r * b, b).To(device)};
}

}  // namespace ember::models::gpt2
