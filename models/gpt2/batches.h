#ifndef EMBER_MODELS_GPT2_BATCHES_H_
#define EMBER_MODELS_GPT2_BATCHES_H_

// The training micro-batches of GPT-2's trainer (trainer.h), split over the data ranks:
// N ranks read exactly what one process of batch N B reads.
//
// - Token shards, llm.c's sequential order: global batch k of a shard is its tokens
//   [k B N T, (k + 1) B N T + 1), of which rank r takes rows [r B, (r + 1) B); the shards
//   follow one another (a shard's last partial batch skipped), back to the first after
//   the last.
// - Token shards, nanoGPT's random order: each global batch from one shard, drawn in
//   proportion to its windows (no draw for one shard), its N B windows drawn by every
//   rank from the same generator, each rank keeping its rows.
// - Conversations (conversations.h): each row one conversation (drawn at random, or in
//   the file's order when sequential), cut to T + 1 tokens or padded with its final
//   <|endoftext|>, the targets ignore_index (-100) but the bot's tokens.
//
// The position (micro-batches drawn, the generator's offset) goes into checkpoints, so
// that a resumed run reads what the uninterrupted one would have.

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/device.h"
#include "data/shards.h"
#include "models/gpt2/conversations.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::models::gpt2 {

class TrainingBatches {
 public:
  struct Options {
    int64_t batch_size = 1, seq_len = 1;  // B (per rank) and T
    int ranks = 1, rank = 0;              // N, and this rank's r
    bool sequential = false;
    uint64_t seed = 0;  // the random order's generator
  };
  // From token shards, or, when conversations is not null, from those. Both must outlive
  // this.
  TrainingBatches(std::vector<const data::TokenShard*> shards,
                  const std::vector<Conversation>* conversations, const Options& options);

  // Every shard (and `val`, unless null) holds a global batch, and every token of them
  // and of the conversations is in a vocabulary of vocab_size; InvalidArgument naming the
  // file or token otherwise.
  absl::Status Check(const data::TokenShard* val, int64_t vocab_size) const;

  // This rank's rows of the next global micro-batch: inputs and targets, i64 [B, T].
  std::pair<Tensor, Tensor> Next(Device device);

  // The position: global micro-batches drawn so far, and the generator's offset.
  int64_t drawn() const { return drawn_; }
  uint64_t generator_offset() const { return gen_.offset(); }
  void Seek(int64_t drawn, uint64_t generator_offset);

 private:
  std::pair<Tensor, Tensor> NextConversations();

  std::vector<const data::TokenShard*> shards_;
  const std::vector<Conversation>* conversations_;
  Options options_;
  Generator gen_;
  int64_t drawn_ = 0;
};

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_BATCHES_H_
