#include "models/gpt2/main_job.h"

#include <glob.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/atomic_file.h"
#include "base/cpus.h"
#include "base/main.h"
#include "base/status.h"
#include "data/datasets.h"
#include "data/prepare.h"
#include "models/common/run_log.h"
#include "models/gpt2/text_stream.h"
#include "tokenizer/trainer.h"
#include "tokenizer/vocab.h"

namespace ember::models::gpt2 {
namespace {

// The Brown corpus's share of validation documents (every tenth).
constexpr double kValFraction = 0.1;

// A byte-level BPE of `size` tokens learnt from the documents of the Brown corpus's
// training split (every one TokenizeDocuments does not hold out for validation, so the
// vocabulary has not seen the validation text) into `path`, once.
absl::Status EnsureBrownVocab(const std::vector<data::Document>& docs, int64_t size,
                              const std::string& path) {
  if (std::filesystem::exists(path)) return absl::OkStatus();
  std::string text;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (!data::IsValidationDocument(i, docs.size(), kValFraction)) text += docs[i].text;
  }
  std::fprintf(stderr,
               "train: learning a %lld-token BPE from the Brown corpus's training split into %s "
               "(once)\n",
               static_cast<long long>(size), path.c_str());
  tokenizer::TrainerOptions options;
  options.vocab_size = static_cast<size_t>(size);
  ASSIGN_OR_RETURN(const tokenizer::Ranks ranks, tokenizer::TrainBpe(text, options));
  RETURN_IF_ERROR(CreateDirectories(std::filesystem::path(path).parent_path().string()));
  return tokenizer::WriteTiktokenRanks(ranks, path);
}

// The Brown corpus in `encoding`'s tokens, tokenized once into `train` and `val`.
absl::Status EnsureBrownShards(const std::vector<data::Document>& docs,
                               const tokenizer::Encoding& encoding, const std::string& train,
                               const std::string& val) {
  if (std::filesystem::exists(train) && std::filesystem::exists(val)) return absl::OkStatus();
  std::fprintf(stderr, "train: tokenizing the Brown corpus with %s into %s (once)\n",
               encoding.name().c_str(), train.c_str());
  const int threads = AvailableCpus();
  ASSIGN_OR_RETURN(
      data::TokenSplit split,
      data::TokenizeDocuments(
          docs, [&](const std::string& text) { return encoding.EncodeOrdinary(text, threads); },
          static_cast<uint16_t>(encoding.specials().at("<|endoftext|>")), kValFraction,
          data::ProgressBar()));
  RETURN_IF_ERROR(CreateDirectories(std::filesystem::path(train).parent_path().string()));
  RETURN_IF_ERROR(data::WriteTokenShard(train, split.train));
  return data::WriteTokenShard(val, split.val);
}

// The files `pattern` names: itself, or the sorted matches of a glob (* ? [...]).
absl::StatusOr<std::vector<std::string>> Expand(const std::string& flag,
                                                const std::string& pattern) {
  if (pattern.find_first_of("*?[") == std::string::npos) return std::vector<std::string>{pattern};
  glob_t matches;
  const int rc = glob(pattern.c_str(), 0, nullptr, &matches);
  std::vector<std::string> paths;
  for (size_t i = 0; rc == 0 && i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
  globfree(&matches);
  if (paths.empty()) {
    return absl::NotFoundError(absl::StrCat("--", flag, "=", pattern, " matches no file"));
  }
  return paths;
}

}  // namespace

int64_t TrainingData::train_tokens() const {
  int64_t tokens = 0;
  for (const data::TokenShard& shard : train) tokens += shard.size();
  return tokens;
}

absl::StatusOr<TrainingData> PrepareData(const DataFlags& flags, distributed::ProcessGroup& world) {
  const bool lead = world.rank() == 0;
  TrainingData data;
  data.train_pattern = flags.train_data;
  std::string val_pattern = flags.val_data;
  data.vocab = flags.vocab.empty() ? (flags.train_data.empty() ? "brown" : "gpt2") : flags.vocab;
  std::optional<std::vector<data::Document>> brown;
  if (flags.train_data.empty() || data.vocab == "brown") {
    absl::StatusOr<std::vector<data::Document>> docs =
        data::BrownDocuments(WorkspacePath(data::kBrownDir));
    if (!docs.ok()) return MissingInput(docs.status());
    brown = *std::move(docs);
  }
  if (data.vocab == "brown") {  // rank 0 learns it; the others wait and read it
    const std::string path =
        WorkspacePath(absl::StrCat("runs/data/brown_bpe", flags.vocab_size, ".tiktoken"));
    if (lead) RETURN_IF_ERROR(EnsureBrownVocab(*brown, flags.vocab_size, path));
    world.Barrier();
    data.vocab = path;
  }
  if (absl::StatusOr<tokenizer::Encoding> e = LoadVocab(data.vocab); e.ok()) {
    data.encoding = *std::move(e);
  } else if (flags.train_data.empty() || !flags.vocab.empty()) {
    return e.status();
  } else if (lead) {
    std::fprintf(stderr, "train: %s; no bits per byte or sample\n",
                 std::string(e.status().message()).c_str());
  }
  if (flags.train_data.empty()) {
    // runs/data/brown_gpt2_*.bin, or the vocabulary's own name: brown_bpe8192_*.bin
    const std::string prefix = WorkspacePath(absl::StrCat(
        "runs/data/",
        data.vocab == "gpt2" ? "brown_gpt2" : std::filesystem::path(data.vocab).stem().string()));
    data.train_pattern = prefix + "_train.bin";
    if (val_pattern.empty()) val_pattern = prefix + "_val.bin";
    if (lead) {
      RETURN_IF_ERROR(EnsureBrownShards(*brown, *data.encoding, data.train_pattern, val_pattern));
    }
    world.Barrier();  // the others read what rank 0 made
  }
  ASSIGN_OR_RETURN(const std::vector<std::string> train_paths,
                   Expand("train_data", data.train_pattern));
  for (const std::string& path : train_paths) {
    ASSIGN_OR_RETURN(data::TokenShard shard, data::TokenShard::Open(path));
    data.train.push_back(std::move(shard));
  }
  if (!val_pattern.empty()) {
    ASSIGN_OR_RETURN(const std::vector<std::string> val_paths, Expand("val_data", val_pattern));
    ASSIGN_OR_RETURN(data::TokenShard val, data::TokenShard::Open(val_paths.front()));
    data.val = std::move(val);
  }
  return data;
}

double BitsPerByte(double loss, const data::TokenShard& val, int64_t tokens,
                   const tokenizer::Encoding& encoding) {
  int64_t bytes = 0;
  for (int64_t i = 1; i <= tokens && i < val.size(); ++i) {
    const absl::StatusOr<std::string> text = encoding.DecodeBytes({val.tokens()[i]});
    if (text.ok() && !encoding.specials().contains(*text)) {
      bytes += static_cast<int64_t>(text->size());
    }
  }
  return bytes > 0 ? loss * static_cast<double>(tokens) / std::log(2.0) / static_cast<double>(bytes)
                   : std::nan("");
}

}  // namespace ember::models::gpt2
