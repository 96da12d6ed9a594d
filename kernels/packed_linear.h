#ifndef EMBER_KERNELS_PACKED_LINEAR_H_
#define EMBER_KERNELS_PACKED_LINEAR_H_

// A Linear layer's weight packed once for inference, and its product. Decoding a token
// reads every weight once and does two flops per weight it reads: its speed is the
// memory's, so the weight is stored in as few bytes as its numbers allow (bf16 halves
// f32's, int8 with a scale per 32 weights takes 1/3.8 of them) and laid out so that a
// thread streams it front to back with no horizontal sums and no packing per call.
//
// Layout, for W [n, k] (the Linear's [out, in]): panels of kPanel = 16 output rows (the
// last filled with zero rows), one after another; in a panel, depth-major: the 16
// weights W[16 t + j][p], j in [0, 16), side by side for p in [0, kp), kp = k rounded
// up to kGroup = 32 (the depth past k zero). Per format:
//
//   kF32   W as f32: kp x 16 floats a panel.
//   kBF16  W rounded to bf16 (nearest even): kp x 16 bf16 a panel.
//   kI8    per group of kGroup depths of a panel (as llama.cpp's q8_0, a scale per 32
//          weights): the 16 scales s_j (bf16), then 32 x 16 levels q_pj, with
//            s_j = max_p |W[j][p]| / 127 over the group, rounded up to bf16,
//            q_pj = round(W[j][p] / s_j) (to nearest even; 0 where s_j = 0),
//          so that W ~= s q with |W - s q| <= s / 2: 544 bytes a group, 1.0625 a weight
//          (the levels' order in a group: kernels/cpu/internal/packed_i8.h).
//
// The product is of the stored weights, W' (W, bf16(W) or s q):
//   C[i][j] = sum_p A[i][p] W'[j][p] (+ bias[j]),
// f32 and bf16 summed in f32 (A bf16 widened exactly), C rounded once to A's dtype. int8
// multiplies as llama.cpp multiplies q8_0 by q8_0: each row of A quantized per group of
// 32 depths too, a_g = max |A[i][p]| / 127 over the group (f32) and r_p = round(A[i][p]
// 127 / max |A[i][p]|) (to nearest even; 0 for a group of zeros; an inf or a NaN in a
// group makes its row's C NaN), and
//   C[i][j] = sum_g (a_g s_gj) sum_p r_p q_pj (+ bias[j]),
// each group's integer sum exact, the groups' terms added in f32 in order (the same bits
// on every SIMD target), the activations' rounding within a_g / 2 of A like the
// weights'. CPU only: a GPU decodes from its bf16 copies (matmul.h), with no such family.

#include <cstdint>

#include "core/dtype.h"

namespace ember::kernels::cpu {

enum class PackedFormat { kF32, kBF16, kI8 };

inline constexpr int64_t kPackedPanel = 16;  // output rows of W a panel holds
inline constexpr int64_t kPackedGroup = 32;  // the depth's padding; int8's scale group

// "f32", "bf16" or "int8".
const char* PackedFormatName(PackedFormat format);

// Bytes of W [n, k] packed in `format` (n, k >= 1).
int64_t PackedBytes(PackedFormat format, int64_t n, int64_t k);

// Packs W [n, k] (f32, row stride ldw, column stride 1) into `packed`, PackedBytes of
// it, every byte written.
void PackWeights(PackedFormat format, int64_t n, int64_t k, const float* w, int64_t ldw,
                 void* packed);

// C [m, n] (row stride ldc) = A [m, k] (row stride lda) W'^T + bias: A and C of `dtype`
// (f32 or bf16), bias [n] f32 or null, W' the packed weights. C is overwritten and
// must not overlap A. Threads take blocks of 64 output columns, each summing its
// products in one order whatever the thread count.
void PackedLinear(PackedFormat format, DType dtype, int64_t m, int64_t k, int64_t n, const void* a,
                  int64_t lda, const void* packed, const float* bias, void* c, int64_t ldc);

}  // namespace ember::kernels::cpu

#endif  // EMBER_KERNELS_PACKED_LINEAR_H_
