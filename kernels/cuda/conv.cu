// kernels/conv.h on the GPU, as direct convolution: every result element is one
// thread that sums its terms in a fixed order, so results repeat exactly (no atomics)
// and nothing is unrolled into a columns buffer.
//   y[n, o, oy, ox]  = b[o] + sum_{c, i, j} w[o, c, i, j] x[n, c, iy, ix]
//   dx[n, c, iy, ix] = sum over (o, i, j) of the outputs that read it: w dy
//   dw[o, c, i, j]   = sum_{n, oy, ox} dy[n, o, oy, ox] x[n, c, iy, ix]
//   db[o]            = sum_{n, oy, ox} dy[n, o, oy, ox]
// with iy = oy stride - pad + i dilation (likewise ix); inputs outside the image are 0.
// (A fast GPU convolution is implicit GEMM, as cuDNN's; these are the readable ones.)

#include <cuda_runtime.h>

#include "kernels/conv.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"

namespace ember::kernels::cuda {
namespace {

using internal::DispatchFloat;
using internal::kThreads;

template <typename T>
__global__ void ConvForwardKernel(int64_t n, int64_t c, int64_t o, Window2d w, int64_t oh,
                                  int64_t ow, const T* x, const T* weight, const T* b, T* y) {
  EMBER_GRID_STRIDE(e, n * o * oh * ow) {
    const int64_t ox = e % ow, oy = e / ow % oh, oc = e / (ow * oh) % o, img = e / (ow * oh * o);
    T sum = b != nullptr ? b[oc] : T(0);
    for (int64_t ic = 0; ic < c; ++ic) {
      const T* plane = x + (img * c + ic) * w.height * w.width;
      const T* kernel = weight + (oc * c + ic) * w.kernel_h * w.kernel_w;
      w.ForEachInput(oy, ox, [&](int64_t k, int64_t at) { sum += kernel[k] * plane[at]; });
    }
    y[e] = sum;
  }
}

template <typename T>
__global__ void ConvDxKernel(int64_t n, int64_t c, int64_t o, Window2d w, int64_t oh, int64_t ow,
                             const T* weight, const T* dy, T* dx) {
  EMBER_GRID_STRIDE(e, n * c * w.height * w.width) {
    const int64_t ix = e % w.width, iy = e / w.width % w.height, ic = e / (w.width * w.height) % c,
                  img = e / (w.width * w.height * c);
    T sum = 0;
    for (int64_t oc = 0; oc < o; ++oc) {
      const T* kernel = weight + (oc * c + ic) * w.kernel_h * w.kernel_w;
      const T* grad = dy + (img * o + oc) * oh * ow;
      for (int64_t i = 0; i < w.kernel_h; ++i) {
        const int64_t sy = iy + w.pad_h - i * w.dilation_h;
        if (sy < 0 || sy % w.stride_h != 0 || sy / w.stride_h >= oh) continue;
        for (int64_t j = 0; j < w.kernel_w; ++j) {
          const int64_t sx = ix + w.pad_w - j * w.dilation_w;
          if (sx < 0 || sx % w.stride_w != 0 || sx / w.stride_w >= ow) continue;
          sum += kernel[i * w.kernel_w + j] * grad[(sy / w.stride_h) * ow + sx / w.stride_w];
        }
      }
    }
    dx[e] = sum;
  }
}

template <typename T>
__global__ void ConvDwKernel(int64_t n, int64_t c, int64_t o, Window2d w, int64_t oh, int64_t ow,
                             const T* x, const T* dy, T* dw) {
  const int64_t taps = w.kernel_h * w.kernel_w;
  EMBER_GRID_STRIDE(e, o * c * taps) {
    const int64_t j = e % w.kernel_w, i = e / w.kernel_w % w.kernel_h, ic = e / taps % c,
                  oc = e / (taps * c);
    double sum = 0;
    for (int64_t img = 0; img < n; ++img) {
      const T* plane = x + (img * c + ic) * w.height * w.width;
      const T* grad = dy + (img * o + oc) * oh * ow;
      for (int64_t oy = 0; oy < oh; ++oy) {
        const int64_t iy = oy * w.stride_h - w.pad_h + i * w.dilation_h;
        if (iy < 0 || iy >= w.height) continue;
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t ix = ox * w.stride_w - w.pad_w + j * w.dilation_w;
          if (ix < 0 || ix >= w.width) continue;
          sum += static_cast<double>(grad[oy * ow + ox]) * plane[iy * w.width + ix];
        }
      }
    }
    dw[e] = static_cast<T>(sum);
  }
}

template <typename T>
__global__ void ConvDbKernel(int64_t n, int64_t o, int64_t outputs, const T* dy, T* db) {
  EMBER_GRID_STRIDE(oc, o) {
    double sum = 0;
    for (int64_t img = 0; img < n; ++img) {
      for (int64_t q = 0; q < outputs; ++q) sum += dy[(img * o + oc) * outputs + q];
    }
    db[oc] = static_cast<T>(sum);
  }
}

}  // namespace

void Conv2dForward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                   const void* x, const void* w, const void* b, void* y) {
  const int64_t outputs = n * o * window.out_h() * window.out_w();
  if (outputs <= 0) return;
  DispatchFloat("conv2d", dtype, [&](auto type) {
    using T = decltype(type);
    ConvForwardKernel<<<internal::Blocks(outputs), kThreads>>>(
        n, c, o, window, window.out_h(), window.out_w(), static_cast<const T*>(x),
        static_cast<const T*>(w), static_cast<const T*>(b), static_cast<T*>(y));
  });
  EMBER_CUDA_CHECK_LAUNCH("conv2d");
}

void Conv2dBackward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                    const void* x, const void* w, const void* dy, void* dx, void* dw, void* db) {
  const int64_t outputs = window.out_h() * window.out_w();
  DispatchFloat("conv2d_backward", dtype, [&](auto type) {
    using T = decltype(type);
    const int64_t inputs = n * c * window.height * window.width;
    if (dx != nullptr && inputs > 0) {
      ConvDxKernel<<<internal::Blocks(inputs), kThreads>>>(
          n, c, o, window, window.out_h(), window.out_w(), static_cast<const T*>(w),
          static_cast<const T*>(dy), static_cast<T*>(dx));
    }
    const int64_t weights = o * c * window.kernel_h * window.kernel_w;
    if (weights > 0) {
      ConvDwKernel<<<internal::Blocks(weights), kThreads>>>(
          n, c, o, window, window.out_h(), window.out_w(), static_cast<const T*>(x),
          static_cast<const T*>(dy), static_cast<T*>(dw));
    }
    if (db != nullptr && o > 0) {
      ConvDbKernel<<<internal::Blocks(o), kThreads>>>(n, o, outputs, static_cast<const T*>(dy),
                                                      static_cast<T*>(db));
    }
  });
  EMBER_CUDA_CHECK_LAUNCH("conv2d_backward");
}

}  // namespace ember::kernels::cuda
