#include "token_lengths.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensor/creation.h"
#include "tokenizer/tokenizer.h"

absl::StatusOr<ember::Tensor> TokenLengths(absl::string_view text, size_t vocab_size) {
  ember::tokenizer::TrainerOptions options;
  options.vocab_size = vocab_size;
  absl::StatusOr<ember::tokenizer::Ranks> ranks = ember::tokenizer::TrainBpe(text, options);
  if (!ranks.ok()) return ranks.status();
  absl::StatusOr<ember::tokenizer::Encoding> encoding = ember::tokenizer::Encoding::Create(
      "learnt", ember::tokenizer::kGpt2Pattern, *std::move(ranks), /*special_tokens=*/{});
  if (!encoding.ok()) return encoding.status();
  absl::StatusOr<std::vector<ember::tokenizer::Rank>> ids = encoding->EncodeOrdinary(text);
  if (!ids.ok()) return ids.status();
  std::vector<int64_t> lengths;
  lengths.reserve(ids->size());
  for (const ember::tokenizer::Rank id : *ids) {
    absl::StatusOr<std::string> bytes = encoding->DecodeBytes({id});
    if (!bytes.ok()) return bytes.status();
    lengths.push_back(static_cast<int64_t>(bytes->size()));
  }
  return ember::FromVector(lengths);
}
