#ifndef EMBER_TENSOR_OPS_MATMUL_H_
#define EMBER_TENSOR_OPS_MATMUL_H_

#include "tensor/tensor.h"

namespace ember::ops {

// Matrix product with torch.matmul's rules:
// - 1-d x 1-d: the dot product (a 0-d tensor);
// - 2-d x 2-d: the matrix product [m, k] x [k, n] -> [m, n];
// - a 1-d operand is a row (left) or column (right) vector, removed from the result;
// - more dimensions: a batch of matrices, with the batch dimensions broadcast
//   ([b, 1, m, k] x [h, k, n] -> [b, h, m, n]).
// Operands may be any views (a transposed operand is read in place, not copied).
// f32, f64 and bf16 (its products summed in f32, each result rounded once to bf16, as
// PyTorch's); f16 computes in f32. The result is contiguous.
Tensor Matmul(const Tensor& a, const Tensor& b);

// The product of 2-d bf16 a [m, k] and b [k, n] as f32 [m, n]: the products summed in
// f32 and never rounded to bf16 (the gradient of an f32 master weight under autocast,
// autograd/autocast.h). Operands may be any views.
Tensor MatmulToF32(const Tensor& a, const Tensor& b);

// y = x W^T + b over the last dimension (torch.nn.functional.linear): x [..., in],
// weight [out, in], bias [out] or undefined; y [..., out], contiguous. All the rows of
// x are one product (x is copied only when its leading dimensions cannot be merged)
// with the bias added in the same kernel (kernels/matmul.h's GemmBias: in bf16, bias +
// x W^T rounded once; on a GPU in cuBLASLt's epilogue).
Tensor Linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_MATMUL_H_
