// kernels/adamw.h on the GPU: the same per-step constants (AdamWConstants in
// kernels/operands.h) and the same operations per element, one thread per element.
// (nvcc may fuse a multiply and an add into one FMA, so results can differ from the
// CPU's in the last bit.)

#include <cuda_runtime.h>

#include <cmath>

#include "kernels/adamw.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"

namespace ember::kernels::cuda {
namespace {

template <typename T>
__global__ void AdamWKernel(int64_t n, T* p, const T* g, T* m, T* v, AdamWConstants<T> k) {
  EMBER_GRID_STRIDE(i, n) {
    const T gi = g[i] * k.grad_scale;
    const T mi = m[i] * k.beta1 + gi * k.one_minus_beta1;
    const T vi = v[i] * k.beta2 + gi * gi * k.one_minus_beta2;
    p[i] = p[i] * k.decay + k.neg_step_size * (mi / (sqrt(vi) / k.bc2_sqrt + k.eps));
    m[i] = mi;
    v[i] = vi;
  }
}

}  // namespace

void AdamWStep(DType dtype, int64_t n, void* p, const void* g, void* m, void* v,
               const AdamWHyper& h) {
  EMBER_CHECK(h.step >= 1, "adamw: step must start at 1, got ", h.step);
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64, "adamw: dtype ", DTypeName(dtype),
              " is not supported (f32 or f64)");
  if (n == 0) return;
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const AdamWConstants<T> k = AdamWConstants<T>::Of(h);
      AdamWKernel<<<internal::Blocks(n), internal::kThreads>>>(
          n, static_cast<T*>(p), static_cast<const T*>(g), static_cast<T*>(m), static_cast<T*>(v),
          k);
    }
  });
  EMBER_CUDA_CHECK_LAUNCH("adamw");
}

}  // namespace ember::kernels::cuda
