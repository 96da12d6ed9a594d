#ifndef EMBER_KERNELS_SOFTMAX_H_
#define EMBER_KERNELS_SOFTMAX_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
// clang-format off
#define EMBER_SOFTMAX_KERNELS(X)                                                                 \
  X(Softmax) X(LogSoftmax) X(SoftmaxBackward) X(LogSoftmaxBackward) X(CrossEntropyForward)       \
  X(CrossEntropyBackward)
// clang-format on

namespace ember::kernels::cpu {

// Softmax-family kernels over the rows of contiguous [rows, n] matrices, f32, f64 or
// bf16 (read and written as bf16, computed in f32, each result rounded once).
// All work from the row maximum m and s = sum_j exp(x_j - m): subtracting m keeps
// exp from overflowing, and is exact for the entries that carry the probability, so
// results stay accurate even for logits in the thousands. (log-sum-exp = m + log s.)
// Outputs are overwritten; rows are split across the thread pool.

// y = exp(x - m) / s.                     x, y: [rows, n]  (a row of all -inf gives NaN)
void Softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y);
// y = (x - m) - log s.                    x, y: [rows, n]
void LogSoftmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y);
// From y = softmax(x): dx = y * (dy - sum_j dy_j y_j).        y, dy, dx: [rows, n]
void SoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy, void* dx);
// From y = log_softmax(x): dx = dy - exp(y) * sum_j dy_j.     y, dy, dx: [rows, n]
void LogSoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                        void* dx);

// Cross entropy of logits against integer targets, never forming a one-hot, over the
// first `classes` entries of each row of n (1 <= classes <= n; the rest are padding,
// as GPT-2's vocabulary padded to a multiple of 128, and take no part):
//   loss_r = log-sum-exp_r - x[r, t_r] = (m_r - x[r, t_r]) + log s_r   (j < classes)
// (0 where t_r == ignore_index; NaN, with a row of NaN gradients, where t_r is outside
// [0, classes): the GPU's callers do not wait to check them). logits: [rows, n];
// targets: int64 [rows]; losses, row_max (m), sum_exp (s): [rows] of dtype, overwritten;
// the backward pass takes m and s back. dtype bf16: logits and dlogits bf16; losses, m,
// s and grad f32.
void CrossEntropyForward(DType dtype, int64_t rows, int64_t n, int64_t classes, const void* logits,
                         const int64_t* targets, int64_t ignore_index, void* losses, void* row_max,
                         void* sum_exp);
// d loss_r / d x[r, j] = (exp(x[r, j] - m_r) / s_r - [j == t_r]) * grad[r] for j <
// classes, 0 for the padding and for ignored rows. grad: [rows] (each row's upstream
// gradient: 1 / count for a mean); dlogits: [rows, n], overwritten; it may be logits
// itself (the gradient written over the logits, as llm.c's fused classifier: no second
// tensor of the head's size).
void CrossEntropyBackward(DType dtype, int64_t rows, int64_t n, int64_t classes, const void* logits,
                          const int64_t* targets, int64_t ignore_index, const void* row_max,
                          const void* sum_exp, const void* grad, void* dlogits);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_SOFTMAX_KERNELS)

#endif  // EMBER_KERNELS_SOFTMAX_H_
