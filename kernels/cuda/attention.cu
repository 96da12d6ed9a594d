// kernels/cpu/attention.h on the GPU, from the same equations. Forward and dQ: one
// block per query row, its visible scores and probabilities in shared memory. dK and
// dV: one block per key row, summing over the queries that see it in order, so no
// float atomics and the same result every run. Each reads its operands straight from
// global memory (no tiling): a plain kernel to check and to read, not a fast one.

#include <cuda_runtime.h>

#include "base/error.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/cuda/kernels.h"

namespace ember::kernels::cuda {
namespace {

using internal::BlockReduce;
using internal::kThreads;
using internal::MaxOp;
using internal::RowBlocks;
using internal::SumOp;
using internal::VisitFloat;

// Two arrays of up to tk scores per block live in shared memory: 48 KiB by default.
constexpr int64_t kSharedBytes = 48 * 1024;

template <typename T>
__device__ T Dot(const T* a, const T* b, int64_t d) {
  T sum = 0;
  for (int64_t c = 0; c < d; ++c) sum += a[c] * b[c];
  return sum;
}

// Row r = (head, query i): s_j = q_i . k_j / sqrt(d) for the visible j, p = softmax(s),
// y_i = sum_j p_j v_j, lse_i = m + log sum_j exp(s_j - m).
template <typename T>
__global__ void ForwardKernel(int64_t rows, int64_t tq, int64_t tk, int64_t d, const T* q, const T* k,
                              const T* v, T* y, T* lse) {
  extern __shared__ unsigned char shared[];
  T* p = reinterpret_cast<T*>(shared);
  const T scale = T(1) / sqrt(T(d));
  EMBER_FOR_EACH_ROW(r, rows) {
    const int64_t head = r / tq, i = r % tq, visible = i + tk - tq + 1;
    const T* qi = q + r * d;
    const T* kh = k + head * tk * d;
    const T* vh = v + head * tk * d;
    T max = -INFINITY;
    for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
      p[j] = Dot(qi, kh + j * d, d) * scale;
      max = MaxOp{}(max, p[j]);
    }
    const T m = BlockReduce(max, MaxOp{}, T(-INFINITY));
    double sum = 0;
    for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
      p[j] = exp(p[j] - m);
      sum += p[j];
    }
    const double s = BlockReduce(sum, SumOp{}, 0.0);  // ends with __syncthreads: p is whole
    for (int64_t c = threadIdx.x; c < d; c += blockDim.x) {
      T acc = 0;
      for (int64_t j = 0; j < visible; ++j) acc += p[j] * vh[j * d + c];
      y[r * d + c] = acc / static_cast<T>(s);
    }
    if (threadIdx.x == 0) lse[r] = m + static_cast<T>(log(s));
    __syncthreads();  // p is rewritten by the next row
  }
}

// P_ij = exp(s_ij - lse_i) and dS_ij / sqrt(d) = P_ij (dY_i . V_j - D_i) / sqrt(d),
// with D_i = dY_i . Y_i.
template <typename T>
__device__ void ScoreGrads(int64_t i, int64_t j, int64_t d, T scale, const T* q, const T* kh, const T* vh,
                           const T* y, const T* lse, const T* dy, T* p, T* ds) {
  *p = exp(Dot(q + i * d, kh + j * d, d) * scale - lse[i]);
  *ds = *p * (Dot(dy + i * d, vh + j * d, d) - Dot(dy + i * d, y + i * d, d)) * scale;
}

// Row r = (head, query i): dq_i = sum_j dS_ij k_j / sqrt(d).
template <typename T>
__global__ void QueryGradKernel(int64_t rows, int64_t tq, int64_t tk, int64_t d, const T* q, const T* k,
                                const T* v, const T* y, const T* lse, const T* dy, T* dq) {
  extern __shared__ unsigned char shared[];
  T* ds = reinterpret_cast<T*>(shared);
  const T scale = T(1) / sqrt(T(d));
  EMBER_FOR_EACH_ROW(r, rows) {
    const int64_t head = r / tq, i = r % tq, visible = i + tk - tq + 1;
    const T* kh = k + head * tk * d;
    const T* vh = v + head * tk * d;
    const int64_t base = head * tq;  // the head's first query row
    for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
      T p;
      ScoreGrads(i, j, d, scale, q + base * d, kh, vh, y + base * d, lse + base, dy + base * d, &p, &ds[j]);
    }
    __syncthreads();
    for (int64_t c = threadIdx.x; c < d; c += blockDim.x) {
      T acc = 0;
      for (int64_t j = 0; j < visible; ++j) acc += ds[j] * kh[j * d + c];
      dq[r * d + c] = acc;
    }
    __syncthreads();
  }
}

