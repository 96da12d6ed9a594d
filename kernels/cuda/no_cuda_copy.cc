// copy.h without kernels (see no_cuda.cc): CopyCast in every build for now, Fill only
// where there is no CUDA (fill.cc has it otherwise).

#include "kernels/cuda/copy.h"
#include "kernels/cuda/internal/unavailable.h"

namespace ember::kernels::cuda {

void CopyCast(IntSpan shape, DType src_dtype, const void* src, IntSpan src_strides, DType dst_dtype,
              void* dst, IntSpan dst_strides) {
  internal::Unavailable("kernels::cuda::CopyCast");
}

#ifndef EMBER_CUDA
void Fill(IntSpan shape, DType dtype, void* dst, IntSpan strides, const Scalar& value) {
  internal::Unavailable("kernels::cuda::Fill");
}
#endif

}  // namespace ember::kernels::cuda
