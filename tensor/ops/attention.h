#ifndef EMBER_TENSOR_OPS_ATTENTION_H_
#define EMBER_TENSOR_OPS_ATTENTION_H_

// Causal scaled dot-product attention as one fused op (kernel in
// kernels/attention.h), as torch.nn.functional.scaled_dot_product_attention with
// is_causal=True when tq == tk; with tq < tk the queries are the last tq positions (a
// cache holds the keys and values of the earlier ones).

#include "kernels/attention.h"
#include "tensor/tensor.h"

namespace ember::ops {

struct CausalAttentionResult {
  Tensor y;    // [..., tq, d]: (softmax(q k^T / sqrt(d), causal) * M) v
  Tensor lse;  // [..., tq]: each query's log-sum-exp of its scores (for the backward)
  kernels::AttentionDropout dropout;  // M's (kernels/attention.h); p = 0: none
};

// q: [..., tq, d]; k, v: [..., tk, d] with the same leading dimensions and tq <= tk.
// With dropout.p > 0 the attention weights are dropped out, the mask drawn from
// dropout's Philox stream as kernels/attention.h says (the same on every device).
CausalAttentionResult CausalAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                      const kernels::AttentionDropout& dropout = {});

struct CausalAttentionGrads {
  Tensor dq, dk, dv;
};

// From the forward's inputs and result (its dropout too) and the upstream gradient dy
// (y's shape).
CausalAttentionGrads CausalAttentionBackward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const CausalAttentionResult& forward,
                                             const Tensor& dy);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_ATTENTION_H_
