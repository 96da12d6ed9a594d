#ifndef EMBER_KERNELS_MATMUL_H_
#define EMBER_KERNELS_MATMUL_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/operands.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_MATMUL_KERNELS(X) X(Gemm) X(GemmBias) X(GemmBatched) X(GemmBf16F32)

namespace ember::kernels::cpu {

using ::ember::kernels::MatrixIn;

// General matrix multiply, f32, f64 or bf16:
//   C = A B            (accumulate = false; C overwritten)
//   C = C + A B        (accumulate = true; for gradients that sum)
// A: [m, k], B: [k, n], C: [m, n] with row stride ldc and column stride 1, all of
// dtype. C must not overlap A or B. bf16 (PyTorch's bf16 matmul): the products of bf16
// operands summed in f32, and C + A B rounded once to bf16.
//
// Blocked as BLIS/GotoBLAS do: B is packed in panels of kKc x (2 SIMD vectors) and A
// in slivers of 6 rows x kKc, so that a 6 x 2-vector register tile of C runs over
// contiguous memory with fused multiply-adds; edges are zero-padded. Row blocks of C
// are split across the thread pool. Each C element sums its k products in the same
// order whatever the thread count, so results do not depend on it. bf16 runs on
// AVX512-BF16 where the CPU has it (pairs of products per instruction, in the same
// blocking: internal/gemm_bf16.h), else widened to f32 through the f32 GEMM.
void Gemm(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c,
          int64_t ldc, bool accumulate);

// A Linear layer's product and bias: C = A B + bias, bias [n] of dtype added to every
// row (bf16: the sum in f32, rounded once), shapes and strides as Gemm's. On the CPU
// every row of C starts as the bias and the product accumulates onto it; on the GPU
// the bias is added in the GEMM's epilogue (cuBLASLt's CUBLASLT_EPILOGUE_BIAS), so C is
// written once and never read. In bf16 that epilogue may round the product to bf16
// before adding the bias (seen on an H200), a second rounding, as PyTorch's addmm
// through cuBLASLt.
void GemmBias(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b,
              const void* bias, void* c, int64_t ldc);

// Gemm of bf16 A and B into an f32 C: C (+)= A B, the products summed in f32 and C kept
// in f32 (the gradient of an f32 master weight under autocast, never rounded to bf16).
void GemmBf16F32(int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c, int64_t ldc,
                 bool accumulate);

// A batch of products of one shape: C_i (+)= A_i B_i for i in [0, batches), A_i being
// `a` moved by a_offsets[i] elements (the same row and column strides for every i),
// likewise B_i, and C_i at c + i * c_batch_stride elements with row stride ldc.
// a_offsets, b_offsets: [batches], in host memory. Small products (attention heads)
// go one per thread; a large one splits inside, as Gemm.
void GemmBatched(DType dtype, int64_t batches, int64_t m, int64_t k, int64_t n, MatrixIn a,
                 const int64_t* a_offsets, MatrixIn b, const int64_t* b_offsets, void* c,
                 int64_t ldc, int64_t c_batch_stride, bool accumulate);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_MATMUL_KERNELS)

#endif  // EMBER_KERNELS_MATMUL_H_
