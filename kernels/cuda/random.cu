// kernels/random.h on the GPU: one thread per value, each computing the Philox
// block of its words (kernels/philox.h, the same code as the host's), so a seed and
// offset give the same numbers as the CPU and as tensor/random.h's Generator.

#include <cuda_runtime.h>

#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/philox.h"
#include "kernels/random.h"

namespace ember::kernels::cuda {
namespace {

template <typename T>
__global__ void UniformKernel(int64_t n, uint64_t seed, uint64_t offset, int bits, T* out) {
  const uint64_t words = PhiloxWordsPer(bits);
  PhiloxStream stream(seed);
  EMBER_GRID_STRIDE(i, n) {
    out[i] = internal::Cast<T>(stream.Uniform(offset + static_cast<uint64_t>(i) * words, bits));
  }
}

}  // namespace

void UniformFill(DType dtype, int64_t n, uint64_t seed, uint64_t offset, void* out) {
  const int bits = UniformBits(dtype);
  if (n == 0) return;
  internal::VisitDeviceType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || internal::kIsHalf<T>) {
      UniformKernel<<<internal::Blocks(n), internal::kThreads>>>(n, seed, offset, bits,
                                                                 static_cast<T*>(out));
    }
  });
  EMBER_CUDA_CHECK_LAUNCH("rand");
}

}  // namespace ember::kernels::cuda
