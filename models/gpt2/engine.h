#ifndef EMBER_MODELS_GPT2_ENGINE_H_
#define EMBER_MODELS_GPT2_ENGINE_H_

// Serving one GPT to many clients at once by continuous batching. Requests wait in a
// bounded queue; one thread admits them between steps (each prompt runs alone into its
// own key/value cache and its first token is sampled), and every step then runs one
// forward pass over the newest token of every active sequence (GPT::Forward with one
// cache a row), samples each row from the request's own generator, and streams each
// request's new text. A request joins and leaves between steps; it ends at
// <|endoftext|> or a stop string ("stop"), at max_tokens or the context window
// ("length"), when its client goes away ("cancelled"), or at its deadline ("timeout").

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/dtype.h"
#include "models/gpt2/model.h"
#include "models/gpt2/sample.h"
#include "tokenizer/encoding.h"

namespace ember::models::gpt2 {

struct CompletionResult {
  std::string text;  // what was generated, cut before a stop string
  int64_t prompt_tokens = 0, completion_tokens = 0;
  std::string finish_reason;  // "stop", "length", "cancelled" or "timeout"
};

struct CompletionRequest {
  std::vector<int64_t> prompt;  // at least one token, fewer than the model's block_size
  int64_t max_tokens = 16;      // at least 1
  SamplingOptions sampling;
  uint64_t seed = 0;              // the same request and seed give the same text
  std::vector<std::string> stop;  // the text ends before the first of these (non-empty)
  // Queued or decoding past this, the request ends ("timeout"; a queued one unstarted).
  absl::Time deadline = absl::InfiniteFuture();
  // Each piece of new text as it is known, on the engine's thread: never half a UTF-8
  // character, never what may still become a stop string. Returning false cancels the
  // request (its client went away). May be empty.
  std::function<bool(const std::string& text)> on_text;
  // Once, last, on the engine's thread.
  std::function<void(const CompletionResult& result)> on_done;
};

struct EngineOptions {
  int64_t max_batch = 8;      // sequences decoded together
  int64_t max_queue = 32;     // requests waiting for a place beyond those
  DType dtype = DType::kF32;  // the compute dtype (autocast, models/common/precision.h)
};

class Engine {
 public:
  // The model (in inference mode from here on) and its tokenizer outlive the engine.
  Engine(GPT& model, const tokenizer::Encoding& encoding, EngineOptions options);
  ~Engine();  // Drain()
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request: InvalidArgument for a request outside the limits above,
  // ResourceExhausted when max_queue requests wait already, Unavailable once draining.
  absl::Status Submit(CompletionRequest request);
  // Queues all of them or none (one API request's n choices).
  absl::Status Submit(std::vector<CompletionRequest> requests);
  // Admits no more requests, finishes those queued and active, and stops the thread.
  void Drain();

  struct Load {
    int64_t active = 0, queued = 0;
    bool draining = false;
  };
  Load load() const;
  const EngineOptions& options() const { return options_; }

 private:
  struct Sequence;
  void Loop();
  // Takes the sampled token into s: its text, the stop strings, the limits; true while
  // s goes on.
  bool Accept(Sequence& s, int64_t token);
  void Finish(Sequence& s, const std::string& reason);

  GPT& model_;
  const tokenizer::Encoding& encoding_;
  const EngineOptions options_;
  const int64_t eot_;
  mutable absl::Mutex mu_;
  absl::CondVar work_;
  std::deque<CompletionRequest> queue_ ABSL_GUARDED_BY(mu_);
  int64_t active_ ABSL_GUARDED_BY(mu_) = 0;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_ENGINE_H_
