// Tokenizes text into llm.c token shards (data/shards.h), a training and a validation
// shard, with a progress bar:
//
//   bazel run -c opt //tools/prepare_data -- --dataset=brown --encoding=gpt2 --out=/tmp/brown
//   bazel run -c opt //tools/prepare_data -- --input=a.txt,b.txt --encoding=char --out=/tmp/mine
//
// writes PREFIX_train.bin and PREFIX_val.bin (and, for --encoding=char, the character
// vocabulary as PREFIX_vocab.json). Each input file is a document (--dataset=brown: each
// of the corpus's 500 files, as plain text, data/datasets.h); with a BPE encoding every
// document is preceded by <|endoftext|>, as llm.c's data scripts do. With several
// documents, every k-th one (k = round(1 / --val_fraction)) goes to the validation
// shard; with fewer than k, the last --val_fraction of all the tokens does.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/cpus.h"
#include "base/main.h"
#include "base/status.h"
#include "data/datasets.h"
#include "data/prepare.h"
#include "data/shards.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/encoding.h"
#include "tokenizer/vocab.h"

ABSL_FLAG(std::string, input, "", "UTF-8 text files, comma-separated (each one document)");
ABSL_FLAG(std::string, dataset, "",
          "instead of --input: \"brown\" (the Brown corpus that ./setup.sh fetches)");
ABSL_FLAG(std::string, encoding, "gpt2",
          "a tiktoken encoding whose ids fit 16 bits (gpt2, r50k_base, p50k_base, p50k_edit) or "
          "\"char\"");
ABSL_FLAG(std::string, vocab_dir, "",
          "BPE vocabulary folder (default: the workspace's downloads/tokenizer)");
ABSL_FLAG(std::string, out, "", "output prefix: writes PREFIX_train.bin and PREFIX_val.bin");
ABSL_FLAG(double, val_fraction, 0.1, "share of the data for the validation shard, in (0, 0.5]");
ABSL_FLAG(int, threads, 0, "encoding threads (0: every core)");

namespace ember {
namespace {

using data::Document;

absl::StatusOr<std::vector<Document>> ReadDocuments() {
  const std::string dataset = absl::GetFlag(FLAGS_dataset), input = absl::GetFlag(FLAGS_input);
  if (dataset.empty() == input.empty())
    return absl::InvalidArgumentError("give one of --input and --dataset");
  std::vector<Document> docs;
  if (!dataset.empty()) {
    if (dataset != "brown")
      return absl::InvalidArgumentError(absl::StrCat("unknown --dataset=", dataset, " (brown)"));
    absl::StatusOr<std::vector<Document>> brown =
        data::BrownDocuments(WorkspacePath(data::kBrownDir));
    if (absl::IsNotFound(brown.status())) {
      return absl::NotFoundError(absl::StrCat(brown.status().message(), " (run ./setup.sh)"));
    }
    return brown;
  }
  for (absl::string_view path : absl::StrSplit(input, ',', absl::SkipEmpty())) {
    ASSIGN_OR_RETURN(std::string text, data::ReadUtf8File(std::string(path)));
    docs.push_back({std::string(path), std::move(text)});
  }
  return docs;
}

absl::Status Run() {
  const std::string out = absl::GetFlag(FLAGS_out);
  const double val_fraction = absl::GetFlag(FLAGS_val_fraction);
  if (out.empty()) return absl::InvalidArgumentError("--out=PREFIX is required");
  ASSIGN_OR_RETURN(std::vector<Document> docs, ReadDocuments());
  if (docs.empty()) return absl::InvalidArgumentError("no input");

  // Each document's ids, by BPE or characters.
  const std::string name = absl::GetFlag(FLAGS_encoding);
  data::EncodeFn encode;
  std::optional<tokenizer::Encoding> bpe;
  std::optional<tokenizer::CharTokenizer> chars;
  int64_t vocab_size;
  if (name == "char") {
    std::string all;
    for (const Document& d : docs) all += d.text;
    ASSIGN_OR_RETURN(tokenizer::CharTokenizer c, tokenizer::CharTokenizer::FromText(all));
    chars = std::move(c);
    vocab_size = static_cast<int64_t>(chars->size());
    encode = [&](const std::string& text) { return chars->Encode(text); };
  } else {
    std::string dir = absl::GetFlag(FLAGS_vocab_dir);
    if (dir.empty()) dir = WorkspacePath("downloads/tokenizer");
    ASSIGN_OR_RETURN(tokenizer::Encoding e, tokenizer::LoadEncoding(name, dir));
    bpe = std::move(e);
    vocab_size = bpe->n_vocab();
    const int n = absl::GetFlag(FLAGS_threads);
    const int threads = n > 0 ? n : AvailableCpus();
    encode = [&, threads](const std::string& text) { return bpe->EncodeOrdinary(text, threads); };
  }
  if (vocab_size > 65536) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " has ", vocab_size, " tokens; shards store 16-bit ids (at most 65536)"));
  }

  std::optional<uint16_t> separator;
  if (bpe) separator = static_cast<uint16_t>(bpe->specials().at("<|endoftext|>"));
  ASSIGN_OR_RETURN(
      const data::TokenSplit split,
      data::TokenizeDocuments(docs, encode, separator, val_fraction, data::ProgressBar()));
  const std::vector<uint16_t>& train = split.train;
  const std::vector<uint16_t>& val = split.val;
  for (const auto& [suffix, tokens] :
       {std::pair<const char*, const std::vector<uint16_t>*>{"_train.bin", &train},
        {"_val.bin", &val}}) {
    RETURN_IF_ERROR(data::WriteTokenShard(out + suffix, *tokens));
    std::fprintf(stderr, "wrote %s%s: %zu tokens\n", out.c_str(), suffix, tokens->size());
  }
  if (chars) {
    RETURN_IF_ERROR(chars->Save(out + "_vocab.json"));
    std::fprintf(stderr, "wrote %s_vocab.json: %zu characters\n", out.c_str(), chars->size());
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember

int main(int argc, char** argv) {
  return ember::RunMain(
      argc, argv, "prepare_data",
      "prepare_data --input=FILES|--dataset=brown --encoding=gpt2|char --out=PREFIX", ember::Run);
}
