#ifndef EMBER_KERNELS_CPU_INTERNAL_GEMM_BF16_H_
#define EMBER_KERNELS_CPU_INTERNAL_GEMM_BF16_H_

// The bf16 GEMM on AVX512-BF16 (vdpbf16ps: in each f32 lane, acc += a0 b0 + a1 b1 for a
// pair of bf16 products, twice the multiply-adds of an f32 FMA per instruction), for
// matmul.cc's AVX-512 target on a CPU that has the instruction. Highway 1.0.3 has no
// bf16 dot product: intrinsics behind a target attribute, in gemm_bf16.cc.

#include <cstdint>

namespace ember::kernels::cpu::internal {

// Whether this CPU executes AVX512-BF16 (cpuid; the OS's AVX-512 state is the caller's
// target's premise).
bool HasAvx512Bf16();

// C [m, n] (row stride ldc) = A B, or C + A B with `accumulate`, on the calling thread,
// A [m, k] and B [k, n] bf16 (their bits) at (row, column) strides (ars, acs) and (brs,
// bcs); C bf16, or f32 with c_f32. Products summed in f32; a bf16 C rounded once.
// BLIS's blocking, in
// pairs of depth: B packed in panels of 48 columns, each entry a pair B[2q][j],
// B[2q + 1][j] in one 32-bit word (depth padded with a zero), A in slivers of 8 rows
// likewise; an 8 x 48 register tile of f32 sums (24 zmm) takes one vdpbf16ps per row
// and vector per pair, and the last block of depth writes C.
void GemmBf16Avx512(int64_t m, int64_t k, int64_t n, const uint16_t* a, int64_t ars, int64_t acs,
                    const uint16_t* b, int64_t brs, int64_t bcs, void* c, bool c_f32, int64_t ldc,
                    bool accumulate);

// Columns [j0, j1) of a bf16 C (as GemmBf16Avx512) for a few rows of A (m <= 8), unpacked: a
// generated token's products, where packing B would cost as much as using it once.
// Dot products for a B with contiguous columns and a row-major A (x W^T), rows of B
// interleaved in registers for a B with contiguous rows; false (nothing done) for any
// other layout.
bool GemmBf16FewRowsAvx512(int64_t m, int64_t k, int64_t j0, int64_t j1, const uint16_t* a,
                           int64_t ars, int64_t acs, const uint16_t* b, int64_t brs, int64_t bcs,
                           uint16_t* c, int64_t ldc, bool accumulate);

}  // namespace ember::kernels::cpu::internal

#endif  // EMBER_KERNELS_CPU_INTERNAL_GEMM_BF16_H_
