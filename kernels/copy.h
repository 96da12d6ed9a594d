#ifndef EMBER_KERNELS_COPY_H_
#define EMBER_KERNELS_COPY_H_

#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_COPY_KERNELS(X) X(CopyCast) X(Fill)

namespace ember::kernels::cpu {

// Strided copy with a dtype conversion:
//   dst[i] = Convert<dst type>(src[i])   for every index i of `shape`.
// src: elements of src_dtype at src + sum(i[d] * src_strides[d]) (strides in elements;
//      0 where src is broadcast).
// dst: elements of dst_dtype at dst + sum(i[d] * dst_strides[d]); overwritten.
// dst must not overlap src unless both describe the very same elements. Large copies
// are split across the pool (internal/strided.h: ParallelForLoop), as are fills.
void CopyCast(IntSpan shape, DType src_dtype, const void* src, IntSpan src_strides, DType dst_dtype,
              void* dst, IntSpan dst_strides);

// dst[i] = value converted to `dtype`, for every index i of `shape` (strided as above).
void Fill(IntSpan shape, DType dtype, void* dst, IntSpan strides, const Scalar& value);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_COPY_KERNELS)

#endif  // EMBER_KERNELS_COPY_H_
