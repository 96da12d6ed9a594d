#include "models/gpt2/openai_api.h"

#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "models/gpt2/conversations.h"
#include "nlohmann/json.hpp"

namespace ember::models::gpt2 {
namespace {

using nlohmann::json;

absl::Status Bad(absl::string_view field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

// Whether a field is absent in effect: OpenAI's clients send null for "not given".
bool Given(const json& body, const char* field) {
  return body.contains(field) && !body.at(field).is_null();
}

absl::StatusOr<int64_t> Integer(const json& v, absl::string_view field, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return Bad(field, "expected an integer");
  if (v.is_number_unsigned() &&
      v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Bad(field, "out of range");
  }
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) return Bad(field, absl::StrCat("expected ", lo, " to ", hi, ", got ", x));
  return x;
}

// A number in [lo, hi] (or (lo, hi] when `above_lo`).
absl::StatusOr<double> Number(const json& v, absl::string_view field, double lo, double hi,
                              bool above_lo = false) {
  if (!v.is_number()) return Bad(field, "expected a number");
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi || (above_lo && x == lo)) {
    return Bad(field, absl::StrCat("expected ", above_lo ? "above " : "", lo, " to ", hi, ", got ",
                                   v.dump()));
  }
  return x;
}

absl::StatusOr<std::string> String(const json& v, absl::string_view field) {
  if (!v.is_string()) return Bad(field, "expected a string");
  return v.get<std::string>();
}

// A field ember accepts only at its neutral value (what changes nothing), by name.
absl::Status Neutral(const json& body, const char* field) {
  if (!Given(body, field)) return absl::OkStatus();
  const json& v = body.at(field);
  const bool neutral = (v.is_boolean() && !v.get<bool>()) || (v.is_number() && v == 0) ||
                       (v.is_object() && v.empty()) || (v.is_string() && v.empty());
  if (neutral) return absl::OkStatus();
  return Bad(field, absl::StrCat("not supported by ember (", v.dump(), ")"));
}

// A message's content: a string, or OpenAI's list of parts, all of type "text".
absl::StatusOr<std::string> Content(const json& v, const std::string& field) {
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) return Bad(field, "expected a string or a list of text parts");
  std::string text;
  for (size_t i = 0; i < v.size(); ++i) {
    const json& part = v[i];
    const std::string at = absl::StrCat(field, "[", i, "]");
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" ||
        !part.contains("text") || !part["text"].is_string()) {
      return Bad(at, "expected {\"type\": \"text\", \"text\": \"...\"} (ember reads text only)");
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

absl::StatusOr<std::vector<ChatMessage>> Messages(const json& v) {
  if (!v.is_array() || v.empty()) return Bad("messages", "expected a non-empty list");
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < v.size(); ++i) {
    const json& m = v[i];
    const std::string at = absl::StrCat("messages[", i, "]");
    if (!m.is_object()) return Bad(at, "expected an object with role and content");
    for (const auto& [key, value] : m.items()) {
      if (key != "role" && key != "content")
        return Bad(absl::StrCat(at, ".", key), "not supported by ember");
    }
    if (!m.contains("role") || !m["role"].is_string())
      return Bad(at + ".role", "expected a string");
    std::string role = m["role"].get<std::string>();
    if (role == "developer") role = "system";  // OpenAI's newer name for it
    if (role != "system" && role != "user" && role != "assistant") {
      return Bad(at + ".role",
                 absl::StrCat("expected system, user or assistant, got \"", role, "\""));
    }
    if (!m.contains("content")) return Bad(at + ".content", "missing");
    absl::StatusOr<std::string> content = Content(m["content"], at + ".content");
    if (!content.ok()) return content.status();
    messages.push_back({role, *std::move(content)});
  }
  return messages;
}

const std::set<std::string>& Fields(bool chat) {
  static const auto* const completions = new std::set<std::string>{"model",
                                                                   "prompt",
                                                                   "max_tokens",
                                                                   "temperature",
                                                                   "top_p",
                                                                   "n",
                                                                   "stream",
                                                                   "stream_options",
                                                                   "seed",
                                                                   "stop",
                                                                   "user",
                                                                   "presence_penalty",
                                                                   "frequency_penalty",
                                                                   "logit_bias",
                                                                   "logprobs",
                                                                   "echo",
                                                                   "best_of",
                                                                   "suffix"};
  static const auto* const chats = new std::set<std::string>{"model",
                                                             "messages",
                                                             "max_tokens",
                                                             "max_completion_tokens",
                                                             "temperature",
                                                             "top_p",
                                                             "n",
                                                             "stream",
                                                             "stream_options",
                                                             "seed",
                                                             "stop",
                                                             "user",
                                                             "presence_penalty",
                                                             "frequency_penalty",
                                                             "logit_bias",
                                                             "logprobs",
                                                             "top_logprobs",
                                                             "response_format"};
  return chat ? *chats : *completions;
}

json Usage(int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

json Head(const ApiRequest& request, const std::string& id, int64_t created, bool chunk) {
  const char* object =
      request.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return {{"id", id}, {"object", object}, {"created", created}, {"model", request.model}};
}

// Text the engine made is valid UTF-8; replace, never throw, should a byte slip through.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

absl::StatusOr<ApiRequest> ParseRequest(absl::string_view body, bool chat,
                                        const ApiLimits& limits) {
  json j;
  try {
    j = json::parse(body.begin(), body.end());
  } catch (const json::exception& e) {  // a syntax error, or a number past a double's range
    return Bad("body", absl::StrCat("not JSON (", e.what(), ")"));
  }
  if (!j.is_object()) return Bad("body", "expected a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (!Fields(chat).count(key)) return Bad(key, "not a field of this endpoint");
  }
  ApiRequest r;
  r.chat = chat;
  r.max_tokens = chat ? limits.max_tokens : 16;
  if (!Given(j, "model")) return Bad("model", "missing");
  absl::StatusOr<std::string> model = String(j["model"], "model");
  if (!model.ok()) return model.status();
  r.model = *model;
  if (chat) {
    if (!Given(j, "messages")) return Bad("messages", "missing");
    absl::StatusOr<std::vector<ChatMessage>> messages = Messages(j["messages"]);
    if (!messages.ok()) return messages.status();
    r.messages = *std::move(messages);
  } else if (Given(j, "prompt")) {
    const json& p = j["prompt"];
    if (p.is_array() && p.size() == 1 && p[0].is_string()) {
      r.prompt = p[0].get<std::string>();
    } else if (p.is_string()) {
      r.prompt = p.get<std::string>();
    } else {
      return Bad("prompt", "expected a string (or a list of one string)");
    }
  }
  for (const char* field : {"max_tokens", "max_completion_tokens"}) {
    if (!Given(j, field)) continue;
    absl::StatusOr<int64_t> n = Integer(j[field], field, 1, limits.max_tokens);
    if (!n.ok()) return n.status();
    r.max_tokens = *n;
  }
  if (Given(j, "temperature")) {
    absl::StatusOr<double> t = Number(j["temperature"], "temperature", 0, 2);
    if (!t.ok()) return t.status();
    r.temperature = *t;
  }
  if (Given(j, "top_p")) {
    absl::StatusOr<double> p = Number(j["top_p"], "top_p", 0, 1, /*above_lo=*/true);
    if (!p.ok()) return p.status();
    r.top_p = *p;
  }
  if (Given(j, "n")) {
    absl::StatusOr<int64_t> n = Integer(j["n"], "n", 1, limits.max_n);
    if (!n.ok()) return n.status();
    r.n = *n;
  }
  if (Given(j, "stream")) {
    if (!j["stream"].is_boolean()) return Bad("stream", "expected true or false");
    r.stream = j["stream"].get<bool>();
  }
  if (Given(j, "stream_options")) {
    const json& o = j["stream_options"];
    if (!o.is_object()) return Bad("stream_options", "expected an object");
    for (const auto& [key, value] : o.items()) {
      if (key != "include_usage") return Bad("stream_options." + key, "not supported by ember");
      if (!value.is_boolean()) return Bad("stream_options.include_usage", "expected true or false");
      r.include_usage = value.get<bool>();
    }
    if (!r.stream) return Bad("stream_options", "only with stream: true");
  }
  if (Given(j, "seed")) {
    absl::StatusOr<int64_t> seed = Integer(j["seed"], "seed", std::numeric_limits<int64_t>::min(),
                                           std::numeric_limits<int64_t>::max());
    if (!seed.ok()) return seed.status();
    r.seed = *seed;
  }
  if (Given(j, "stop")) {
    const json& s = j["stop"];
    const json list = s.is_string() ? json::array({s}) : s;
    if (!list.is_array() || list.size() > 4)
      return Bad("stop", "expected a string or up to 4 strings");
    for (const json& stop : list) {
      if (!stop.is_string() || stop.get<std::string>().empty()) {
        return Bad("stop", "expected non-empty strings");
      }
      r.stop.push_back(stop.get<std::string>());
    }
  }
  if (Given(j, "user")) {
    if (absl::StatusOr<std::string> user = String(j["user"], "user"); !user.ok())
      return user.status();
  }
  for (const char* field : {"presence_penalty", "frequency_penalty", "logit_bias", "logprobs",
                            "top_logprobs", "echo", "suffix"}) {
    if (absl::Status neutral = Neutral(j, field); !neutral.ok()) return neutral;
  }
  if (Given(j, "best_of") && j["best_of"] != 1)
    return Bad("best_of", "not supported by ember (only 1)");
  if (Given(j, "response_format") && j["response_format"] != json{{"type", "text"}}) {
    return Bad("response_format", "not supported by ember (only {\"type\": \"text\"})");
  }
  return r;
}

absl::StatusOr<std::vector<int64_t>> ChatPrompt(const std::vector<ChatMessage>& messages,
                                                const tokenizer::Encoding& encoding) {
  std::string text;
  std::vector<int64_t> tokens;
  size_t first = 0;
  if (!messages.empty() && messages[0].role == "system") {
    text = messages[0].content + "\n";
    first = 1;
  } else {
    tokens.push_back(encoding.specials().at("<|endoftext|>"));
  }
  for (size_t i = first; i < messages.size(); ++i) {
    const std::string& role = messages[i].role;
    const char* expected = (i - first) % 2 == 0 ? "user" : "assistant";
    if (role != expected) {
      return Bad(absl::StrCat("messages[", i, "].role"),
                 absl::StrCat("expected ", expected,
                              " (after an optional first system message, "
                              "the user's and the assistant's turns alternate)"));
    }
    text += role == "user" ? UserTurn(messages[i].content) : BotTurn(messages[i].content);
  }
  if (messages.size() == first || messages.back().role != "user") {
    return Bad("messages", "the last message must be the user's");
  }
  absl::StatusOr<std::vector<tokenizer::Rank>> ids = encoding.EncodeOrdinary(text);
  if (!ids.ok()) return Bad("messages", ids.status().message());
  tokens.insert(tokens.end(), ids->begin(), ids->end());
  return tokens;
}

const std::vector<std::string>& ChatTurnMarkers() {
  static const auto* const markers = new std::vector<std::string>{"\nUser:", "\nBot:"};
  return *markers;
}

std::string ReplyJson(const ApiRequest& request, const std::string& id, int64_t created,
                      const std::vector<ApiChoice>& choices, int64_t prompt_tokens) {
  json reply = Head(request, id, created, /*chunk=*/false);
  json list = json::array();
  int64_t completion_tokens = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    const ApiChoice& c = choices[i];
    completion_tokens += c.completion_tokens;
    json choice = {{"index", i}, {"logprobs", nullptr}, {"finish_reason", c.finish_reason}};
    if (request.chat) {
      choice["message"] = {{"role", "assistant"}, {"content", c.text}};
    } else {
      choice["text"] = c.text;
    }
    list.push_back(std::move(choice));
  }
  reply["choices"] = std::move(list);
  reply["usage"] = Usage(prompt_tokens, completion_tokens);
  return Dump(reply);
}

std::string StreamChunk(const ApiRequest& request, const std::string& id, int64_t created,
                        int64_t index, const std::string& text, const std::string& finish_reason,
                        bool first) {
  json chunk = Head(request, id, created, /*chunk=*/true);
  json choice = {{"index", index}, {"logprobs", nullptr}};
  choice["finish_reason"] = finish_reason.empty() ? json(nullptr) : json(finish_reason);
  if (request.chat) {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty()) delta["content"] = text;
    choice["delta"] = std::move(delta);
  } else {
    choice["text"] = text;
  }
  chunk["choices"] = json::array({std::move(choice)});
  return absl::StrCat("data: ", Dump(chunk), "\n\n");
}