// Row r = (head, key j), seen by the queries i >= j - (tk - tq):
// dk_j = sum_i dS_ij q_i / sqrt(d),  dv_j = sum_i P_ij dy_i.
template <typename T>
__global__ void KeyGradKernel(int64_t rows, int64_t tq, int64_t tk, int64_t d, const T* q, const T* k,
                              const T* v, const T* y, const T* lse, const T* dy, T* dk, T* dv) {
  extern __shared__ unsigned char shared[];
  T* p = reinterpret_cast<T*>(shared);
  T* ds = p + tq;
  const T scale = T(1) / sqrt(T(d));
  EMBER_FOR_EACH_ROW(r, rows) {
    const int64_t head = r / tk, j = r % tk, first = j - (tk - tq) > 0 ? j - (tk - tq) : 0;
    const T* qh = q + head * tq * d;
    const T* yh = y + head * tq * d;
    const T* dyh = dy + head * tq * d;
    for (int64_t i = first + threadIdx.x; i < tq; i += blockDim.x) {
      ScoreGrads(i, j, d, scale, qh, k + head * tk * d, v + head * tk * d, yh, lse + head * tq, dyh, &p[i],
                 &ds[i]);
    }
    __syncthreads();
    for (int64_t c = threadIdx.x; c < d; c += blockDim.x) {
      T dk_acc = 0, dv_acc = 0;
      for (int64_t i = first; i < tq; ++i) {
        dk_acc += ds[i] * qh[i * d + c];
        dv_acc += p[i] * dyh[i * d + c];
      }
      dk[r * d + c] = dk_acc;
      dv[r * d + c] = dv_acc;
    }
    __syncthreads();
  }
}

template <typename T>
void CheckShared(const char* op, int64_t scores) {
  EMBER_CHECK(scores * static_cast<int64_t>(sizeof(T)) <= kSharedBytes, op, ": ", scores,
              " scores a row do not fit the CUDA kernel's ", kSharedBytes, " bytes of shared memory");
}

}  // namespace

void CausalAttentionForward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d, const void* q,
                            const void* k, const void* v, void* y, void* lse) {
  if (batch == 0 || tq == 0) return;
  VisitFloat("causal_attention", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CheckShared<T>("causal_attention", tk);
    const int64_t rows = batch * tq;
    ForwardKernel<T><<<RowBlocks(rows), kThreads, tk * sizeof(T)>>>(
        rows, tq, tk, d, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
        static_cast<T*>(y), static_cast<T*>(lse));
  });
  EMBER_CUDA_CHECK_LAUNCH("causal_attention");
}

void CausalAttentionBackward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d, const void* q,
                             const void* k, const void* v, const void* y, const void* lse, const void* dy,
                             void* dq, void* dk, void* dv) {
  if (batch == 0 || tk == 0) return;
  VisitFloat("causal_attention_backward", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CheckShared<T>("causal_attention_backward", tk > 2 * tq ? tk : 2 * tq);
    const T *qt = static_cast<const T*>(q), *kt = static_cast<const T*>(k), *vt = static_cast<const T*>(v);
    const T *yt = static_cast<const T*>(y), *lt = static_cast<const T*>(lse), *gt = static_cast<const T*>(dy);
    if (tq > 0) {
      QueryGradKernel<T><<<RowBlocks(batch * tq), kThreads, tk * sizeof(T)>>>(batch * tq, tq, tk, d, qt, kt, vt,
                                                                             yt, lt, gt, static_cast<T*>(dq));
    }
    KeyGradKernel<T><<<RowBlocks(batch * tk), kThreads, 2 * tq * sizeof(T)>>>(
        batch * tk, tq, tk, d, qt, kt, vt, yt, lt, gt, static_cast<T*>(dk), static_cast<T*>(dv));
  });
  EMBER_CUDA_CHECK_LAUNCH("causal_attention_backward");
}

}  // namespace ember::kernels::cuda
