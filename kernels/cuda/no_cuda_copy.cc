// copy.h in a build without CUDA (see no_cuda.cc): host-to-host CopyBytes works, every
// use of a device refuses.

#include <cstring>

#include "kernels/cuda/copy.h"
#include "kernels/cuda/internal/unavailable.h"
#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda {

void CopyCast(IntSpan shape, DType src_dtype, const void* src, IntSpan src_strides, DType dst_dtype,
              void* dst, IntSpan dst_strides) {
  internal::Unavailable("kernels::cuda::CopyCast");
}

void Fill(IntSpan shape, DType dtype, void* dst, IntSpan strides, const Scalar& value) {
  internal::Unavailable("kernels::cuda::Fill");
}

void CopyBytes(void* dst, int dst_device, const void* src, int src_device, int64_t nbytes) {
  if (dst_device != kHost) CheckDevice(dst_device);  // throws: there are no devices
  if (src_device != kHost) CheckDevice(src_device);
  if (nbytes > 0) std::memcpy(dst, src, nbytes);
}

}  // namespace ember::kernels::cuda