std::string StreamUsage(const ApiRequest& request, const std::string& id, int64_t created,
                        int64_t prompt_tokens, int64_t completion_tokens) {
  json chunk = Head(request, id, created, /*chunk=*/true);
  chunk["choices"] = json::array();
  chunk["usage"] = Usage(prompt_tokens, completion_tokens);
  return absl::StrCat("data: ", Dump(chunk), "\n\n");
}

std::string StreamEnd() { return "data: [DONE]\n\n"; }

int HttpStatus(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 408;
    default:
      return 500;
  }
}

std::string ErrorJson(const absl::Status& status) {
  const int http = HttpStatus(status);
  const std::string message(status.message());
  // "field: why" names the field at fault (param), as OpenAI's errors do.
  const size_t colon = message.find(": ");
  const std::string param = colon != std::string::npos && message.find(' ') > colon
                                ? message.substr(0, colon)
                                : std::string();
  const char* type = http < 429    ? "invalid_request_error"
                     : http == 429 ? "rate_limit_exceeded"
                                   : "server_error";
  json error = {{"message", message}, {"type", type}, {"code", nullptr}};
  error["param"] = param.empty() || param == "body" ? json(nullptr) : json(param);
  if (http == 401) error["code"] = "invalid_api_key";
  if (http == 404 && param == "model") error["code"] = "model_not_found";
  return Dump(json{{"error", std::move(error)}});
}

}  // namespace ember::models::gpt2
