#ifndef EMBER_MODELS_GPT2_OPENAI_API_H_
#define EMBER_MODELS_GPT2_OPENAI_API_H_

// OpenAI's completions API as ember's server speaks it: the JSON bodies of
// POST /v1/completions and /v1/chat/completions parsed and checked, the chat template
// applied, and the replies written (whole, or as server-sent events' chunks). Only what
// OpenAI documents is read, and a field ember does not implement (logprobs, tools,
// penalties other than 0, ...) is refused by name, never silently ignored; every
// refusal is an InvalidArgument status whose message starts with the field's name.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tokenizer/encoding.h"

namespace ember::models::gpt2 {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct ApiRequest {
  bool chat = false;  // /v1/chat/completions, else /v1/completions
  std::string model;
  std::vector<ChatMessage> messages;  // chat
  std::string prompt;                 // completions
  int64_t max_tokens = 16;            // completions' default; chat's is ApiLimits::max_tokens
  double temperature = 1.0;
  double top_p = 1.0;
  int64_t n = 1;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with usage
  std::optional<int64_t> seed;
  std::vector<std::string> stop;
};

struct ApiLimits {
  int64_t max_tokens = 256;  // the largest max_tokens a request may ask, and chat's default
  int64_t max_n = 4;         // choices a request may ask
};

// Parses and checks a request's body (UTF-8 JSON).
absl::StatusOr<ApiRequest> ParseRequest(absl::string_view body, bool chat, const ApiLimits& limits);

// The prompt of a chat in chat's template (conversations.h): the first message's text
// and a newline when it is the system's (else <|endoftext|>), then "User: ...\nBot:" and
// " <reply>\n" turns; it ends with "Bot:" after the last message, which must be the
// user's. InvalidArgument naming what is out of order.
absl::StatusOr<std::vector<int64_t>> ChatPrompt(const std::vector<ChatMessage>& messages,
                                                const tokenizer::Encoding& encoding);

// Where a chat reply ends besides the request's stop strings: the next turn's marker.
const std::vector<std::string>& ChatTurnMarkers();

// One choice as it ended: its text and finish_reason ("stop" or "length").
struct ApiChoice {
  std::string text;
  std::string finish_reason;
  int64_t completion_tokens = 0;
};

// The whole reply: OpenAI's "text_completion" or "chat.completion" object with usage.
std::string ReplyJson(const ApiRequest& request, const std::string& id, int64_t created,
                      const std::vector<ApiChoice>& choices, int64_t prompt_tokens);

// One server-sent event of a streamed reply ("data: {...}\n\n"): choice `index`'s new
// text, its finish_reason when it ends (else empty), and for chat the first chunk's role
// (first). StreamUsage is the last chunk's usage (stream_options.include_usage), and
// StreamEnd the closing "data: [DONE]\n\n".
std::string StreamChunk(const ApiRequest& request, const std::string& id, int64_t created,
                        int64_t index, const std::string& text, const std::string& finish_reason,
                        bool first);
std::string StreamUsage(const ApiRequest& request, const std::string& id, int64_t created,
                        int64_t prompt_tokens, int64_t completion_tokens);
std::string StreamEnd();

// OpenAI's error object for a status: {"error": {"message", "type", "param", "code"}}, and
// the HTTP status it goes with (InvalidArgument 400, Unauthenticated 401, NotFound 404,
// DeadlineExceeded 408, ResourceExhausted 429, Unavailable 503, else 500).
std::string ErrorJson(const absl::Status& status);
int HttpStatus(const absl::Status& status);

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_OPENAI_API_H_
