#include "models/gpt2/server.h"

#include <httplib.h>

#include <atomic>
#include <cstdio>
#include <deque>
#include <random>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"

namespace ember::models::gpt2 {

extern const char kChatPage[];  // chat_page.html, compiled in (BUILD's chat_page_cc)

namespace {

using nlohmann::json;

void Error(httplib::Response& res, const absl::Status& status) {
  res.status = HttpStatus(status);
  res.set_content(ErrorJson(status), "application/json");
}

// Compares without stopping at the first difference, so that the time taken does not
// tell how much of a guessed key was right.
bool SameKey(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

// One API request's choices as the engine produces them (on its thread), for the
// handler's thread to answer with.
struct Reply {
  Reply(ApiRequest r, std::string i, int64_t c, int64_t p)
      : api(std::move(r)), id(std::move(i)), created(c), prompt_tokens(p), results(api.n) {}
  const ApiRequest api;
  const std::string id;
  const int64_t created, prompt_tokens;
  const absl::Time start = absl::Now();
  std::atomic<bool> gone{false};  // the client went away: the engine stops the choices

  absl::Mutex mu;
  absl::CondVar changed;
  std::vector<CompletionResult> results ABSL_GUARDED_BY(mu);
  int64_t done ABSL_GUARDED_BY(mu) = 0;
  std::deque<std::string> events ABSL_GUARDED_BY(mu);  // streamed, not yet written
  bool ended ABSL_GUARDED_BY(mu) = false;              // events holds the last one
};

}  // namespace

class Server::Impl {
 public:
  Impl(Engine& engine, const tokenizer::Encoding& encoding, int64_t block_size,
       ServerOptions options)
      : engine_(engine),
        encoding_(encoding),
        options_(std::move(options)),
        max_prompt_(options_.max_prompt_tokens > 0
                        ? std::min(options_.max_prompt_tokens, block_size - 1)
                        : block_size - 1),
        seeds_(std::random_device{}()),
        id_prefix_(absl::StrCat(absl::Hex(seeds_() >> 32, absl::kZeroPad8), "-")) {
    const int64_t threads = options_.threads > 0
                                ? options_.threads
                                : engine.options().max_batch + engine.options().max_queue + 4;
    http_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    http_.set_payload_max_length(options_.max_body_bytes);
    http_.set_read_timeout(30);
    http_.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(kChatPage, "text/html; charset=utf-8");
    });
    http_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      const Engine::Load load = engine_.load();
      res.status = load.draining ? 503 : 200;
      res.set_content(json{{"status", load.draining ? "draining" : "ok"},
                           {"active", load.active},
                           {"queued", load.queued}}
                          .dump(),
                      "application/json");
    });
    http_.Get("/v1/models", Guard([this](const httplib::Request&, httplib::Response& res) {
                res.set_content(json{{"object", "list"}, {"data", json::array({Model()})}}.dump(),
                                "application/json");
              }));
    http_.Get(R"(/v1/models/(.+))",
              Guard([this](const httplib::Request& req, httplib::Response& res) {
                if (req.matches[1] != options_.model_name) {
                  return Error(res, UnknownModel(req.matches[1]));
                }
                res.set_content(Model().dump(), "application/json");
              }));
    http_.Post("/v1/completions",
               Guard([this](const httplib::Request& req, httplib::Response& res) {
                 Complete(req, res, false);
               }));
    http_.Post("/v1/chat/completions",
               Guard([this](const httplib::Request& req, httplib::Response& res) {
                 Complete(req, res, true);
               }));
    // What cpp-httplib answers by itself (no such path, a body past the limit, a request
    // it cannot read) gets OpenAI's error object too.
    http_.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      std::string message =
          res.status == 404   ? absl::StrCat("path: no ", req.method, " ", req.path, " here")
          : res.status == 413 ? absl::StrCat("body: larger than this server's limit of ",
                                             options_.max_body_bytes, " bytes")
                              : absl::StrCat("HTTP ", res.status);
      const int status = res.status;
      Error(res,
            res.status == 404 ? absl::NotFoundError(message) : absl::InvalidArgumentError(message));
      res.status = status;
    });
  }

  absl::StatusOr<int> Bind(const std::string& host, int port) {
    const int bound =
        port == 0 ? http_.bind_to_any_port(host) : (http_.bind_to_port(host, port) ? port : -1);
    if (bound < 0) {
      return absl::UnavailableError(absl::StrCat("cannot listen on ", host, ":", port,
                                                 " (in use, or not an address of this machine)"));
    }
    return bound;
  }
  void Serve() { http_.listen_after_bind(); }
  void Stop() { http_.stop(); }

 private:
  // A /v1/ handler behind the API key.
  httplib::Server::Handler Guard(httplib::Server::Handler handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      if (!options_.api_key.empty() &&
          !SameKey(req.get_header_value("Authorization"), "Bearer " + options_.api_key)) {
        return Error(res, absl::UnauthenticatedError(
                              "Authorization: expected \"Bearer <key>\" with this server's "
                              "--api_key"));
      }
      handler(req, res);
    };
  }

  json Model() const {
    return {
        {"id", options_.model_name}, {"object", "model"}, {"created", 0}, {"owned_by", "ember"}};
  }

  absl::Status UnknownModel(const std::string& name) const {
    return absl::NotFoundError(absl::StrCat(
        "model: '", name, "' is not served here (this server has '", options_.model_name, "')"));
  }

  // The prompt's tokens: the chat template, or the text (<|endoftext|> when empty, as
  // GPT-2 begins a document).
  absl::StatusOr<std::vector<int64_t>> Prompt(const ApiRequest& api) const {
    if (api.chat) return ChatPrompt(api.messages, encoding_);
    if (api.prompt.empty()) return std::vector<int64_t>{encoding_.specials().at("<|endoftext|>")};
    absl::StatusOr<std::vector<tokenizer::Rank>> ids = encoding_.EncodeOrdinary(api.prompt);
    if (!ids.ok())
      return absl::InvalidArgumentError(absl::StrCat("prompt: ", ids.status().message()));
    return std::vector<int64_t>(ids->begin(), ids->end());
  }

  void Complete(const httplib::Request& req, httplib::Response& res, bool chat) {
    absl::StatusOr<ApiRequest> parsed = ParseRequest(req.body, chat, options_.limits);
    if (!parsed.ok()) return Error(res, parsed.status());
    if (parsed->model != options_.model_name) return Error(res, UnknownModel(parsed->model));
    absl::StatusOr<std::vector<int64_t>> prompt = Prompt(*parsed);
    if (!prompt.ok()) return Error(res, prompt.status());
    const int64_t tokens = static_cast<int64_t>(prompt->size());
    if (tokens > max_prompt_) {
      return Error(res, absl::InvalidArgumentError(absl::StrCat(
                            chat ? "messages" : "prompt", ": ", tokens,
                            " tokens, more than this server's limit of ", max_prompt_)));
    }
    uint64_t seed;
    {
      absl::MutexLock lock(&mu_);
      seed = parsed->seed ? static_cast<uint64_t>(*parsed->seed) : seeds_();
    }
    auto reply = std::make_shared<Reply>(
        *std::move(parsed), absl::StrCat(chat ? "chatcmpl-" : "cmpl-", id_prefix_, ++ids_),
        absl::ToUnixSeconds(absl::Now()), tokens);
    const ApiRequest& api = reply->api;
    std::vector<CompletionRequest> requests;
    for (int64_t i = 0; i < api.n; ++i) {
      CompletionRequest r;
      r.prompt = *prompt;
      r.max_tokens = api.max_tokens;
      r.sampling = SamplingOptions{api.temperature, 0, api.top_p};
      r.seed = seed + static_cast<uint64_t>(i);
      r.stop = api.stop;
      if (chat) r.stop.insert(r.stop.end(), ChatTurnMarkers().begin(), ChatTurnMarkers().end());
      r.deadline = reply->start + options_.timeout;
      r.on_text = [reply, i](const std::string& text) {
        if (reply->gone) return false;
        if (reply->api.stream) {
          absl::MutexLock lock(&reply->mu);
          reply->events.push_back(
              StreamChunk(reply->api, reply->id, reply->created, i, text, "", false));
          reply->changed.SignalAll();
        }
        return true;
      };
      r.on_done = [this, reply, i](const CompletionResult& result) { Done(*reply, i, result); };
      requests.push_back(std::move(r));
    }
    if (api.stream && chat) {  // each choice's first chunk names the role, as OpenAI's do
      absl::MutexLock lock(&reply->mu);
      for (int64_t i = 0; i < api.n; ++i)
        reply->events.push_back(StreamChunk(api, reply->id, reply->created, i, "", "", true));
    }
    if (absl::Status queued = engine_.Submit(std::move(requests)); !queued.ok())
      return Error(res, queued);
    if (api.stream) return Stream(reply, res);

    absl::MutexLock lock(&reply->mu);
    while (reply->done < api.n) reply->changed.Wait(&reply->mu);
    std::vector<ApiChoice> choices;
    for (const CompletionResult& r : reply->results) {
      if (r.finish_reason == "timeout") return Error(res, Timeout());
      choices.push_back({r.text, r.finish_reason, r.completion_tokens});
    }
    res.set_content(ReplyJson(api, reply->id, reply->created, choices, tokens), "application/json");
  }

  absl::Status Timeout() const {
    return absl::DeadlineExceededError(
        absl::StrCat("the request took longer than this server's limit of ",
                     absl::FormatDuration(options_.timeout)));
  }

  // Choice i ended: its last chunk (streaming), and when it was the last choice, the
  // usage chunk and [DONE].
  void Done(Reply& reply, int64_t i, const CompletionResult& result) {
    absl::MutexLock lock(&reply.mu);
    reply.results[i] = result;
    ++reply.done;
    if (reply.api.stream && result.finish_reason == "timeout") {
      reply.events.push_back(absl::StrCat("data: ", ErrorJson(Timeout()), "\n\n"));
    } else if (reply.api.stream) {
      reply.events.push_back(
          StreamChunk(reply.api, reply.id, reply.created, i, "", result.finish_reason, false));
    }
    if (reply.done < reply.api.n) return;
    int64_t completion = 0;
    for (const CompletionResult& r : reply.results) completion += r.completion_tokens;
    if (reply.api.stream) {
      if (reply.api.include_usage) {
        reply.events.push_back(
            StreamUsage(reply.api, reply.id, reply.created, reply.prompt_tokens, completion));
      }
      reply.events.push_back(StreamEnd());
      reply.ended = true;
    }
    reply.changed.SignalAll();
    std::fprintf(stderr, "serve: %s: %lld prompt + %lld completion tokens in %.2f s (%s)\n",
                 reply.id.c_str(), static_cast<long long>(reply.prompt_tokens),
                 static_cast<long long>(completion),
                 absl::ToDoubleSeconds(absl::Now() - reply.start), result.finish_reason.c_str());
  }

  // Server-sent events as the engine makes them; a failed write means the client went
  // away, which cancels its choices at their next token.
  static void Stream(std::shared_ptr<Reply> reply, httplib::Response& res) {
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [reply](size_t, httplib::DataSink& sink) {
          std::deque<std::string> events;
          bool ended;
          {
            absl::MutexLock lock(&reply->mu);
            while (reply->events.empty() && !reply->ended) reply->changed.Wait(&reply->mu);
            events.swap(reply->events);
            ended = reply->ended;
          }
          for (const std::string& e : events) {
            if (!sink.write(e.data(), e.size())) {
              reply->gone = true;
              return false;
            }
          }
          if (ended) sink.done();
          return true;
        },
        [reply](bool success) {
          if (!success) reply->gone = true;
        });
  }

  Engine& engine_;
  const tokenizer::Encoding& encoding_;
  const ServerOptions options_;
  const int64_t max_prompt_;
  httplib::Server http_;
  absl::Mutex mu_;
  std::mt19937_64 seeds_ ABSL_GUARDED_BY(mu_);
  const std::string id_prefix_;  // random, so that ids differ between runs
  std::atomic<int64_t> ids_{0};
};

Server::Server(Engine& engine, const tokenizer::Encoding& encoding, int64_t block_size,
               ServerOptions options)
    : impl_(std::make_unique<Impl>(engine, encoding, block_size, std::move(options))) {}
Server::~Server() = default;
absl::StatusOr<int> Server::Bind(const std::string& host, int port) {
  return impl_->Bind(host, port);
}
void Server::Serve() { impl_->Serve(); }
void Server::Stop() { impl_->Stop(); }

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

}  // namespace ember::models::gpt2
