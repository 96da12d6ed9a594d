// kernels/pool.h on the GPU. The forward runs one thread per output: the window's
// first input, then each later one that is greater or NaN (so the first maximum and
// the last NaN win, as on the CPU and in PyTorch). The backward gathers instead of
// scattering: one thread per input adds the dy of every output whose argmax is that
// input, in increasing output order (the CPU's order), with no atomics.

#include <cuda_runtime.h>

#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/pool.h"

namespace ember::kernels::cuda {
namespace {

using internal::DispatchFloat;
using internal::kThreads;

template <typename T>
__global__ void MaxPoolForwardKernel(int64_t planes, Window2d w, int64_t oh, int64_t ow, const T* x,
                                     T* y, int64_t* argmax) {
  const int64_t outputs = oh * ow;
  EMBER_GRID_STRIDE(q, planes * outputs) {
    const int64_t p = q / outputs, oy = q % outputs / ow, ox = q % ow;
    const T* plane = x + p * w.height * w.width;
    int64_t best = -1;
    w.ForEachInput(oy, ox, [&](int64_t, int64_t at) {
      const T v = plane[at];
      if (best < 0 || v > plane[best] || v != v) best = at;
    });
    y[q] = plane[best];
    argmax[q] = best;
  }
}

template <typename T>
__global__ void MaxPoolBackwardKernel(int64_t planes, Window2d w, int64_t oh, int64_t ow,
                                      const int64_t* argmax, const T* dy, T* dx) {
  const int64_t inputs = w.height * w.width;
  EMBER_GRID_STRIDE(e, planes * inputs) {
    const int64_t p = e / inputs, iy = e % inputs / w.width, ix = e % w.width;
    const int64_t at = iy * w.width + ix;
    T sum = 0;
    // Outputs whose window reads (iy, ix), in increasing (oy, ox): i and j downwards.
    for (int64_t i = w.kernel_h - 1; i >= 0; --i) {
      const int64_t sy = iy + w.pad_h - i * w.dilation_h;
      if (sy < 0 || sy % w.stride_h != 0 || sy / w.stride_h >= oh) continue;
      const int64_t oy = sy / w.stride_h;
      for (int64_t j = w.kernel_w - 1; j >= 0; --j) {
        const int64_t sx = ix + w.pad_w - j * w.dilation_w;
        if (sx < 0 || sx % w.stride_w != 0 || sx / w.stride_w >= ow) continue;
        const int64_t k = p * oh * ow + oy * ow + sx / w.stride_w;
        if (argmax[k] == at) sum += dy[k];
      }
    }
    dx[e] = sum;
  }
}

// Clears *all_valid where an argmax entry lies outside its plane.
__global__ void CheckArgmaxKernel(int64_t count, int64_t inputs, const int64_t* argmax,
                                  int* all_valid) {
  EMBER_GRID_STRIDE(k, count) {
    if (argmax[k] < 0 || argmax[k] >= inputs) *all_valid = 0;
  }
}

}  // namespace

void MaxPool2dForward(DType dtype, int64_t planes, const Window2d& window, const void* x, void* y,
                      int64_t* argmax) {
  const int64_t outputs = planes * window.out_h() * window.out_w();
  if (outputs <= 0) return;
  DispatchFloat("max_pool2d", dtype, [&](auto type) {
    using T = decltype(type);
    MaxPoolForwardKernel<<<internal::Blocks(outputs), kThreads>>>(
        planes, window, window.out_h(), window.out_w(), static_cast<const T*>(x),
        static_cast<T*>(y), argmax);
  });
  EMBER_CUDA_CHECK_LAUNCH("max_pool2d");
}

bool MaxPool2dBackward(DType dtype, int64_t planes, const Window2d& window, const int64_t* argmax,
                       const void* dy, void* dx) {
  const int64_t inputs = window.height * window.width;
  const int64_t outputs = planes * window.out_h() * window.out_w();
  if (planes * inputs <= 0) return true;
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device), "max_pool2d_backward");
  const ScopedAllocation flag(device, sizeof(int));
  const int one = 1;
  EMBER_CUDA_CHECK(cudaMemcpy(flag.as<int>(), &one, sizeof(int), cudaMemcpyHostToDevice),
                   "max_pool2d_backward");
  if (outputs > 0) {
    CheckArgmaxKernel<<<internal::Blocks(outputs), kThreads>>>(outputs, inputs, argmax,
                                                               flag.as<int>());
  }
  DispatchFloat("max_pool2d_backward", dtype, [&](auto type) {
    using T = decltype(type);
    MaxPoolBackwardKernel<<<internal::Blocks(planes * inputs), kThreads>>>(
        planes, window, window.out_h(), window.out_w(), argmax, static_cast<const T*>(dy),
        static_cast<T*>(dx));
  });
  EMBER_CUDA_CHECK_LAUNCH("max_pool2d_backward");
  int all_valid = 0;
  EMBER_CUDA_CHECK(cudaMemcpy(&all_valid, flag.as<int>(), sizeof(int), cudaMemcpyDeviceToHost),
                   "max_pool2d_backward");
  return all_valid == 1;
}

}  // namespace ember::kernels::cuda
