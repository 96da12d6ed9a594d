#include "models/gpt2/sample.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "tensor/creation.h"

namespace ember::models::gpt2 {

absl::Status SamplingOptions::Validate() const {
  if (temperature >= 0 && top_k >= 0 && top_p > 0 && top_p <= 1) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--temperature=", temperature, " --top_k=", top_k, " --top_p=", top_p,
                   ": need temperature >= 0, top_k >= 0 and 0 < top_p <= 1"));
}

int64_t SampleToken(const std::vector<float>& logits, const SamplingOptions& options,
                    Generator& gen) {
  const int64_t n = static_cast<int64_t>(logits.size());
  EMBER_CHECK(n > 0, "SampleToken: no logits");
  if (options.temperature <= 0) {
    // The first largest, as std::max_element, with the largest so far in a register
    // (max_element reloads it through its iterator each element: a chain through memory
    // over the whole vocabulary, every token).
    int64_t best = 0;
    float top = logits[0];
    for (int64_t i = 1; i < n; ++i) {
      if (logits[i] > top) {
        top = logits[i];
        best = i;
      }
    }
    return best;
  }
  // Candidates: every token, or the top_k by score (ties: lower id first); by
  // descending score when top-p needs the order.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  const int64_t k = options.top_k > 0 ? std::min(options.top_k, n) : n;
  if (k < n || options.top_p < 1) {
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    });
    order.resize(static_cast<size_t>(k));
  }
  // Softmax of logits / temperature over the candidates, in double.
  double top = -INFINITY;
  for (const int64_t id : order) top = std::max(top, static_cast<double>(logits[id]));
  std::vector<std::pair<int64_t, double>> p(order.size());
  double sum = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    p[i] = {order[i], std::exp((logits[order[i]] - top) / options.temperature)};
    sum += p[i].second;
  }
  // Nucleus: the shortest prefix (most likely first) whose probability reaches top_p.
  size_t keep = p.size();
  if (options.top_p < 1) {
    double mass = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      mass += p[i].second / sum;
      if (mass >= options.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  p.resize(keep);
  // The draw walks the kept tokens in id order: two passes whose scores differ in the
  // last bits (the cached and the uncached model) could swap near-equal tokens in an
  // order by score and draw differently from the same number; in id order they cannot.
  std::sort(p.begin(), p.end());
  double kept = 0;
  for (const auto& [id, weight] : p) kept += weight;
  double u = gen.NextUniform(53) * kept;
  for (const auto& [id, weight] : p) {
    if ((u -= weight) < 0) return id;
  }
  return p.back().first;
}

Sampler::Sampler(GPT& model, const SamplingOptions& options, Generator& gen, bool use_cache)
    : model_(model),
      options_(options),
      gen_(gen),
      use_cache_(use_cache),
      was_training_(model.is_training()) {
  model_.Eval();
  if (use_cache_) cache_ = model_.NewCache();
}

Sampler::~Sampler() { model_.Train(was_training_); }

void Sampler::Append(const std::vector<int64_t>& tokens) {
  for (const int64_t t : tokens) {
    EMBER_CHECK(t >= 0 && t < model_.config().vocab_size, "Sampler: token ", t,
                " is not below the vocabulary size ", model_.config().vocab_size);
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
    if (size - static_cast<int64_t>(cache_start_) >
        block) {  // full: restart from the last half window
      cache_ = model_.NewCache();
      cache_start_ = static_cast<size_t>(size - std::max<int64_t>(1, block / 2));
    }
    const size_t seen = cache_start_ + static_cast<size_t>(cache_.length());
    const std::vector<int64_t> fresh(tokens_.begin() + static_cast<int64_t>(seen), tokens_.end());
    logits = model_.Forward(
        FromVector(fresh, {1, static_cast<int64_t>(fresh.size())}).To(model_.device()), &cache_);
  } else {
    const int64_t t = std::min(block, size);
    logits = model_(FromVector(std::vector<int64_t>(tokens_.end() - t, tokens_.end()), {1, t})
                        .To(model_.device()));
  }
  const std::vector<float> last =
      logits.Select(1, logits.size(1) - 1).Reshape({vocab}).ToVector<float>();
  const int64_t next = SampleToken(last, options_, gen_);
  tokens_.push_back(next);
  return next;
}

std::vector<int64_t> Generate(GPT& model, std::vector<int64_t> prompt, int64_t max_new_tokens,
                              const SamplingOptions& options, Generator& gen, int64_t stop,
                              bool use_cache) {
  EMBER_CHECK(!prompt.empty(), "Generate: the prompt needs at least one token");
  Sampler sampler(model, options, gen, use_cache);
  sampler.Append(prompt);
  for (int64_t i = 0; i < max_new_tokens; ++i) {
    if (sampler.Next() == stop) break;
  }
  return sampler.tokens();
}

}  // namespace ember::models::gpt2
