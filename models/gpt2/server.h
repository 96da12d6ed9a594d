#ifndef EMBER_MODELS_GPT2_SERVER_H_
#define EMBER_MODELS_GPT2_SERVER_H_

// OpenAI's HTTP API over an Engine (engine.h), on cpp-httplib:
//
//   POST /v1/completions, /v1/chat/completions   openai_api.h's requests; "stream": true
//                                                answers in server-sent events
//   GET  /v1/models, /v1/models/<name>           the one model served
//   GET  /health                                 {"status": "ok"}, 503 once draining
//   GET  /                                       the chat page (chat_page.html)
//
// A request's n choices are n engine requests with seeds seed, seed + 1, ... (a random
// seed when none is given). A chat's reply also ends at the next turn's marker. Every
// refusal is OpenAI's error object with its HTTP status: 400 a bad request, 401 a missing
// or wrong key, 404 an unknown model or path, 408 past the time limit, 413 a body past
// the size limit, 429 a full queue, 503 while draining.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "models/gpt2/engine.h"
#include "models/gpt2/openai_api.h"
#include "tokenizer/encoding.h"

namespace httplib {
class Server;
}

namespace ember::models::gpt2 {

struct ServerOptions {
  std::string model_name = "ember";  // "model" in requests and replies
  std::string api_key;               // when set, every /v1/ request needs "Bearer <key>"
  ApiLimits limits;
  int64_t max_prompt_tokens = 0;              // 0: the model's window less one
  int64_t max_body_bytes = 1 << 20;           // larger bodies: 413
  absl::Duration timeout = absl::Minutes(5);  // a request's time, queued and decoding
  int64_t threads = 0;  // connections served at once; 0: the engine's batch + queue + 4
};

class Server {
 public:
  // The engine and encoding outlive the server; block_size is the model's window.
  Server(Engine& engine, const tokenizer::Encoding& encoding, int64_t block_size,
         ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0: a free one) and returns the port.
  absl::StatusOr<int> Bind(const std::string& host, int port);
  // Serves until Stop(), then returns once every connection is done.
  void Serve();
  void Stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether host is the loopback interface (127.0.0.0/8, ::1, localhost): reachable only
// from this machine.
bool IsLoopback(const std::string& host);

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_SERVER_H_
