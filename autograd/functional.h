#ifndef EMBER_AUTOGRAD_FUNCTIONAL_H_
#define EMBER_AUTOGRAD_FUNCTIONAL_H_

// Differentiable neural-network functions (as torch.nn.functional): matmul, softmax,
// layer norm, embedding, cross entropies, dropout, causal attention. The fused ones are
// one node each with a hand-written backward kernel (tensor/ops).

#include <cstdint>
#include <utility>

#include "tensor/ops/conv.h"
#include "tensor/ops/pool.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::autograd {

// torch.matmul: 1-D operands are promoted and the added dimension removed; batch
// dimensions broadcast (their gradients are summed back).
Tensor Matmul(const Tensor& a, const Tensor& b);

// y = x W^T + b (torch.nn.functional.linear): x [..., in], weight [out, in], bias
// [out] or undefined. One node: dx = g W, dW = g^T x over all the rows (made [out, in]
// directly, not as a transposed view), db = the sum of g's rows.
Tensor Linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// Over the last dimension.
Tensor Softmax(const Tensor& x);
Tensor LogSoftmax(const Tensor& x);

// Over the last dimension C: x [..., C], weight [C], bias [C] or undefined.
Tensor LayerNorm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);
// A transformer's residual add and the LayerNorm after it: {h, LayerNorm(h)} with
// h = x + residual, the same nodes ("add", "layer_norm") and numbers as Add then
// LayerNorm, computed in one kernel pass where x and residual have one shape and
// (after promotion) f32, f64 or bf16 outside autocast's widening; otherwise by the two.
std::pair<Tensor, Tensor> AddLayerNorm(const Tensor& x, const Tensor& residual,
                                       const Tensor& weight, const Tensor& bias, double eps = 1e-5);

// 2-d convolution on NCHW (torch.nn.functional.conv2d, groups 1): x [N, C, H, W],
// weight [O, C, kh, kw], bias [O] or undefined; one node (im2col + GEMM both ways).
Tensor Conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              const ops::Conv2dParams& params = {});

// Max pooling on NCHW (torch.nn.functional.max_pool2d); the backward sends each
// output's gradient to the input its maximum came from.
Tensor MaxPool2d(const Tensor& x, const ops::MaxPool2dParams& params = {});

// Rows of weight [vocab, dim] picked by integer ids [...]: [..., dim]. The backward
// scatter-adds into weight (repeated ids add up); ids get no gradient.
Tensor Embedding(const Tensor& weight, const Tensor& ids);

// x's entries at the integer `index` (any shape, negative counting from the end) along
// dimension dim: x's shape with dim replaced by index's (torch.index_select for a 1-d
// index, x[index] for dim 0). Through Embedding over x viewed as [size(dim), rest], so
// the backward scatter-adds (repeated indices sum) on either device. An index out of
// range throws, naming it.
Tensor IndexSelect(const Tensor& x, int64_t dim, const Tensor& index);

// x with source's slices added at `index` along dim (torch.index_add): for a 1-d integer
// index of k entries and source of x's shape with dim of size k,
//   out[..., index[i], ...] = x[..., index[i], ...] + source[..., i, ...],
// repeated indices adding up. Through the embedding backward's scatter-add (floating
// dtypes); the gradient to x is g, to source g's slices at index (IndexSelect).
Tensor IndexAdd(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);

// One LSTM step after its two products (kernels/recurrent.h): gates_x = W_ih x + b_ih and
// gates_h = W_hh h + b_hh [..., 4H] (i, f, g, o), the cell state c [..., H]; returns
// {h', c'}. One fused node both ways (in f32, or f64); both gate inputs get the same
// gradient.
std::pair<Tensor, Tensor> LstmCell(const Tensor& gates_x, const Tensor& gates_h, const Tensor& c);

// One GRU step after its two products: gates_x = W_ih x + b_ih and gates_h = W_hh h + b_hh
// [..., 3H] (r, z, n), the state h [..., H]; returns h'. One fused node both ways.
Tensor GruCell(const Tensor& gates_x, const Tensor& gates_h, const Tensor& h);

// Mean cross entropy of logits [..., C] against i64 targets [...], over the targets
// that are not ignore_index (NaN when there are none, as PyTorch). With `classes` < C,
// only the first `classes` columns are classes, the rest padding that takes no part and
// gets a zero gradient (GPT-2's head padded to a multiple of 128 columns).
Tensor CrossEntropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index = -100,
                    int64_t classes = -1);

// Mean binary cross entropy of logits x against targets y of the same shape
// (torch.nn.functional.binary_cross_entropy_with_logits), in the stable form
//   loss = mean(max(x, 0) - x y + log(1 + exp(-|x|))),
// one node: dx = (sigmoid(x) - y) / N, dy = -x / N.
Tensor BinaryCrossEntropyWithLogits(const Tensor& logits, const Tensor& targets);

// Zeroes each element with probability p and scales the rest by 1 / (1 - p) while
// training; x itself otherwise. The mask is drawn from `gen` and kept for backward.
Tensor Dropout(const Tensor& x, double p, bool training, Generator& gen = DefaultGenerator());

// softmax(q k^T / sqrt(d) + causal mask) v for q [..., Tq, d] and k, v [..., Tk, d],
// Tq <= Tk: the queries are the last Tq of the Tk positions (the others are earlier
// positions' keys and values, as a key/value cache holds them), so query i, at position
// Tk - Tq + i, attends to keys j <= Tk - Tq + i. One fused node (kernels/attention.h);
// autograd's tests check it against the composite of Matmul, MaskedFill and Softmax.
// With dropout > 0 the attention weights are dropped out (zeroed with probability
// `dropout`, the rest scaled by 1 / (1 - dropout)) inside the fused kernel, the mask
// drawn from gen as Rand([..., Tq, Tk]) in f32 would draw it (gen advances as much), so
// the composite with Dropout after the Softmax gives the same numbers.
Tensor CausalAttention(const Tensor& q, const Tensor& k, const Tensor& v, double dropout = 0,
                       Generator& gen = DefaultGenerator());

}  // namespace ember::autograd

#endif  // EMBER_AUTOGRAD_FUNCTIONAL_H_
