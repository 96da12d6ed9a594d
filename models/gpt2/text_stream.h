#ifndef EMBER_MODELS_GPT2_TEXT_STREAM_H_
#define EMBER_MODELS_GPT2_TEXT_STREAM_H_

// Text of tokens as they arrive, for printing while generating: a token can end inside
// a UTF-8 character (GPT-2's byte-level BPE splits some characters across tokens), so
// the bytes of an unfinished character wait for the tokens that finish it.

#include <string>
#include <vector>

#include "tokenizer/encoding.h"

namespace ember::models::gpt2 {

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
