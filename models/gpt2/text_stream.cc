#include "models/gpt2/text_stream.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/error.h"
#include "base/status.h"
#include "models/common/run_log.h"
#include "models/gpt2/weights.h"
#include "tokenizer/vocab.h"

namespace ember::models::gpt2 {

absl::StatusOr<tokenizer::Encoding> LoadVocab(const std::string& vocab) {
  if (vocab == "gpt2") {
    absl::StatusOr<tokenizer::Encoding> gpt2 =
        tokenizer::LoadEncoding("gpt2", WorkspacePath("downloads/tokenizer"));
    if (!gpt2.ok()) return MissingInput(gpt2.status());
    return gpt2;
  }
  ASSIGN_OR_RETURN(tokenizer::Ranks ranks, tokenizer::LoadTiktokenRanks(vocab));
  tokenizer::Rank next = 0;
  for (const auto& [bytes, rank] : ranks) next = std::max(next, rank + 1);
  return tokenizer::Encoding::Create(vocab, tokenizer::kGpt2Pattern, std::move(ranks),
                                     {{"<|endoftext|>", next}});
}

absl::StatusOr<TextModel> LoadTextModel(const std::string& path) {
  ASSIGN_OR_RETURN(Weights weights, ReadWeights(path));
  const auto named = weights.metadata.find("vocab");
  const std::string vocab = named != weights.metadata.end() ? named->second : "gpt2";
  ASSIGN_OR_RETURN(std::unique_ptr<GPT> model, GptFromWeights(std::move(weights), path));
  if (vocab == "gpt2" && model->config().vocab_size != 50257) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " has a vocabulary of ", model->config().vocab_size,
                     " tokens, not GPT-2's 50257, and names no other"));
  }
  ASSIGN_OR_RETURN(tokenizer::Encoding encoding, LoadVocab(vocab));
  if (encoding.n_vocab() != model->config().vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(path, " has ", model->config().vocab_size,
                                                   " tokens, its vocabulary ", vocab, " ",
                                                   encoding.n_vocab()));
  }
  return TextModel{std::move(model), std::move(encoding)};
}

std::string TextStream::Push(tokenizer::Rank token) {
  tokens_.push_back(token);
  absl::StatusOr<std::string> bytes = encoding_.DecodeBytes({token});
  EMBER_CHECK(bytes.ok(), "generate: ", bytes.status().message());
  bytes_ += *bytes;
  const absl::string_view pending = absl::string_view(bytes_).substr(shown_);
  // Invalid bytes within the last three may be a character still arriving: they wait.
  // Earlier ones can never become valid and go out as they are.
  const int64_t bad = tokenizer::FirstInvalidUtf8(pending);
  size_t ready = pending.size();
  if (bad >= 0 && pending.size() - static_cast<size_t>(bad) < 4) ready = static_cast<size_t>(bad);
  shown_ += ready;
  return std::string(pending.substr(0, ready));
}

std::string TextStream::Finish() {
  std::string rest = bytes_.substr(shown_);
  shown_ = bytes_.size();
  return rest;
}

std::string TextStream::Text() const {
  absl::StatusOr<std::string> text = encoding_.Decode(tokens_);
  EMBER_CHECK(text.ok(), "generate: ", text.status().message());
  return *std::move(text);
}

}  // namespace ember::models::gpt2
