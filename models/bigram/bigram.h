#ifndef EMBER_MODELS_BIGRAM_BIGRAM_H_
#define EMBER_MODELS_BIGRAM_BIGRAM_H_

// Character bigram models of names (makemore, part 1): the next character given the
// one before it, '.' framing each name.
//
// Counting: P(b | a) = (N[a][b] + s) / sum_c (N[a][c] + s), N the pair counts of the
//   training names and s the smoothing (add-one by default). It is the maximum-
//   likelihood bigram, so nothing trained on the same pairs can beat its training loss
//   (with s -> 0).
// Neural: logits = one_hot(a) W = W[a], W [V, V] ~ N(0, 1), trained by full-batch
//   gradient descent on cross entropy + reg * mean(W^2); the regulariser plays the
//   smoothing's part, pulling every row towards uniform.

#include <cstdint>
#include <string>

#include "data/datasets.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::models::bigram {

class CountingBigram {
 public:
  // From examples with a context of one character (x i64 [N, 1], y i64 [N]).
  static CountingBigram Fit(const data::CharExamples& examples, int64_t vocab,
                            double smoothing = 1);
  // log P(. | a) for each context a: [N, 1] -> [N, vocab].
  Tensor Logits(const Tensor& context) const;
  const Tensor& log_probs() const { return log_probs_; }  // [vocab, vocab], f32

 private:
  explicit CountingBigram(Tensor log_probs) : log_probs_(std::move(log_probs)) {}
  Tensor log_probs_;
};

class NeuralBigram : public nn::Module {
 public:
  NeuralBigram(int64_t vocab, Generator& gen);
  // context i64 [N, 1] -> logits [N, vocab].
  Tensor Forward(const Tensor& context) override;
  // Cross entropy + reg * mean(W^2).
  Tensor Loss(const data::CharExamples& examples, double reg);
  std::string ToString() const override;

 private:
  Tensor weight_;  // W [vocab, vocab], registered as "weight"
};

// Mean negative log-likelihood (nats per character) of y given x under the logits.
double MeanNll(const Tensor& logits, const Tensor& targets);

}  // namespace ember::models::bigram

#endif  // EMBER_MODELS_BIGRAM_BIGRAM_H_
