#ifndef EMBER_DATA_PREPARE_H_
#define EMBER_DATA_PREPARE_H_

// Documents to train/validation token streams for shards (tools/prepare_data, and the
// GPT-2 trainer's default data).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tokenizer/encoding.h"

namespace ember::data {

struct Document {
  std::string name;
  std::string text;
};

// The Brown corpus's 500 files as documents (BrownFiles / BrownFileText).
absl::StatusOr<std::vector<Document>> BrownDocuments(const std::string& dir);

struct TokenSplit {
  std::vector<uint16_t> train, val;
};

using EncodeFn = std::function<absl::StatusOr<std::vector<tokenizer::Rank>>(const std::string&)>;

// Whether TokenizeDocuments puts document i of `count` in the validation split (with at
// least k = round(1 / val_fraction) documents, every k-th; with fewer, none is whole:
// the last tokens are).
bool IsValidationDocument(size_t i, size_t count, double val_fraction);

// Each document encoded, after `separator` when given (llm.c puts <|endoftext|> before
// every document). With at least k = round(1 / val_fraction) documents, every k-th goes
// to val; with fewer, the last val_fraction of all the tokens. Ids must fit 16 bits.
// progress(bytes done, bytes in all) is called after each document.
absl::StatusOr<TokenSplit> TokenizeDocuments(
    const std::vector<Document>& docs, const EncodeFn& encode, std::optional<uint16_t> separator,
    double val_fraction, const std::function<void(size_t, size_t)>& progress = nullptr);

// "[########----------]  45%  2.8 / 6.1 MB  12.3 MB/s" on stderr, redrawn when the
// percentage changes on a terminal, written once at the end otherwise (a log); for
// TokenizeDocuments' progress.
std::function<void(size_t, size_t)> ProgressBar();

}  // namespace ember::data

#endif  // EMBER_DATA_PREPARE_H_
