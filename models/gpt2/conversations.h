#ifndef EMBER_MODELS_GPT2_CONVERSATIONS_H_
#define EMBER_MODELS_GPT2_CONVERSATIONS_H_

// Conversations for fine-tuning a chatbot, in the format chat (chat.cc) talks in:
//
//   <system line>\n                  (or <|endoftext|> without one)
//   User: <question>\nBot: <reply>\n
//   User: <question>\nBot: <reply>\n ... <|endoftext|>
//
// A conversation file is JSON lines, one conversation a line, as the chat fine-tuning
// files of other tools are: {"messages": [{"role": "user", "content": "..."}, {"role":
// "assistant", "content": "..."}, ...]} (or the list alone), roles "system" (first, at
// most once), "user" and "assistant" (or "bot"), alternating from a user's turn.
//
// Fine-tuning learns the bot's turns only: a token is trained (its position is a target
// of the loss) when it is a reply's (" <reply>\n") or the closing <|endoftext|>; the
// system line and the users' turns are context, never targets.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tokenizer/encoding.h"

namespace ember::models::gpt2 {

// The template chat and the fine-tuning share: a user's turn and the bot's reply to it.
std::string UserTurn(absl::string_view question);  // "User: <question>\nBot:"
std::string BotTurn(absl::string_view reply);      // " <reply>\n"

struct Conversation {
  std::vector<int64_t> tokens;
  std::vector<uint8_t> trained;  // per token: 1 where it is a target (the bot's), else 0
};

// Reads and encodes every conversation of `path`. Errors name the file, the line and
// what is wrong (not JSON, an unknown role, turns out of order, no reply to learn).
absl::StatusOr<std::vector<Conversation>> ReadConversations(const std::string& path,
                                                            const tokenizer::Encoding& encoding);

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_CONVERSATIONS_H_
