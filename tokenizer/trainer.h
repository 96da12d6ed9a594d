#ifndef EMBER_TOKENIZER_TRAINER_H_
#define EMBER_TOKENIZER_TRAINER_H_

// Learns a byte-level BPE vocabulary from text, as GPT-2's was made: the text is split
// by a pattern into pieces, pieces start as single bytes, and the most frequent adjacent
// pair of tokens (counted over all pieces, a piece as often as it occurs) becomes a new
// token, again and again. The result is a tiktoken rank table: ranks 0-255 are the single
// bytes in GPT-2's byte-to-unicode order (so the GPT-2 files describe the same ids),
// then each merge's token in the order learnt.
//
// Deterministic: among pairs of equal count the one with the smaller (left id, right id)
// wins. Pair counts are kept up to date incrementally (only the pieces that hold the
// merged pair are recounted), with a lazy max-heap to find the next pair.

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tokenizer/encoding.h"
#include "tokenizer/vocab.h"

namespace ember::tokenizer {

struct TrainerOptions {
  // Mergeable tokens wanted, the 256 single bytes included. Training stops early, with
  // a smaller vocabulary, when every piece has become one token.
  size_t vocab_size = 0;
  std::string pattern = kGpt2Pattern;  // tiktoken's pat_str
  // Called after each merge with (merges done, merges wanted).
  std::function<void(size_t, size_t)> progress;
};

// InvalidArgument for vocab_size < 256, a pattern the pretokenizer refuses, or text
// that is not UTF-8.
absl::StatusOr<Ranks> TrainBpe(absl::string_view text, const TrainerOptions& options);

// A .tiktoken file: "<base64 token> <rank>" per line, in rank order.
absl::Status WriteTiktokenRanks(const Ranks& ranks, const std::string& path);

// GPT-2's encoder.json and vocab.bpe for `ranks`, which must hold the single bytes at
// ranks 0-255 in GPT-2's byte order and then consecutive ranks, each token the merge of
// two tokens of lower rank (as every OpenAI vocabulary and TrainBpe's are). vocab.bpe
// gets the merge that BPE with the lower ranks makes of each token; encoder.json also
// maps <|endoftext|> to the rank after the last, as GPT-2's does. LoadGpt2Ranks reads
// them back to `ranks`.
absl::Status WriteGpt2Files(const Ranks& ranks, const std::string& encoder_json_path,
                            const std::string& vocab_bpe_path);

}  // namespace ember::tokenizer

#endif  // EMBER_TOKENIZER_TRAINER_H_
