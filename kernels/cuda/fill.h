#ifndef EMBER_KERNELS_CUDA_FILL_H_
#define EMBER_KERNELS_CUDA_FILL_H_

#include "absl/status/status.h"
#include "tensor/dtype.h"
#include "tensor/shape.h"

namespace ember::kernels::cuda {

// The contract of kernels/cpu Fill on device memory: dst[i] = value converted to
// `dtype`, for every index i of `shape`, at dst + sum(i[d] * strides[d]) elements.
// Runs on the default stream and waits for it; a CUDA error comes back as a Status.
absl::Status Fill(IntSpan shape, DType dtype, void* dst, IntSpan strides, const Scalar& value);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_FILL_H_
