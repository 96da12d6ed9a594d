// copy.h in a build without CUDA: host-to-host CopyBytes works, every use of a device
// refuses (kernels/cuda/runtime.h: there are no devices).

#include <cstring>

#include "kernels/cuda/copy.h"
#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda {

void CopyBytes(void* dst, int dst_device, const void* src, int src_device, int64_t nbytes) {
  if (dst_device != kHost) CheckDevice(dst_device);  // throws: there are no devices
  if (src_device != kHost) CheckDevice(src_device);
  if (nbytes > 0) std::memcpy(dst, src, nbytes);
}

}  // namespace ember::kernels::cuda
