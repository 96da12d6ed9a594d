// The server's side of OpenAI's API (openai_api.h): a table of bad requests, each refused
// naming its field; the good ones read as OpenAI documents them; chat's template as
// conversations.h's; replies, stream chunks and errors in OpenAI's shapes.

#include "models/gpt2/openai_api.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/gpt2/conversations.h"
#include "models/gpt2/text_stream.h"
#include "nlohmann/json.hpp"

namespace ember::models::gpt2 {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const ApiLimits kLimits{100, 3};

TEST(OpenAiApiTest, BadRequestsAreRefusedNamingTheField) {
  struct Case {
    bool chat;
    std::string body;
    std::string error;  // the message's start
  };
  const std::string user = R"("messages": [{"role": "user", "content": "Hi"}])";
  const std::vector<Case> cases = {
      {false, "", "body: not JSON"},
      {false, "{", "body: not JSON"},
      {false, "[1, 2]", "body: expected a JSON object"},
      {false, "\"model\"", "body: expected a JSON object"},
      {false, "{\"model\": \"gpt2\", \"prompt\": \"\xff\"}", "body: not JSON"},  // invalid UTF-8
      {false, R"({"prompt": "a"})", "model: missing"},
      {false, R"({"model": 7, "prompt": "a"})", "model: expected a string"},
      {false, R"({"model": "m", "prompt": 7})", "prompt: expected a string"},
      {false, R"({"model": "m", "prompt": ["a", "b"]})", "prompt: expected a string"},
      {false, R"({"model": "m", "messages": []})", "messages: not a field"},
      {false, R"({"model": "m", "tools": []})", "tools: not a field"},
      {false, R"({"model": "m", "max_tokens": 0})", "max_tokens: expected 1 to 100, got 0"},
      {false, R"({"model": "m", "max_tokens": 101})", "max_tokens: expected 1 to 100"},
      {false, R"({"model": "m", "max_tokens": 2.5})", "max_tokens: expected an integer"},
      {false, R"({"model": "m", "max_tokens": "8"})", "max_tokens: expected an integer"},
      {false, R"({"model": "m", "max_tokens": 18446744073709551615})", "max_tokens: out of range"},
      {false, R"({"model": "m", "max_tokens": 1e999})", "body: not JSON"},
      {false, R"({"model": "m", "temperature": -0.5})", "temperature: expected 0 to 2"},
      {false, R"({"model": "m", "temperature": 2.01})", "temperature: expected 0 to 2"},
      {false, R"({"model": "m", "temperature": "hot"})", "temperature: expected a number"},
      {false, R"({"model": "m", "top_p": 0})", "top_p: expected above 0 to 1"},
      {false, R"({"model": "m", "top_p": 1.5})", "top_p: expected above 0 to 1"},
      {false, R"({"model": "m", "n": 4})", "n: expected 1 to 3"},
      {false, R"({"model": "m", "stream": "yes"})", "stream: expected true or false"},
      {false, R"({"model": "m", "stream_options": {"include_usage": true}})",
       "stream_options: only with stream: true"},
      {false, R"({"model": "m", "stream": true, "stream_options": {"x": 1}})",
       "stream_options.x: not supported"},
      {false, R"({"model": "m", "seed": "one"})", "seed: expected an integer"},
      {false, R"({"model": "m", "stop": ""})", "stop: expected non-empty strings"},
      {false, R"({"model": "m", "stop": ["a", "b", "c", "d", "e"]})",
       "stop: expected a string or up to 4"},
      {false, R"({"model": "m", "stop": [1]})", "stop: expected non-empty strings"},
      {false, R"({"model": "m", "presence_penalty": 0.5})",
       "presence_penalty: not supported by ember"},
      {false, R"({"model": "m", "logit_bias": {"50256": -100}})", "logit_bias: not supported"},
      {false, R"({"model": "m", "logprobs": 3})", "logprobs: not supported by ember"},
      {false, R"({"model": "m", "echo": true})", "echo: not supported by ember"},
      {false, R"({"model": "m", "best_of": 2})", "best_of: not supported by ember (only 1)"},
      {true, R"({"model": "m"})", "messages: missing"},
      {true, R"({"model": "m", "messages": []})", "messages: expected a non-empty list"},
      {true, R"({"model": "m", "messages": "Hi"})", "messages: expected a non-empty list"},
      {true, R"({"model": "m", "messages": [7]})", "messages[0]: expected an object"},
      {true, R"({"model": "m", "messages": [{"content": "Hi"}]})",
       "messages[0].role: expected a string"},
      {true, R"({"model": "m", "messages": [{"role": "tool", "content": "x"}]})",
       "messages[0].role: expected system, user or assistant"},
      {true, R"({"model": "m", "messages": [{"role": "user"}]})", "messages[0].content: missing"},
      {true, R"({"model": "m", "messages": [{"role": "user", "content": 5}]})",
       "messages[0].content: expected a string or a list of text parts"},
      {true,
       R"({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
       "messages[0].content[0]: expected {\"type\": \"text\""},
      {true, R"({"model": "m", "messages": [{"role": "user", "content": "a", "name": "x"}]})",
       "messages[0].name: not supported"},
      {true, R"({"model": "m", "prompt": "a", )" + user + "}", "prompt: not a field"},
      {true, R"({"model": "m", "response_format": {"type": "json_object"}, )" + user + "}",
       "response_format: not supported"},
      {true, R"({"model": "m", "max_completion_tokens": 0, )" + user + "}",
       "max_completion_tokens: expected 1 to 100"},
  };
  for (const Case& c : cases) {
    const absl::StatusOr<ApiRequest> r = ParseRequest(c.body, c.chat, kLimits);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(std::string(r.status().message()), StartsWith(c.error)) << c.body;
    EXPECT_EQ(HttpStatus(r.status()), 400);
    EXPECT_TRUE(json::accept(ErrorJson(r.status()))) << c.body;
  }
}

TEST(OpenAiApiTest, GoodRequestsReadAsOpenAiDocumentsThem) {
  absl::StatusOr<ApiRequest> r =
      ParseRequest(R"({"model": "gpt2", "prompt": "Once"})", false, kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->prompt, "Once");
  EXPECT_EQ(r->max_tokens, 16);  // OpenAI's default for completions
  EXPECT_EQ(r->temperature, 1.0);
  EXPECT_EQ(r->n, 1);
  EXPECT_FALSE(r->stream);
  EXPECT_FALSE(r->seed.has_value());

  r = ParseRequest(R"({"model": "gpt2", "prompt": ["Once"], "max_tokens": 5, "temperature": 0,
      "top_p": 0.5, "n": 3, "stream": true, "stream_options": {"include_usage": true},
      "seed": -7, "stop": "\n", "user": "u1", "presence_penalty": 0, "logit_bias": {},
      "logprobs": null, "echo": false, "best_of": 1, "suffix": null})",
                   false, kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->prompt, "Once");
  EXPECT_EQ(r->max_tokens, 5);
  EXPECT_EQ(r->temperature, 0.0);
  EXPECT_EQ(r->top_p, 0.5);
  EXPECT_EQ(r->n, 3);
  EXPECT_TRUE(r->stream && r->include_usage);
  EXPECT_EQ(r->seed, -7);
  EXPECT_EQ(r->stop, std::vector<std::string>{"\n"});

  r = ParseRequest(R"({"model": "gpt2", "messages": [
      {"role": "developer", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]}],
      "max_completion_tokens": 9, "stop": ["a", "b"], "response_format": {"type": "text"}})",
                   true, kLimits);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->messages.size(), 2u);
  EXPECT_EQ(r->messages[0].role, "system");
  EXPECT_EQ(r->messages[1].content, "Hi there");
  EXPECT_EQ(r->max_tokens, 9);
  EXPECT_EQ(r->stop.size(), 2u);
  r = ParseRequest(R"({"model": "gpt2", "messages": [{"role": "user", "content": "Hi"}]})", true,
                   kLimits);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->max_tokens, 100);  // chat's default: the server's limit
}

