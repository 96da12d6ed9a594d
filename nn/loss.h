#ifndef EMBER_NN_LOSS_H_
#define EMBER_NN_LOSS_H_

// Losses (torch.nn.functional's, reduction 'mean'), differentiable.

#include <cstdint>

#include "tensor/tensor.h"

namespace ember::nn {

// mean((input - target)^2), the shapes broadcasting.
Tensor MseLoss(const Tensor& input, const Tensor& target);

// Cross entropy of logits [..., C] against i64 targets [...], averaged over the targets
// that are not ignore_index. With label smoothing e the target distribution is
// (1 - e) one_hot + e / C: loss = (1 - e) nll - e mean_c log_softmax.
Tensor CrossEntropyLoss(const Tensor& logits, const Tensor& targets, int64_t ignore_index = -100,
                        double label_smoothing = 0);

// -log_probs[target], averaged over the targets that are not ignore_index; log_probs
// [N, C] (from LogSoftmax), targets [N].
Tensor NllLoss(const Tensor& log_probs, const Tensor& targets, int64_t ignore_index = -100);

// mean(-(y log sigmoid(x) + (1 - y) log(1 - sigmoid(x)))) computed stably as
// max(x, 0) - x y + log(1 + exp(-|x|)); one node whose gradient is (sigmoid(x) - y) / N.
Tensor BceWithLogitsLoss(const Tensor& logits, const Tensor& targets);

}  // namespace ember::nn

#endif  // EMBER_NN_LOSS_H_
