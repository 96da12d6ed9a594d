#ifndef EMBER_KERNELS_CUDA_BINARY_H_
#define EMBER_KERNELS_CUDA_BINARY_H_

// The CUDA backend of kernels/cpu/binary.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "kernels/operands.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"

namespace ember::kernels::cuda {

using ::ember::kernels::StridedIn;

void Add(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Sub(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Mul(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Div(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Maximum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Minimum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Pow(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Eq(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Ne(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Lt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Le(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Gt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Ge(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

void Where(DType dtype, IntSpan shape, StridedIn condition, StridedIn a, StridedIn b, void* out);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_BINARY_H_
