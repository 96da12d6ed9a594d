#include "models/gpt2/sample.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "autograd/autograd.h"
#include "base/error.h"
#include "tensor/creation.h"

namespace ember::models::gpt2 {

int64_t SampleToken(const std::vector<float>& logits, const SamplingOptions& options, Generator& gen) {
  const int64_t n = static_cast<int64_t>(logits.size());
  EMBER_CHECK(n > 0, "SampleToken: no logits");
  if (options.temperature <= 0) return std::max_element(logits.begin(), logits.end()) - logits.begin();
  // Candidates by descending score (ties: lower id first), cut to top_k.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  const int64_t k = options.top_k > 0 ? std::min(options.top_k, n) : n;
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  order.resize(static_cast<size_t>(k));
  // Softmax of logits / temperature over the candidates, in double.
  std::vector<double> p(order.size());
  const double top = logits[order[0]];
  double sum = 0;
  for (size_t i = 0; i < order.size(); ++i) sum += p[i] = std::exp((logits[order[i]] - top) / options.temperature);
  for (double& v : p) v /= sum;
  // Nucleus: the shortest prefix whose probability reaches top_p.
  size_t keep = p.size();
  if (options.top_p < 1) {
    double mass = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      mass += p[i];
      if (mass >= options.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  double kept = 0;
  for (size_t i = 0; i < keep; ++i) kept += p[i];
  double u = gen.NextUniform(53) * kept;
  for (size_t i = 0; i < keep; ++i) {
    if ((u -= p[i]) < 0) return order[i];
  }
  return order[keep - 1];
}

Sampler::Sampler(GPT& model, const SamplingOptions& options, Generator& gen, bool use_cache)
    : model_(model), options_(options), gen_(gen), use_cache_(use_cache), was_training_(model.is_training()) {
  model_.Eval();
  if (use_cache_) cache_ = model_.NewCache();
}

Sampler::~Sampler() { model_.Train(was_training_); }

void Sampler::Append(const std::vector<int64_t>& tokens) {
  for (const int64_t t : tokens) {
    EMBER_CHECK(t >= 0 && t < model_.config().vocab_size, "Sampler: token ", t, " is not below the vocabulary size ",
                model_.config().vocab_size);
  }
  tokens_.insert(tokens_.end(), tokens.begin(), tokens.end());
}

void Sampler::Reset(std::vector<int64_t> tokens) {
  tokens_.clear();
  cache_start_ = 0;
  if (use_cache_) cache_ = model_.NewCache();
  Append(tokens);
}

int64_t Sampler::Next() {
  EMBER_CHECK(!tokens_.empty(), "Sampler: the sequence needs at least one token");
  autograd::NoGradGuard no_grad;
  const int64_t block = model_.config().block_size, vocab = model_.config().vocab_size;
  const int64_t size = static_cast<int64_t>(tokens_.size());
  Tensor logits;
  if (use_cache_) {
    if (size - static_cast<int64_t>(cache_start_) > block) {  // full: restart from the last half window
      cache_ = model_.NewCache();
      cache_start_ = static_cast<size_t>(size - std::max<int64_t>(1, block / 2));
    }
    const size_t seen = cache_start_ + static_cast<size_t>(cache_.length());
    const std::vector<int64_t> fresh(tokens_.begin() + static_cast<int64_t>(seen), tokens_.end());
    logits = model_.Forward(FromVector(fresh, {1, static_cast<int64_t>(fresh.size())}), &cache_);
  } else {
    const int64_t t = std::min(block, size);
    logits = model_(FromVector(std::vector<int64_t>(tokens_.end() - t, tokens_.end()), {1, t}));
  }
  const std::vector<float> last = logits.Select(1, logits.size(1) - 1).Reshape({vocab}).ToVector<float>();
  const int64_t next = SampleToken(last, options_, gen_);
  tokens_.push_back(next);
  return next;
}

std::vector<int64_t> Generate(GPT& model, std::vector<int64_t> prompt, int64_t max_new_tokens,
                              const SamplingOptions& options, Generator& gen, int64_t stop, bool use_cache) {
  EMBER_CHECK(!prompt.empty(), "Generate: the prompt needs at least one token");
  Sampler sampler(model, options, gen, use_cache);
  sampler.Append(prompt);
  for (int64_t i = 0; i < max_new_tokens; ++i) {
    if (sampler.Next() == stop) break;
  }
  return sampler.tokens();
}

}  // namespace ember::models::gpt2
