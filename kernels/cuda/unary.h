#ifndef EMBER_KERNELS_CUDA_UNARY_H_
#define EMBER_KERNELS_CUDA_UNARY_H_

// The CUDA backend of kernels/cpu/unary.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "tensor/dtype.h"

namespace ember::kernels::cuda {

void Neg(DType dtype, int64_t n, const void* in, void* out);

void Abs(DType dtype, int64_t n, const void* in, void* out);

void Exp(DType dtype, int64_t n, const void* in, void* out);

void Log(DType dtype, int64_t n, const void* in, void* out);

void Sqrt(DType dtype, int64_t n, const void* in, void* out);

void Rsqrt(DType dtype, int64_t n, const void* in, void* out);

void Reciprocal(DType dtype, int64_t n, const void* in, void* out);

void Square(DType dtype, int64_t n, const void* in, void* out);

void Tanh(DType dtype, int64_t n, const void* in, void* out);

void Sigmoid(DType dtype, int64_t n, const void* in, void* out);

void Relu(DType dtype, int64_t n, const void* in, void* out);

void GeluTanh(DType dtype, int64_t n, const void* in, void* out);

void GeluErf(DType dtype, int64_t n, const void* in, void* out);

void PowScalar(DType dtype, int64_t n, const void* in, double exponent, void* out);

void ReluBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in);

void GeluTanhBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in);

void GeluErfBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in);

void TanhBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in);

void SigmoidBackward(DType dtype, int64_t n, const void* y, const void* grad_out, void* grad_in);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_UNARY_H_
