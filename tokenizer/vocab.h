#ifndef EMBER_TOKENIZER_VOCAB_H_
#define EMBER_TOKENIZER_VOCAB_H_

// Vocabulary files: tiktoken's `.tiktoken` rank files and GPT-2's encoder.json +
// vocab.bpe. A malformed file is an InvalidArgument naming the file, the line and
// what was expected. A file larger than kMaxVocabFileBytes is refused before it is read,
// and ids past Encoding::kMaxId when the encoding is built.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tokenizer/encoding.h"

namespace ember::tokenizer {

// 256 MiB: the largest vocabulary file read (o200k_base.tiktoken is 3.6 MB).
inline constexpr int64_t kMaxVocabFileBytes = int64_t{256} << 20;

// Lines "<base64 of the token's bytes> <rank>".
absl::StatusOr<Ranks> LoadTiktokenRanks(const std::string& path);

// GPT-2's files as OpenAI published them: vocab.bpe ("#version" line, then one merge
// "A B" per line, rank 256 + line index) and encoder.json (token string -> id), both
// writing bytes through GPT-2's byte-to-unicode map. The ranks are rebuilt from
// vocab.bpe as tiktoken does (single bytes first, in the map's order) and every one
// is checked against encoder.json; `specials` gets the entries of encoder.json that are
// not mergeable tokens (<|endoftext|>).
absl::StatusOr<Ranks> LoadGpt2Ranks(const std::string& encoder_json_path,
                                    const std::string& vocab_bpe_path,
                                    absl::flat_hash_map<std::string, Rank>* specials);

// The gpt2 encoding from encoder.json and vocab.bpe in `dir`.
absl::StatusOr<Encoding> Gpt2Encoding(const std::string& dir);

// The encodings OpenAI's tiktoken defines, by name (tiktoken's get_encoding): gpt2,
// r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base, o200k_harmony. The patterns and special
// tokens are built in; the ranks are read from `dir`: encoder.json + vocab.bpe for
// gpt2, <name>.tiktoken for the others (p50k_edit shares p50k_base.tiktoken and
// o200k_harmony o200k_base.tiktoken). setup.sh
// puts all of them in downloads/tokenizer. An unknown name is an InvalidArgument that
// lists the known ones.
absl::StatusOr<Encoding> LoadEncoding(absl::string_view name, const std::string& dir);
const std::vector<std::string>& EncodingNames();

// GPT-2's byte-to-unicode map: the UTF-8 text of the character that stands for `byte`.
std::string ByteToUnicode(unsigned char byte);

}  // namespace ember::tokenizer

#endif  // EMBER_TOKENIZER_VOCAB_H_
