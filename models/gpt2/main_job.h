#ifndef EMBER_MODELS_GPT2_MAIN_JOB_H_
#define EMBER_MODELS_GPT2_MAIN_JOB_H_

// What `bazel run -c opt //models/gpt2:train` does without flags, the main job: its
// defaults on each device (MainJob), and its data (PrepareData): the Brown corpus,
// tokenized once into runs/data/ by a byte-level BPE learnt from its training split (or
// by GPT-2's vocabulary); or the token shards the flags name.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "data/shards.h"
#include "distributed/process_group.h"
#include "tokenizer/encoding.h"

namespace ember::models::gpt2 {

// The main job on each device: the defaults of the flags that shape the run. On 2 CPU
// cores, the demo model for 1,800 steps of 32 x 64 tokens (chosen from runs of equal
// time; docs/getting-started.md says which). A GPU has some hundred times that
// arithmetic, so there the model grows to nanoGPT's Shakespeare shape (the small preset:
// 6 layers x 384, 256 positions) with its batch (64 x 256), learning rate (1e-3 to 1e-4)
// and dropout (0.2): 2,000 steps see Brown's 1.4M training tokens about 24 times, which
// without dropout would overfit.
struct MainJob {
  const char* model;
  int64_t batch_size, seq_len, steps, warmup_steps;
  double lr, min_lr, dropout;
};
inline constexpr MainJob kCpuMainJob{"demo", 32, 64, 1800, 50, 6e-3, 6e-4, 0.0};
inline constexpr MainJob kGpuMainJob{"small", 64, 256, 2000, 100, 1e-3, 1e-4, 0.2};

// The data a run was asked for (train's --train_data, --val_data, --vocab and
// --vocab_size).
struct DataFlags {
  std::string train_data;     // a file or a glob of llm.c shards; "": the Brown corpus
  std::string val_data;       // a file or a glob, of which the first; "": Brown's
  std::string vocab;          // gpt2, brown, or a .tiktoken file; "": brown for Brown, else gpt2
  int64_t vocab_size = 8192;  // --vocab=brown's tokens, the 256 bytes included
};

// What a run trains on.
struct TrainingData {
  std::string vocab;  // gpt2, or the .tiktoken file's path (checkpoints record it)
  // The vocabulary, for the Brown corpus always; for shards of your own only for bits per
  // byte and the sample, so a GPT-2 vocabulary that is not installed leaves it out.
  std::optional<tokenizer::Encoding> encoding;
  std::string train_pattern;  // the flag, or the Brown shard made (or --conversations' file)
  std::vector<data::TokenShard> train;
  int64_t conversations = 0;  // with --conversations, how many (and no shards)
  std::optional<data::TokenShard> val;

  int64_t train_tokens() const;
};

// Opens what `flags` name. For the Brown corpus, rank 0 of `world` learns the vocabulary
// (runs/data/brown_bpe<size>.tiktoken) and tokenizes the corpus (runs/data/<vocab>_
// {train,val}.bin), each once, while the other ranks wait at a barrier. Errors name the
// flag or the file; a missing corpus says to run ./setup.sh.
absl::StatusOr<TrainingData> PrepareData(const DataFlags& flags, distributed::ProcessGroup& world);

// Bits per byte of a mean loss (nats per token) over the first `tokens` targets of the
// validation shard (positions 1 to tokens, as Trainer::ValidationLoss's windows): the
// loss in bits over the bytes of text those tokens stand for (a special token stands for
// none). NaN when they stand for no bytes.
double BitsPerByte(double loss, const data::TokenShard& val, int64_t tokens,
                   const tokenizer::Encoding& encoding);

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_MAIN_JOB_H_
