#include "models/gpt2/engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "autograd/autocast.h"
#include "autograd/engine.h"
#include "models/gpt2/text_stream.h"
#include "tensor/creation.h"

namespace ember::models::gpt2 {

struct Engine::Sequence {
  Sequence(CompletionRequest r, KVCache c, const tokenizer::Encoding& encoding)
      : request(std::move(r)), gen(request.seed), cache(std::move(c)), stream(encoding) {}
  CompletionRequest request;
  Generator gen;
  KVCache cache;
  TextStream stream;
  std::string text;  // everything decoded so far
  size_t sent = 0;   // text[0, sent) went to on_text
  int64_t generated = 0;
  int64_t last = -1;  // the newest token, the next step's input
};

Engine::Engine(GPT& model, const tokenizer::Encoding& encoding, EngineOptions options)
    : model_(model),
      encoding_(encoding),
      options_(options),
      eot_(encoding.specials().at("<|endoftext|>")) {
  EMBER_CHECK(options.max_batch >= 1 && options.max_queue >= 0, "Engine: max_batch ",
              options.max_batch, " and max_queue ", options.max_queue,
              ": expected at least 1 and 0");
  model_.Eval();
  thread_ = std::thread([this] { Loop(); });
}

Engine::~Engine() { Drain(); }

absl::Status Engine::Submit(CompletionRequest request) {
  std::vector<CompletionRequest> one;
  one.push_back(std::move(request));
  return Submit(std::move(one));
}

absl::Status Engine::Submit(std::vector<CompletionRequest> requests) {
  const GPTConfig& config = model_.config();
  for (const CompletionRequest& request : requests) {
    const int64_t tokens = static_cast<int64_t>(request.prompt.size());
    if (tokens < 1 || tokens >= config.block_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("a prompt of ", tokens, " tokens: expected 1 to ", config.block_size - 1));
    }
    for (const int64_t id : request.prompt) {
      if (id < 0 || id >= config.vocab_size) {
        return absl::InvalidArgumentError(
            absl::StrCat("token ", id, " is outside the vocabulary of ", config.vocab_size));
      }
    }
    if (request.max_tokens < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("max_tokens ", request.max_tokens, ": expected at least 1"));
    }
    for (const std::string& stop : request.stop) {
      if (stop.empty()) return absl::InvalidArgumentError("an empty stop string");
    }
    if (absl::Status valid = request.sampling.Validate(); !valid.ok()) return valid;
  }
  absl::MutexLock lock(&mu_);
  if (draining_) return absl::UnavailableError("the server is shutting down");
  if (static_cast<int64_t>(queue_.size() + requests.size()) > options_.max_queue) {
    return absl::ResourceExhaustedError(absl::StrCat("the queue is full (", queue_.size(), " of ",
                                                     options_.max_queue,
                                                     " places taken); try again later"));
  }
  for (CompletionRequest& request : requests) queue_.push_back(std::move(request));
  work_.Signal();
  return absl::OkStatus();
}

void Engine::Drain() {
  {
    absl::MutexLock lock(&mu_);
    draining_ = true;
    work_.Signal();
  }
  if (thread_.joinable()) thread_.join();
}

Engine::Load Engine::load() const {
  absl::MutexLock lock(&mu_);
  return {active_, static_cast<int64_t>(queue_.size()), draining_};
}

