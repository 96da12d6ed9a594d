#include "models/bigram/bigram.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "tensor/creation.h"

namespace ember::models::bigram {

namespace ag = ::ember::autograd;

CountingBigram CountingBigram::Fit(const data::CharExamples& examples, int64_t vocab,
                                   double smoothing) {
  EMBER_CHECK(examples.x.dim() == 2 && examples.x.size(1) == 1,
              "CountingBigram: contexts of shape ", ShapeToString(examples.x.shape()),
              " (expected [N, 1])");
  EMBER_CHECK(smoothing >= 0, "CountingBigram: smoothing ", smoothing, " (expected >= 0)");
  const std::vector<int64_t> a = examples.x.ToVector<int64_t>(), b = examples.y.ToVector<int64_t>();
  std::vector<double> counts(static_cast<size_t>(vocab * vocab), smoothing);
  for (size_t i = 0; i < a.size(); ++i) {
    EMBER_CHECK(a[i] >= 0 && a[i] < vocab && b[i] >= 0 && b[i] < vocab,
                "CountingBigram: id out of range");
    counts[static_cast<size_t>(a[i] * vocab + b[i])] += 1;
  }
  std::vector<float> log_probs(counts.size());
  for (int64_t row = 0; row < vocab; ++row) {
    double total = 0;
    for (int64_t c = 0; c < vocab; ++c) total += counts[static_cast<size_t>(row * vocab + c)];
    for (int64_t c = 0; c < vocab; ++c) {
      const double n = counts[static_cast<size_t>(row * vocab + c)];
      // An unseen pair without smoothing has probability 0: log 0 = -inf, as the counts say.
      log_probs[static_cast<size_t>(row * vocab + c)] =
          total > 0 ? static_cast<float>(std::log(n / total))
                    : static_cast<float>(-std::log(vocab));
    }
  }
  return CountingBigram(FromVector(log_probs, {vocab, vocab}));
}

Tensor CountingBigram::Logits(const Tensor& context) const {
  return ag::Embedding(log_probs_, context.Select(1, 0));
}

NeuralBigram::NeuralBigram(int64_t vocab, Generator& gen) {
  weight_ = RegisterParameter(
      "weight", {{vocab, vocab}, DType::kF32, nn::Initializer::Normal(0, 1), {"vocab", "vocab"}},
      gen);
}

Tensor NeuralBigram::Forward(const Tensor& context) {
  return ag::Embedding(weight_, context.Select(1, 0));  // one_hot(a) W, without the one-hot
}

Tensor NeuralBigram::Loss(const data::CharExamples& examples, double reg) {
  // The examples go where the weights are (a GPU after To(Device)).
  return ag::CrossEntropy(Forward(examples.x.To(device())), examples.y.To(device())) +
         ag::Mean(ag::Square(weight_)) * reg;
}

std::string NeuralBigram::ToString() const {
  return absl::StrCat("NeuralBigram(vocab=", weight_.size(0), ")");
}

double MeanNll(const Tensor& logits, const Tensor& targets) {
  ag::NoGradGuard no_grad;
  return ag::CrossEntropy(logits, targets).item<double>();
}

}  // namespace ember::models::bigram
