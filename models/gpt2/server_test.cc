// The HTTP server (server.h) on a tiny GPT with GPT-2's tokenizer, over loopback with
// cpp-httplib's client: the routes, a streamed reply equal to the whole one, n choices
// seeded seed, seed + 1, ..., and each refusal's status and OpenAI error object.

#include "models/gpt2/server.h"

#include <httplib.h>

#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "models/gpt2/text_stream.h"
#include "nlohmann/json.hpp"

namespace ember::models::gpt2 {
namespace {

using nlohmann::json;

// A server on a free loopback port, serving until destroyed.
class Running {
 public:
  Running(Engine& engine, const tokenizer::Encoding& encoding, ServerOptions options)
      : server_(engine, encoding, 32, std::move(options)) {
    port_ = *server_.Bind("127.0.0.1", 0);
    thread_ = std::thread([this] { server_.Serve(); });
    httplib::Client client("127.0.0.1", port_);
    while (!client.Get("/health")) std::this_thread::yield();  // until it listens
  }
  ~Running() {
    server_.Stop();
    thread_.join();
  }
  httplib::Result Post(const std::string& path, const json& body, httplib::Headers headers = {}) {
    return Post(path, body.dump(), std::move(headers));
  }
  httplib::Result Post(const std::string& path, const std::string& body,
                       httplib::Headers headers = {}) {
    httplib::Client client("127.0.0.1", port_);
    return client.Post(path.c_str(), headers, body, "application/json");
  }
  httplib::Result Get(const std::string& path, httplib::Headers headers = {}) {
    httplib::Client client("127.0.0.1", port_);
    return client.Get(path.c_str(), headers);
  }

 private:
  Server server_;
  int port_ = 0;
  std::thread thread_;
};

struct Fixture {
  Fixture() : model(*GPTConfig::Preset("tiny"), init), encoding(*LoadVocab("gpt2")) {}
  Generator init{5};
  GPT model;  // 2 layers, 4 heads, 64 wide, 32 positions, GPT-2's 50,257 tokens
  tokenizer::Encoding encoding;
};

// The "data: " events of a streamed body, [DONE] last.
std::vector<std::string> Events(const std::string& body) {
  std::vector<std::string> events;
  size_t at = 0;
  while (at < body.size()) {
    const size_t end = body.find("\n\n", at);
    EXPECT_NE(end, std::string::npos) << "an unfinished event in " << body;
    if (end == std::string::npos) break;
    EXPECT_EQ(body.compare(at, 6, "data: "), 0) << body.substr(at, end - at);
    events.push_back(body.substr(at + 6, end - at - 6));
    at = end + 2;
  }
  return events;
}

TEST(ServerTest, RoutesAndTheChatPage) {
  Fixture f;
  Engine engine(f.model, f.encoding, {});
  Running server(engine, f.encoding, {});
  httplib::Result health = server.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body)["status"], "ok");
  httplib::Result models = server.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "ember");
  httplib::Result one = server.Get("/v1/models/ember");
  ASSERT_TRUE(one);
  EXPECT_EQ(json::parse(one->body)["object"], "model");
  httplib::Result page = server.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("/v1/chat/completions"), std::string::npos);
  EXPECT_EQ(page->body.rfind("</html>"), page->body.size() - 8);
}

TEST(ServerTest, CompletionsWholeStreamedAndSeeded) {
  Fixture f;
  Engine engine(f.model, f.encoding, {});
  Running server(engine, f.encoding, {});
  const json request = {
      {"model", "ember"}, {"prompt", "The quick"}, {"max_tokens", 10}, {"seed", 7}};
  httplib::Result whole = server.Post("/v1/completions", request);
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->status, 200) << whole->body;
  const json reply = json::parse(whole->body);
  EXPECT_EQ(reply["object"], "text_completion");
  EXPECT_EQ(reply["model"], "ember");
  ASSERT_EQ(reply["choices"].size(), 1u);
  const std::string text = reply["choices"][0]["text"];
  EXPECT_EQ(reply["usage"]["prompt_tokens"], 2);  // "The", " quick"
  const int64_t completion = reply["usage"]["completion_tokens"];
  EXPECT_EQ(completion, reply["choices"][0]["finish_reason"] == "length" ? 10 : completion);

  // The same seed, the same text; n = 2: the second choice is seed 8's first.
  json again = request;
  again["n"] = 2;
  httplib::Result two = server.Post("/v1/completions", again);
  ASSERT_TRUE(two);
  const json pair = json::parse(two->body);
  EXPECT_EQ(pair["choices"][0]["text"], text);
  json eight = request;
  eight["seed"] = 8;
  EXPECT_EQ(pair["choices"][1]["text"],
            json::parse(server.Post("/v1/completions", eight)->body)["choices"][0]["text"]);
  EXPECT_EQ(pair["choices"][1]["index"], 1);

  // Streamed: the pieces add up to the whole reply's text, then usage, then [DONE].
  json stream = request;
  stream["stream"] = true;
  stream["stream_options"] = {{"include_usage", true}};
  httplib::Result streamed = server.Post("/v1/completions", stream);
  ASSERT_TRUE(streamed);
  EXPECT_EQ(streamed->status, 200);
  EXPECT_EQ(streamed->get_header_value("Content-Type"), "text/event-stream");
  const std::vector<std::string> events = Events(streamed->body);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.back(), "[DONE]");
  std::string joined;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    const json chunk = json::parse(events[i]);
    EXPECT_EQ(chunk["id"], json::parse(events[0])["id"]);
    joined += chunk["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(joined, text);
  EXPECT_EQ(json::parse(events[events.size() - 3])["choices"][0]["finish_reason"],
            reply["choices"][0]["finish_reason"]);
  EXPECT_EQ(json::parse(events[events.size() - 2])["usage"], reply["usage"]);
}

