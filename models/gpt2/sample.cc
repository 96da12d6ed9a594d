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

std::vector<int64_t> Generate(GPT& model, std::vector<int64_t> prompt, int64_t max_new_tokens,
                              const SamplingOptions& options, Generator& gen, int64_t stop) {
  EMBER_CHECK(!prompt.empty(), "Generate: the prompt needs at least one token");
  autograd::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.Eval();
  const int64_t block = model.config().block_size, vocab = model.config().vocab_size;
  for (int64_t i = 0; i < max_new_tokens; ++i) {
    const int64_t t = std::min<int64_t>(block, static_cast<int64_t>(prompt.size()));
    const std::vector<int64_t> window(prompt.end() - t, prompt.end());
    const Tensor logits = model(FromVector(window, {1, t}));
    const std::vector<float> last = logits.Select(1, t - 1).Reshape({vocab}).ToVector<float>();
    const int64_t next = SampleToken(last, options, gen);
    prompt.push_back(next);
    if (next == stop) break;
  }
  model.Train(was_training);
  return prompt;
}

}  // namespace ember::models::gpt2
