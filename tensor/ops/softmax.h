#ifndef EMBER_TENSOR_OPS_SOFTMAX_H_
#define EMBER_TENSOR_OPS_SOFTMAX_H_

// Softmax, log-softmax and cross entropy over the last dimension (kernels in
// kernels/softmax.h). Floating-point tensors; bf16 and f16 compute in f32.

#include <optional>

#include "tensor/tensor.h"

namespace ember::ops {

Tensor Softmax(const Tensor& x);
Tensor LogSoftmax(const Tensor& x);
// Gradients from the forward's output y and the upstream gradient dy (same shape).
Tensor SoftmaxBackward(const Tensor& y, const Tensor& dy);
Tensor LogSoftmaxBackward(const Tensor& y, const Tensor& dy);

// What CrossEntropy keeps for its backward pass.
struct CrossEntropyResult {
  Tensor loss;      // 0-d: the mean over the rows whose target is not ignore_index
  Tensor row_max;   // [rows]: each row's largest logit
  Tensor sum_exp;   // [rows]: sum_j exp(logit_j - row_max)
  Tensor count;     // 0-d: rows that count (0 gives a NaN loss, as PyTorch)
  int64_t classes;  // the columns that are classes (the rest: padding)
};

// The mean cross entropy of logits [rows, classes] against int64 targets [rows]
// (torch.nn.functional.cross_entropy with reduction='mean'), computed on the logits'
// device without waiting for it. A target outside [0, classes) that is not ignore_index
// throws ember::Error naming it on the host; on a GPU (where PyTorch asserts in the
// kernel) it makes the loss NaN, as reading the targets back would wait. bf16 logits are
// read as they are and computed in f32 (row_max and sum_exp f32). The loss has the
// logits' dtype, or `loss_dtype` (autocast asks for f32). `classes` (default: all)
// counts the first columns as the classes and the rest as padding, which takes no part
// and gets a zero gradient: GPT-2's head padded to a multiple of 128 columns.
CrossEntropyResult CrossEntropy(const Tensor& logits, const Tensor& targets,
                                int64_t ignore_index = -100,
                                std::optional<DType> loss_dtype = std::nullopt,
                                int64_t classes = -1);
// d loss / d logits for an upstream gradient `grad` of the mean loss (one number on the
// logits' device, read there). With
// `in_place` it is written over the logits, which must be contiguous and of a dtype the
// kernel reads (f32, f64 or bf16), and are not read again: llm.c's fused classifier's
// saving of a tensor the size of the logits.
Tensor CrossEntropyBackward(const Tensor& logits, const Tensor& targets,
                            const CrossEntropyResult& forward, const Tensor& grad,
                            int64_t ignore_index = -100, bool in_place = false);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_SOFTMAX_H_
