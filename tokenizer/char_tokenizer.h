#ifndef EMBER_TOKENIZER_CHAR_TOKENIZER_H_
#define EMBER_TOKENIZER_CHAR_TOKENIZER_H_

// A character-level vocabulary, as the character language models use: one token per
// distinct Unicode character (code point) of a text, ids in code point order (Python's
// sorted(set(text))), or in an order given explicitly (makemore puts its '.' boundary
// marker first).

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tokenizer/encoding.h"

namespace ember::tokenizer {

class CharTokenizer {
 public:
  // The distinct characters of `text` (valid UTF-8, not empty), in code point order.
  static absl::StatusOr<CharTokenizer> FromText(absl::string_view text);
  // Id i is chars[i]; each must be one UTF-8 character, none twice.
  static absl::StatusOr<CharTokenizer> FromChars(std::vector<std::string> chars);

  size_t size() const { return chars_.size(); }
  const std::vector<std::string>& chars() const { return chars_; }

  // A character outside the vocabulary is an InvalidArgument naming it and its byte.
  absl::StatusOr<std::vector<Rank>> Encode(absl::string_view text) const;
  // An id outside the vocabulary is an InvalidArgument.
  absl::StatusOr<std::string> Decode(const std::vector<Rank>& ids) const;

  // The vocabulary as a JSON array of the characters, in id order.
  absl::Status Save(const std::string& path) const;
  static absl::StatusOr<CharTokenizer> Load(const std::string& path);

 private:
  explicit CharTokenizer(std::vector<std::string> chars);

  std::vector<std::string> chars_;
  absl::flat_hash_map<std::string, Rank> ids_;
};

}  // namespace ember::tokenizer

#endif  // EMBER_TOKENIZER_CHAR_TOKENIZER_H_
