#ifndef EMBER_TOOLS_TOKENIZE_REQUESTS_H_
#define EMBER_TOOLS_TOKENIZE_REQUESTS_H_

// What the tokenize tool answers, apart from its flags and files: special tokens
// allowed, encoding with them, and its --jsonl requests (a fuzz target reads these).

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "tokenizer/encoding.h"

namespace ember::tokenizer {

using Allowed = absl::flat_hash_set<std::string>;

// "all", "" or a comma-separated list (as a JSON string), or a JSON list of names, each
// checked against the encoding's special tokens.
absl::StatusOr<Allowed> ParseAllowed(const Encoding& e, const nlohmann::json& spec);

// tiktoken's encode (special-token text allowed, else an error), or with `ordinary`
// encode_ordinary.
absl::StatusOr<std::vector<Rank>> EncodeText(const Encoding& e, absl::string_view text,
                                             bool ordinary, const Allowed& allowed, int threads);

// The bytes as lowercase hex.
std::string Hex(absl::string_view bytes);

// One --jsonl request line -> its answer: encode {"text": "...", "allowed_special": ...}
// -> {"ids": [...]}, decode {"ids": [...]} -> {"hex": "..."}, and anything wrong ->
// {"error": "..."}. Never throws.
nlohmann::json AnswerLine(const Encoding& e, bool encode, bool ordinary, const std::string& line,
                          const Allowed& flag_allowed);

}  // namespace ember::tokenizer

#endif  // EMBER_TOOLS_TOKENIZE_REQUESTS_H_