TEST(OpenAiApiTest, ChatsTemplateIsConversationsOne) {
  const tokenizer::Encoding gpt2 = *LoadVocab("gpt2");
  auto text = [&](const std::vector<int64_t>& ids) {
    return *gpt2.Decode(std::vector<tokenizer::Rank>(ids.begin(), ids.end()));
  };
  absl::StatusOr<std::vector<int64_t>> prompt = ChatPrompt(
      {{"system", "You are kind."}, {"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Why?"}},
      gpt2);
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_EQ(text(*prompt),
            "You are kind.\n" + UserTurn("Hi") + BotTurn("Hello!") + UserTurn("Why?"));
  EXPECT_EQ(text(*prompt), "You are kind.\nUser: Hi\nBot: Hello!\nUser: Why?\nBot:");
  prompt = ChatPrompt({{"user", "Hi"}}, gpt2);
  ASSERT_TRUE(prompt.ok());
  EXPECT_EQ(prompt->front(), gpt2.specials().at("<|endoftext|>"));  // no system line
  EXPECT_EQ(text(*prompt), "<|endoftext|>User: Hi\nBot:");
  for (const std::vector<ChatMessage>& bad :
       std::vector<std::vector<ChatMessage>>{{{"assistant", "Hi"}},
                                             {{"user", "a"}, {"user", "b"}},
                                             {{"user", "a"}, {"assistant", "b"}},
                                             {{"system", "s"}},
                                             {{"user", "a"}, {"system", "s"}, {"user", "b"}}}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ChatPrompt(bad, gpt2).status())) << bad.size();
  }
}