TEST(ServerTest, ChatStreamsTheRoleFirst) {
  Fixture f;
  Engine engine(f.model, f.encoding, {});
  Running server(engine, f.encoding, {});
  const json request = {{"model", "ember"},
                        {"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                        {"max_tokens", 6},
                        {"seed", 3}};
  const json whole = json::parse(server.Post("/v1/chat/completions", request)->body);
  EXPECT_EQ(whole["object"], "chat.completion");
  EXPECT_EQ(whole["choices"][0]["message"]["role"], "assistant");
  json stream = request;
  stream["stream"] = true;
  const std::vector<std::string> events = Events(server.Post("/v1/chat/completions", stream)->body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(json::parse(events[0])["choices"][0]["delta"], json({{"role", "assistant"}}));
  std::string joined;
  for (size_t i = 1; i + 1 < events.size(); ++i) {
    const json delta = json::parse(events[i])["choices"][0]["delta"];
    if (delta.contains("content")) joined += delta["content"].get<std::string>();
  }
  EXPECT_EQ(joined, whole["choices"][0]["message"]["content"]);
}

TEST(ServerTest, RefusalsAreOpenAIErrors) {
  Fixture f;
  Engine engine(f.model, f.encoding, {});
  ServerOptions options;
  options.api_key = "sesame";
  options.max_prompt_tokens = 4;
  options.max_body_bytes = 1000;
  Running server(engine, f.encoding, options);
  const httplib::Headers key = {{"Authorization", "Bearer sesame"}};
  const json ok = {{"model", "ember"}, {"prompt", "Hi"}, {"max_tokens", 2}};
  struct Case {
    const char* name;
    httplib::Result result;
    int status;
    const char* message;  // how the error's message starts
  };
  json unknown = ok, long_prompt = ok, many = ok;
  unknown["model"] = "gpt-4";
  long_prompt["prompt"] = "one two three four five";
  many["max_tokens"] = 100000;
  std::vector<Case> cases;
  cases.push_back({"no key", server.Post("/v1/completions", ok), 401, "Authorization: expected"});
  cases.push_back({"wrong key",
                   server.Post("/v1/completions", ok, {{"Authorization", "Bearer sesamf"}}), 401,
                   "Authorization: expected"});
  cases.push_back({"models need the key too", server.Get("/v1/models"), 401, "Authorization"});
  cases.push_back({"unknown model", server.Post("/v1/completions", unknown, key), 404,
                   "model: 'gpt-4' is not served here"});
  cases.push_back({"unknown path", server.Get("/v2/things", key), 404, "path: no GET /v2/things"});
  cases.push_back({"not JSON", server.Post("/v1/completions", std::string("{\"model\": "), key),
                   400, "body: not JSON"});
  cases.push_back({"a long prompt", server.Post("/v1/completions", long_prompt, key), 400,
                   "prompt: 5 tokens, more than this server's limit of 4"});
  cases.push_back(
      {"max_tokens", server.Post("/v1/completions", many, key), 400, "max_tokens: expected"});
  cases.push_back({"a large body", server.Post("/v1/completions", std::string(2000, ' '), key), 413,
                   "body: larger than this server's limit of 1000 bytes"});
  for (const Case& c : cases) {
    ASSERT_TRUE(c.result) << c.name;
    EXPECT_EQ(c.result->status, c.status) << c.name;
    const json error = json::parse(c.result->body, nullptr, false);
    ASSERT_TRUE(error.contains("error")) << c.name << ": " << c.result->body;
    EXPECT_EQ(error["error"]["message"].get<std::string>().rfind(c.message, 0), 0u)
        << c.name << ": " << error["error"]["message"];
  }
  httplib::Result fine = server.Post("/v1/completions", ok, key);
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->status, 200) << fine->body;
  EXPECT_EQ(server.Get("/health")->status, 200);  // no key needed off /v1/
}

TEST(ServerTest, TimeLimitAndDraining) {
  Fixture f;
  Engine engine(f.model, f.encoding, {});
  const json request = {{"model", "ember"}, {"prompt", "Hi"}, {"max_tokens", 4}};
  {
    ServerOptions options;
    options.timeout = absl::ZeroDuration();  // every request is late
    Running server(engine, f.encoding, options);
    httplib::Result late = server.Post("/v1/completions", request);
    ASSERT_TRUE(late);
    EXPECT_EQ(late->status, 408);
    EXPECT_EQ(json::parse(late->body)["error"]["message"],
              "the request took longer than this server's limit of 0");
    json stream = request;
    stream["stream"] = true;
    const std::vector<std::string> events = Events(server.Post("/v1/completions", stream)->body);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_TRUE(json::parse(events[0]).contains("error")) << events[0];
    EXPECT_EQ(events[1], "[DONE]");
  }
  Running server(engine, f.encoding, {});
  engine.Drain();
  httplib::Result refused = server.Post("/v1/completions", request);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(server.Get("/health")->status, 503);
}

TEST(ServerTest, Loopback) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "localhost", "::1"})
    EXPECT_TRUE(IsLoopback(host)) << host;
  for (const char* host : {"0.0.0.0", "::", "192.168.1.2", "example.org", ""})
    EXPECT_FALSE(IsLoopback(host)) << host;
}

}  // namespace
}  // namespace ember::models::gpt2
