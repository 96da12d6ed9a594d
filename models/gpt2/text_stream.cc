#include "models/gpt2/text_stream.h"

#include "absl/strings/string_view.h"

namespace ember::models::gpt2 {

std::string TextStream::Push(tokenizer::Rank token) {
  tokens_.push_back(token);
  bytes_ += encoding_.DecodeBytes({token}).value();
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

std::string TextStream::Text() const { return encoding_.Decode(tokens_).value(); }

}  // namespace ember::models::gpt2
