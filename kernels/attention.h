#ifndef EMBER_KERNELS_ATTENTION_H_
#define EMBER_KERNELS_ATTENTION_H_

#include <cstdint>

#include "kernels/twins.h"
#include "tensor/dtype.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_ATTENTION_KERNELS(X) X(CausalAttentionForward) X(CausalAttentionBackward)

namespace ember::kernels::cpu {

// Causal scaled dot-product attention over `batch` independent heads, f32 or f64 (or
// bf16, on CUDA for d = 64: Q, K, V, Y, dY and the gradients bf16, lse f32; scores,
// softmax and the sums in f32, P and dS rounded to bf16 as the products' operands), as
// one fused kernel
// (flash-attention's equations, Dao et al. 2022). For each head, queries Q [tq, d] are the last tq
// of the tk positions whose keys K and values V [tk, d] are given (tq < tk when a cache holds the
// earlier ones), so query i sees the keys j <= i + tk - tq:
//   S = Q K^T / sqrt(d),  P = softmax over each row's visible keys (0 elsewhere),
//   Y = P V,  lse_i = log sum_{j visible} exp(S_ij).
// Only lse is saved: the backward recomputes P = exp(S - lse) from Q and K, so the
// memory kept is O(tq) a head, not O(tq tk). From dY:
//   dP = dY V^T,  D_i = sum_j P_ij dP_ij = dY_i . Y_i,
//   dS = P * (dP - D),  dQ = dS K / sqrt(d),  dK = dS^T Q / sqrt(d),  dV = P^T dY.
// Q, Y, dY, dQ: [batch, tq, d]; K, V, dK, dV: [batch, tk, d]; lse: [batch, tq]; all
// contiguous, outputs overwritten. Work goes in blocks of query rows whose keys stop at
// the block's last visible one (the masked triangle is mostly skipped), one head per
// thread: each head's sums run in one order whatever the thread count.
void CausalAttentionForward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                            const void* q, const void* k, const void* v, void* y, void* lse);
void CausalAttentionBackward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                             const void* q, const void* k, const void* v, const void* y,
                             const void* lse, const void* dy, void* dq, void* dk, void* dv);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_ATTENTION_KERNELS)

#endif  // EMBER_KERNELS_ATTENTION_H_