TEST(OpenAiApiTest, RepliesChunksAndErrorsHaveOpenAisShape) {
  ApiRequest chat;
  chat.chat = true;
  chat.model = "gpt2";
  json reply = json::parse(
      ReplyJson(chat, "chatcmpl-1", 1700000000, {{"Hello", "stop", 2}, {"Hi", "length", 3}}, 7));
  EXPECT_EQ(reply["object"], "chat.completion");
  EXPECT_EQ(reply["choices"][1]["message"]["content"], "Hi");
  EXPECT_EQ(reply["choices"][1]["message"]["role"], "assistant");
  EXPECT_EQ(reply["choices"][1]["finish_reason"], "length");
  EXPECT_EQ(reply["usage"],
            (json{{"prompt_tokens", 7}, {"completion_tokens", 5}, {"total_tokens", 12}}));
  const std::string chunk = StreamChunk(chat, "chatcmpl-1", 1, 0, "He", "", true);
  ASSERT_THAT(chunk, StartsWith("data: "));
  ASSERT_EQ(chunk.substr(chunk.size() - 2), "\n\n");
  json c = json::parse(chunk.substr(6));
  EXPECT_EQ(c["object"], "chat.completion.chunk");
  EXPECT_EQ(c["choices"][0]["delta"], (json{{"role", "assistant"}, {"content", "He"}}));
  EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
  c = json::parse(StreamChunk(chat, "chatcmpl-1", 1, 0, "", "stop", false).substr(6));
  EXPECT_EQ(c["choices"][0]["delta"], json::object());
  EXPECT_EQ(c["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(json::parse(StreamUsage(chat, "x", 1, 3, 4).substr(6))["usage"]["total_tokens"], 7);
  EXPECT_EQ(StreamEnd(), "data: [DONE]\n\n");

  ApiRequest plain;
  plain.model = "gpt2";
  reply = json::parse(ReplyJson(plain, "cmpl-1", 1, {{"text \xff", "stop", 1}}, 1));
  EXPECT_EQ(reply["object"], "text_completion");
  EXPECT_EQ(reply["choices"][0]["text"], "text \xEF\xBF\xBD");  // a stray byte as U+FFFD

  json error = json::parse(ErrorJson(absl::InvalidArgumentError("max_tokens: expected 1 to 8")));
  EXPECT_EQ(error["error"]["param"], "max_tokens");
  EXPECT_EQ(error["error"]["type"], "invalid_request_error");
  error = json::parse(ErrorJson(absl::NotFoundError("model: 'x' is not served here")));
  EXPECT_EQ(error["error"]["param"], "model");
  EXPECT_EQ(error["error"]["code"], "model_not_found");
  error = json::parse(ErrorJson(absl::NotFoundError("no such thing")));
  EXPECT_TRUE(error["error"]["param"].is_null());
  EXPECT_TRUE(error["error"]["code"].is_null());
  EXPECT_EQ(HttpStatus(absl::NotFoundError("")), 404);
  EXPECT_EQ(HttpStatus(absl::DeadlineExceededError("")), 408);
  EXPECT_EQ(HttpStatus(absl::ResourceExhaustedError("")), 429);
  EXPECT_EQ(HttpStatus(absl::UnauthenticatedError("")), 401);
  EXPECT_EQ(HttpStatus(absl::UnavailableError("")), 503);
  EXPECT_THAT(ErrorJson(absl::UnavailableError("shutting down")), HasSubstr("server_error"));
}

}  // namespace
}  // namespace ember::models::gpt2
