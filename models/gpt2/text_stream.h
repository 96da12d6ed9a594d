#ifndef EMBER_MODELS_GPT2_TEXT_STREAM_H_
#define EMBER_MODELS_GPT2_TEXT_STREAM_H_

// What the text binaries (generate, chat) share: a GPT-2 with its tokenizer, and the
// text of tokens as they arrive.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/gpt2/model.h"
#include "tokenizer/encoding.h"

namespace ember::models::gpt2 {

// A model's tokenizer by name: "gpt2" (from the workspace's downloads/tokenizer, which
// ./setup.sh fills), or a .tiktoken file's ranks (such as the train binary's Brown BPE)
// with GPT-2's pattern and <|endoftext|> after the last rank.
absl::StatusOr<tokenizer::Encoding> LoadVocab(const std::string& vocab);

// The model at `path` (weights.h's formats) and its tokenizer: the one an ember
// checkpoint names (its "vocab" metadata), else GPT-2's for a model of 50,257 tokens.
struct TextModel {
  std::unique_ptr<GPT> model;
  tokenizer::Encoding encoding;
};
absl::StatusOr<TextModel> LoadTextModel(const std::string& path);

// Text of tokens as they arrive, for printing while generating: a token can end inside
// a UTF-8 character (GPT-2's byte-level BPE splits some characters across tokens), so
// the bytes of an unfinished character wait for the tokens that finish it.
class TextStream {
 public:
  explicit TextStream(const tokenizer::Encoding& encoding) : encoding_(encoding) {}
  // Adds a token; returns the text that is now complete and not yet returned.
  std::string Push(tokenizer::Rank token);
  // The bytes still held back (an unfinished character at the end), as they are.
  std::string Finish();
  // Everything so far, as valid UTF-8.
  std::string Text() const;

 private:
  const tokenizer::Encoding& encoding_;
  std::vector<tokenizer::Rank> tokens_;
  std::string bytes_;
  size_t shown_ = 0;  // bytes_[0, shown_) has been returned
};

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_TEXT_STREAM_H_