void Engine::Loop() {
  const autograd::NoGradGuard no_grad;
  const autograd::AutocastGuard autocast(options_.dtype);  // weights cast once, kept
  const int64_t vocab = model_.config().vocab_size;
  std::vector<std::unique_ptr<Sequence>> active;
  for (;;) {
    std::vector<CompletionRequest> admitted;
    {
      absl::MutexLock lock(&mu_);
      while (queue_.empty() && active.empty() && !draining_) work_.Wait(&mu_);
      if (queue_.empty() && active.empty()) return;  // draining, and nothing is left
      while (!queue_.empty() &&
             static_cast<int64_t>(active.size() + admitted.size()) < options_.max_batch) {
        admitted.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      active_ = static_cast<int64_t>(active.size() + admitted.size());
    }
    // Each new prompt alone, into its own cache; its first token joins this step.
    std::vector<std::unique_ptr<Sequence>> next;
    for (CompletionRequest& request : admitted) {
      if (absl::Now() > request.deadline) {  // it waited too long: never started
        CompletionResult result;
        result.prompt_tokens = static_cast<int64_t>(request.prompt.size());
        result.finish_reason = "timeout";
        if (request.on_done) request.on_done(result);
        continue;
      }
      auto s = std::make_unique<Sequence>(std::move(request), model_.NewCache(), encoding_);
      const int64_t t = static_cast<int64_t>(s->request.prompt.size());
      const Tensor logits =
          model_.Forward(FromVector(s->request.prompt, {1, t}).To(model_.device()), &s->cache);
      const std::vector<float> last =
          logits.Select(1, t - 1).To(DType::kF32).Reshape({vocab}).ToVector<float>();
      if (Accept(*s, SampleToken(last, s->request.sampling, s->gen))) next.push_back(std::move(s));
    }
    // One forward pass over the newest token of every sequence that was running.
    if (!active.empty()) {
      const int64_t batch = static_cast<int64_t>(active.size());
      std::vector<int64_t> ids;
      std::vector<KVCache*> caches;
      for (const auto& s : active) {
        ids.push_back(s->last);
        caches.push_back(&s->cache);
      }
      const std::vector<float> logits =
          model_.Forward(FromVector(ids, {batch, 1}).To(model_.device()), caches)
              .To(DType::kF32)
              .ToVector<float>();
      for (int64_t b = 0; b < batch; ++b) {
        Sequence& s = *active[b];
        const std::vector<float> row(logits.begin() + b * vocab, logits.begin() + (b + 1) * vocab);
        if (Accept(s, SampleToken(row, s.request.sampling, s.gen)))
          next.push_back(std::move(active[b]));
      }
    }
    active = std::move(next);
    absl::MutexLock lock(&mu_);
    active_ = static_cast<int64_t>(active.size());
  }
}

bool Engine::Accept(Sequence& s, int64_t token) {
  if (token == eot_) {
    s.text = tokenizer::ToValidUtf8(s.text + s.stream.Finish());
    Finish(s, "stop");
    return false;
  }
  ++s.generated;
  s.last = token;
  s.text += s.stream.Push(static_cast<tokenizer::Rank>(token));
  // A stop string ends the text where it starts. One wholly before `sent` would have
  // ended it already, so the search starts where one could still end after it.
  size_t cut = std::string::npos;
  for (const std::string& stop : s.request.stop) {
    const size_t from = s.sent >= stop.size() ? s.sent - stop.size() + 1 : 0;
    cut = std::min(cut, s.text.find(stop, from));
  }
  if (cut != std::string::npos) {
    s.text.resize(cut);
    Finish(s, "stop");
    return false;
  }
  // Hold back the longest end of the text that may still grow into a stop string.
  size_t safe = s.text.size();
  for (const std::string& stop : s.request.stop) {
    for (size_t k = std::min(stop.size() - 1, s.text.size()); k > 0; --k) {
      if (s.text.compare(s.text.size() - k, k, stop, 0, k) == 0) {
        safe = std::min(safe, s.text.size() - k);
        break;
      }
    }
  }
  if (safe > s.sent) {
    const std::string piece = s.text.substr(s.sent, safe - s.sent);
    s.sent = safe;
    if (s.request.on_text && !s.request.on_text(piece)) {
      Finish(s, "cancelled");
      return false;
    }
  }
  // The newest token is the next step's input: the window must have room for it.
  if (s.generated >= s.request.max_tokens || s.cache.length() >= model_.config().block_size) {
    s.text = tokenizer::ToValidUtf8(s.text + s.stream.Finish());
    Finish(s, "length");
    return false;
  }
  if (absl::Now() > s.request.deadline) {
    Finish(s, "timeout");
    return false;
  }
  return true;
}

void Engine::Finish(Sequence& s, const std::string& reason) {
  // What is left unsent (held back for a stop string that did not come, or the bytes of
  // an unfinished character, as U+FFFD) goes out, unless the request was cut short.
  if ((reason == "stop" || reason == "length") && s.text.size() > s.sent) {
    if (s.request.on_text) s.request.on_text(s.text.substr(s.sent));
    s.sent = s.text.size();
  }
  CompletionResult result;
  result.text = s.text.substr(0, s.sent);
  result.prompt_tokens = static_cast<int64_t>(s.request.prompt.size());
  result.completion_tokens = s.generated;
  result.finish_reason = reason;
  if (s.request.on_done) s.request.on_done(result);
}

}  // namespace ember::models::gpt2
