#ifndef EMBER_KERNELS_ATTENTION_H_
#define EMBER_KERNELS_ATTENTION_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_ATTENTION_KERNELS(X) X(CausalAttentionForward) X(CausalAttentionBackward)

namespace ember::kernels {

// Dropout on the attention weights, as scaled_dot_product_attention's dropout_p:
//   Y = (P * M) V,  M_ij = [u_ij >= p] / (1 - p)  (0 everywhere when p = 1),
// u_ij uniform in [0, 1) from Philox's stream of `seed` (kernels/philox.h) at word
// offset + (b tq + i) tk + j for head b, query i, key j, with 24 bits: the numbers
// tensor/random.h's Rand draws for an f32 tensor [batch, tq, tk] from that offset, so the
// CPU and CUDA make the same mask, and so does the composite softmax, dropout, matmul
// drawing from the same generator. lse stays the undropped softmax's; the backward
// takes dV = (P * M)^T dY and dP = (dY V^T) * M, and the rest as below (D_i = dY_i . Y_i
// holds with the dropped Y). p = 0: no dropout, nothing drawn.
struct AttentionDropout {
  double p = 0;
  uint64_t seed = 0, offset = 0;
};

// CUDA's bf16 kernels (attention_bf16.cu, on bf16 tensor cores) take heads of this size,
// without dropout; tensor/ops widens other bf16 heads on CUDA to f32.
inline constexpr int64_t kCudaBf16HeadSize = 64;
inline bool CudaTakesBf16Heads(int64_t d, const AttentionDropout& dropout) {
  return d == kCudaBf16HeadSize && dropout.p == 0;
}

}  // namespace ember::kernels

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
// contiguous, outputs overwritten, except that the forward's K and V heads start
// kv_stride >= tk d elements apart (their rows contiguous): the first tk rows of a cache
// of longer heads are read in place. Work goes in blocks of query rows whose keys stop at
// the block's last visible one (the masked triangle is mostly skipped), one head per
// thread: each head's sums run in one order whatever the thread count.
// With dropout (above) the backward is given the forward's.
void CausalAttentionForward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                            const void* q, const void* k, const void* v, int64_t kv_stride, void* y,
                            void* lse, const AttentionDropout& dropout);
void CausalAttentionBackward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                             const void* q, const void* k, const void* v, const void* y,
                             const void* lse, const void* dy, void* dq, void* dk, void* dv,
                             const AttentionDropout& dropout);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_ATTENTION_KERNELS)

#endif  // EMBER_KERNELS_ATTENTION_H_
