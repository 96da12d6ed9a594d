#ifndef CONSUMER_TOKEN_LENGTHS_H_
#define CONSUMER_TOKEN_LENGTHS_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tensor/tensor.h"

// The length in bytes of each token of `text` under a byte-level BPE of `vocab_size`
// tokens learnt from the text itself (@ember//tokenizer), as an i64 tensor [tokens]
// (@ember//tensor). InvalidArgument for a vocabulary below the 256 single bytes or text
// that is not UTF-8.
absl::StatusOr<ember::Tensor> TokenLengths(absl::string_view text, size_t vocab_size);

#endif  // CONSUMER_TOKEN_LENGTHS_H_
