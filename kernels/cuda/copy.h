#ifndef EMBER_KERNELS_CUDA_COPY_H_
#define EMBER_KERNELS_CUDA_COPY_H_

// The copies between host and device memory that only the GPU side needs
// (Tensor::To(Device), reading an element). The strided copy and fill that both
// backends have are kernels/copy.h's.

#include <cstdint>

namespace ember::kernels::cuda {

// The "device" of host memory in CopyBytes.
inline constexpr int kHost = -1;

// Copies nbytes from src on src_device to dst on dst_device, each a CUDA device index
// or kHost. A copy to the host waits for the work queued before it on the source
// device and returns with the bytes there; a copy to a device is queued on its stream
// (after the work queued before it), and `src` may be reused when this returns. Host
// <-> device copies of 1 MiB or more go through pinned staging buffers.
void CopyBytes(void* dst, int dst_device, const void* src, int src_device, int64_t nbytes);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_COPY_H_
