// kernels/recurrent.h on the GPU: one thread per (b, j) of [batch, H], computing every
// gate of that unit, so a step reads each operand once and writes each result once.

#include <cuda_runtime.h>

#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/recurrent.h"

namespace ember::kernels::cuda {
namespace {

using internal::kThreads;

// 1 / (1 + e^-z) through e = exp(-|z|) <= 1, which never overflows (as the CPU's
// StableSigmoid).
template <typename T>
__device__ T Sigmoid(T z) {
  const T e = exp(-fabs(z));
  return (z < T(0) ? e : T(1)) / (T(1) + e);
}

template <typename T>
__global__ void LstmForwardKernel(int64_t batch, int64_t H, const T* gx, const T* gh, const T* c,
                                  T* h_out, T* c_out, T* ws) {
  EMBER_GRID_STRIDE(k, batch * H) {
    const int64_t b = k / H, j = k % H, row = b * 4 * H + j;
    const T i = Sigmoid(gx[row] + gh[row]);
    const T f = Sigmoid(gx[row + H] + gh[row + H]);
    const T g = tanh(gx[row + 2 * H] + gh[row + 2 * H]);
    const T o = Sigmoid(gx[row + 3 * H] + gh[row + 3 * H]);
    const T cn = f * c[k] + i * g;
    c_out[k] = cn;
    h_out[k] = o * tanh(cn);
    ws[row] = i;
    ws[row + H] = f;
    ws[row + 2 * H] = g;
    ws[row + 3 * H] = o;
  }
}

template <typename T>
__global__ void LstmBackwardKernel(int64_t batch, int64_t H, const T* dh, const T* dc, const T* c,
                                   const T* c_out, const T* ws, T* da, T* dc_prev) {
  EMBER_GRID_STRIDE(k, batch * H) {
    const int64_t b = k / H, j = k % H, row = b * 4 * H + j;
    const T i = ws[row], f = ws[row + H], g = ws[row + 2 * H], o = ws[row + 3 * H];
    const T t = tanh(c_out[k]);
    const T dct = (dc ? dc[k] : T(0)) + dh[k] * o * (T(1) - t * t);
    da[row] = dct * g * i * (T(1) - i);
    da[row + H] = dct * c[k] * f * (T(1) - f);
    da[row + 2 * H] = dct * i * (T(1) - g * g);
    da[row + 3 * H] = dh[k] * t * o * (T(1) - o);
    dc_prev[k] = dct * f;
  }
}

template <typename T>
__global__ void GruForwardKernel(int64_t batch, int64_t H, const T* gx, const T* gh, const T* h,
                                 T* h_out, T* ws) {
  EMBER_GRID_STRIDE(k, batch * H) {
    const int64_t b = k / H, j = k % H, row = b * 3 * H + j, w = b * 4 * H + j;
    const T r = Sigmoid(gx[row] + gh[row]);
    const T z = Sigmoid(gx[row + H] + gh[row + H]);
    const T hn = gh[row + 2 * H];
    const T n = tanh(gx[row + 2 * H] + r * hn);
    h_out[k] = n + z * (h[k] - n);
    ws[w] = r;
    ws[w + H] = z;
    ws[w + 2 * H] = n;
    ws[w + 3 * H] = hn;
  }
}

template <typename T>
__global__ void GruBackwardKernel(int64_t batch, int64_t H, const T* dh, const T* h, const T* ws,
                                  T* dx, T* dhg, T* dh_prev) {
  EMBER_GRID_STRIDE(k, batch * H) {
    const int64_t b = k / H, j = k % H, row = b * 3 * H + j, w = b * 4 * H + j;
    const T r = ws[w], z = ws[w + H], n = ws[w + 2 * H], hn = ws[w + 3 * H];
    const T dn = dh[k] * (T(1) - z) * (T(1) - n * n);
    const T dr = dn * hn * r * (T(1) - r);
    const T dz = dh[k] * (h[k] - n) * z * (T(1) - z);
    dx[row] = dhg[row] = dr;
    dx[row + H] = dhg[row + H] = dz;
    dx[row + 2 * H] = dn;
    dhg[row + 2 * H] = dn * r;
    dh_prev[k] = dh[k] * z;
  }
}

}  // namespace

void LstmCellForward(DType dtype, int64_t batch, int64_t hidden, const void* gates_x,
                     const void* gates_h, const void* c, void* h_out, void* c_out,
                     void* workspace) {
  if (batch == 0 || hidden == 0) return;
  internal::DispatchFloat("lstm_cell", dtype, [&](auto type) {
    using T = decltype(type);
    LstmForwardKernel<<<internal::Blocks(batch * hidden), kThreads>>>(
        batch, hidden, static_cast<const T*>(gates_x), static_cast<const T*>(gates_h),
        static_cast<const T*>(c), static_cast<T*>(h_out), static_cast<T*>(c_out),
        static_cast<T*>(workspace));
  });
  EMBER_CUDA_CHECK_LAUNCH("lstm_cell");
}

void LstmCellBackward(DType dtype, int64_t batch, int64_t hidden, const void* dh, const void* dc,
                      const void* c, const void* c_out, const void* workspace, void* dgates,
                      void* dc_prev) {
  if (batch == 0 || hidden == 0) return;
  internal::DispatchFloat("lstm_cell_backward", dtype, [&](auto type) {
    using T = decltype(type);
    LstmBackwardKernel<<<internal::Blocks(batch * hidden), kThreads>>>(
        batch, hidden, static_cast<const T*>(dh), static_cast<const T*>(dc),
        static_cast<const T*>(c), static_cast<const T*>(c_out), static_cast<const T*>(workspace),
        static_cast<T*>(dgates), static_cast<T*>(dc_prev));
  });
  EMBER_CUDA_CHECK_LAUNCH("lstm_cell_backward");
}

void GruCellForward(DType dtype, int64_t batch, int64_t hidden, const void* gates_x,
                    const void* gates_h, const void* h, void* h_out, void* workspace) {
  if (batch == 0 || hidden == 0) return;
  internal::DispatchFloat("gru_cell", dtype, [&](auto type) {
    using T = decltype(type);
    GruForwardKernel<<<internal::Blocks(batch * hidden), kThreads>>>(
        batch, hidden, static_cast<const T*>(gates_x), static_cast<const T*>(gates_h),
        static_cast<const T*>(h), static_cast<T*>(h_out), static_cast<T*>(workspace));
  });
  EMBER_CUDA_CHECK_LAUNCH("gru_cell");
}

void GruCellBackward(DType dtype, int64_t batch, int64_t hidden, const void* dh, const void* h,
                     const void* workspace, void* dgates_x, void* dgates_h, void* dh_prev) {
  if (batch == 0 || hidden == 0) return;
  internal::DispatchFloat("gru_cell_backward", dtype, [&](auto type) {
    using T = decltype(type);
    GruBackwardKernel<<<internal::Blocks(batch * hidden), kThreads>>>(
        batch, hidden, static_cast<const T*>(dh), static_cast<const T*>(h),
        static_cast<const T*>(workspace), static_cast<T*>(dgates_x), static_cast<T*>(dgates_h),
        static_cast<T*>(dh_prev));
  });
  EMBER_CUDA_CHECK_LAUNCH("gru_cell_backward");
}

}  // namespace ember::kernels::cuda
