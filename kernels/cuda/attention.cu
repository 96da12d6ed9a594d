// kernels/cpu/attention.h on the GPU, from the same equations, in flash attention's
// tiles (Dao et al. 2022): no T x T matrix is ever in memory, and a tile of keys and
// values read into shared memory serves a whole tile of queries.
//
// Tiles are kTile = 32 rows; a block of 8 warps owns one tile and each warp 4 of its
// rows. Within a warp, a score S_ij lives in lane j (or i, for dK and dV), so a row's
// max and sum are warp shuffles, and lane x holds column x of the row's output,
// accumulated in shared memory. Tiles are stored with rows of d + 1 elements, so 32
// lanes reading 32 rows at one column hit 32 banks.
//
//   forward  (query tile): for each key tile, S, the online softmax (running max m and
//            sum l, rescaling the output by exp(m_old - m_new)), O += P V; then
//            Y = O / l and lse = m + log l.
//   dQ       (query tile): for each key tile, P = exp(S - lse), dS = P (dY V^T - D),
//            dQ += dS K / sqrt(d).
//   dK, dV   (key tile): for each query tile that sees it, the same P and dS,
//            dV += P^T dY, dK += dS^T Q / sqrt(d).
//
// The two backward kernels recompute P rather than share it, so that every sum has one
// owner and runs in one order: no float atomics, the same result every run.

#include <cuda_runtime.h>

#include <algorithm>

#include "base/error.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/cuda/kernels.h"

namespace ember::kernels::cuda {
namespace {

using internal::VisitFloat;

constexpr int kTile = 32;  // query or key rows a tile: one per lane
constexpr int kWarps = 8;
constexpr int kRowsPerWarp = kTile / kWarps;
constexpr unsigned kAll = 0xffffffffu;

template <typename T>
__device__ T WarpMax(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v = max(v, __shfl_xor_sync(kAll, v, offset));
  return v;
}
template <typename T>
__device__ T WarpSum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kAll, v, offset);
  return v;
}

// tile [kTile, d + 1] = rows [row0, row0 + kTile) of m [rows, d], zeros past the last
// row. Consecutive threads read consecutive elements.
template <typename T>
__device__ void LoadTile(const T* m, int64_t row0, int64_t rows, int64_t d, T* tile) {
  for (int64_t e = threadIdx.x; e < kTile * d; e += blockDim.x) {
    const int64_t r = e / d, x = e % d;
    tile[r * (d + 1) + x] = row0 + r < rows ? m[(row0 + r) * d + x] : T(0);
  }
}

template <typename T>
__device__ void ZeroTile(int64_t d, T* tile) {
  for (int64_t e = threadIdx.x; e < kTile * (d + 1); e += blockDim.x) tile[e] = 0;
}

template <typename T>
__device__ T TileDot(const T* a, const T* b, int64_t d) {
  T sum = 0;
  for (int64_t x = 0; x < d; ++x) sum += a[x] * b[x];
  return sum;
}

// out[r * (d + 1) + x] += sum_c w_c rows[c * (d + 1) + x] for the warp's row r, where
// lane c holds w_c. Every lane runs every shuffle; lane x owns column x (+ 32, ...).
template <typename T>
__device__ void AddWeightedRows(T w, const T* rows, int64_t d, T* out_row) {
  const int lane = threadIdx.x % 32;
  for (int64_t x0 = 0; x0 < d; x0 += 32) {
    const int64_t x = x0 + lane;
    T acc = 0;
    for (int c = 0; c < kTile; ++c) {
      const T wc = __shfl_sync(kAll, w, c);
      if (x < d) acc += wc * rows[c * (d + 1) + x];
    }
    if (x < d) out_row[x] += acc;
  }
}

// Block b: head b / tiles, query rows [32 (b % tiles), + 32). Shared: Q, K, V, O tiles.
template <typename T>
__global__ void ForwardKernel(int64_t tiles, int64_t tq, int64_t tk, int64_t d, const T* q, const T* k,
                              const T* v, T* y, T* lse) {
  extern __shared__ unsigned char shared[];
  const int64_t ld = d + 1;
  T* qs = reinterpret_cast<T*>(shared);
  T* ks = qs + kTile * ld;
  T* vs = ks + kTile * ld;
  T* os = vs + kTile * ld;
  const int64_t head = blockIdx.x / tiles, q0 = blockIdx.x % tiles * kTile, offset = tk - tq;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const T scale = T(1) / sqrt(T(d));
  q += head * tq * d;
  y += head * tq * d;
  lse += head * tq;
  k += head * tk * d;
  v += head * tk * d;
  LoadTile(q, q0, tq, d, qs);
  ZeroTile(d, os);
  T m[kRowsPerWarp], l[kRowsPerWarp];
  for (int i = 0; i < kRowsPerWarp; ++i) {
    m[i] = -INFINITY;
    l[i] = 0;
  }
  // Up to the last key the tile's last query sees. Key 0, in the first key tile, is
  // seen by every query (offset >= 0), so each row's max is finite from the start.
  const int64_t key_end = std::min(tk, std::min(q0 + kTile, tq) + offset);
  for (int64_t k0 = 0; k0 < key_end; k0 += kTile) {
    __syncthreads();  // the last tile's readers are done (and qs, os are written)
    LoadTile(k, k0, tk, d, ks);
    LoadTile(v, k0, tk, d, vs);
    __syncthreads();
    const int64_t j = k0 + lane;
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const int r = warp * kRowsPerWarp + i;
      const T s = j < tk && j <= q0 + r + offset ? TileDot(qs + r * ld, ks + lane * ld, d) * scale : T(-INFINITY);
      const T m_new = max(m[i], WarpMax(s));
      const T p = exp(s - m_new), alpha = exp(m[i] - m_new);  // alpha = 0 on the first tile
      l[i] = l[i] * alpha + WarpSum(p);
      m[i] = m_new;
      for (int64_t x = lane; x < d; x += 32) os[r * ld + x] *= alpha;
      AddWeightedRows(p, vs, d, os + r * ld);
    }
  }
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int r = warp * kRowsPerWarp + i;
    if (q0 + r >= tq) continue;
    for (int64_t x = lane; x < d; x += 32) y[(q0 + r) * d + x] = os[r * ld + x] / l[i];
    if (lane == 0) lse[q0 + r] = m[i] + log(l[i]);
  }
}

// D_r = dY_r . Y_r, a warp a row.
template <typename T>
__global__ void RowDotKernel(int64_t rows, int64_t d, const T* dy, const T* y, T* out) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32; r < rows; r += warps) {
    T sum = 0;
    for (int64_t x = lane; x < d; x += 32) sum += dy[r * d + x] * y[r * d + x];
    sum = WarpSum(sum);
    if (lane == 0) out[r] = sum;
  }
}

// Block b: head b / tiles, query rows [32 (b % tiles), + 32). Shared: Q, dY, K, V, dQ.
template <typename T>
__global__ void QueryGradKernel(int64_t tiles, int64_t tq, int64_t tk, int64_t d, const T* q, const T* k,
                                const T* v, const T* lse, const T* dsum, const T* dy, T* dq) {
  extern __shared__ unsigned char shared[];
  const int64_t ld = d + 1;
  T* qs = reinterpret_cast<T*>(shared);
  T* dys = qs + kTile * ld;
  T* ks = dys + kTile * ld;
  T* vs = ks + kTile * ld;
  T* dqs = vs + kTile * ld;
  const int64_t head = blockIdx.x / tiles, q0 = blockIdx.x % tiles * kTile, offset = tk - tq;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const T scale = T(1) / sqrt(T(d));
  q += head * tq * d;
  dy += head * tq * d;
  dq += head * tq * d;
  lse += head * tq;
  dsum += head * tq;
  k += head * tk * d;
  v += head * tk * d;
  LoadTile(q, q0, tq, d, qs);
  LoadTile(dy, q0, tq, d, dys);
  ZeroTile(d, dqs);
  T row_lse[kRowsPerWarp], row_d[kRowsPerWarp];
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int64_t qi = q0 + warp * kRowsPerWarp + i;
    row_lse[i] = qi < tq ? lse[qi] : T(0);
    row_d[i] = qi < tq ? dsum[qi] : T(0);
  }
  const int64_t key_end = std::min(tk, std::min(q0 + kTile, tq) + offset);
  for (int64_t k0 = 0; k0 < key_end; k0 += kTile) {
    __syncthreads();
    LoadTile(k, k0, tk, d, ks);
    LoadTile(v, k0, tk, d, vs);
    __syncthreads();
    const int64_t j = k0 + lane;
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const int r = warp * kRowsPerWarp + i;
      T ds = 0;
      if (q0 + r < tq && j < tk && j <= q0 + r + offset) {
        const T p = exp(TileDot(qs + r * ld, ks + lane * ld, d) * scale - row_lse[i]);
        ds = p * (TileDot(dys + r * ld, vs + lane * ld, d) - row_d[i]) * scale;
      }
      AddWeightedRows(ds, ks, d, dqs + r * ld);
    }
  }
  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int r = warp * kRowsPerWarp + i;
    if (q0 + r >= tq) continue;
    for (int64_t x = lane; x < d; x += 32) dq[(q0 + r) * d + x] = dqs[r * ld + x];
  }
}

// Block b: head b / tiles, key rows [32 (b % tiles), + 32); here lane i is a query.
// Shared: K, V, Q, dY, dK, dV.
template <typename T>
__global__ void KeyGradKernel(int64_t tiles, int64_t tq, int64_t tk, int64_t d, const T* q, const T* k,
                              const T* v, const T* lse, const T* dsum, const T* dy, T* dk, T* dv) {
  extern __shared__ unsigned char shared[];
  const int64_t ld = d + 1;
  T* ks = reinterpret_cast<T*>(shared);
  T* vs = ks + kTile * ld;
  T* qs = vs + kTile * ld;
  T* dys = qs + kTile * ld;
  T* dks = dys + kTile * ld;
  T* dvs = dks + kTile * ld;
  const int64_t head = blockIdx.x / tiles, k0 = blockIdx.x % tiles * kTile, offset = tk - tq;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const T scale = T(1) / sqrt(T(d));
  q += head * tq * d;
  dy += head * tq * d;
  lse += head * tq;
  dsum += head * tq;
  k += head * tk * d;
  v += head * tk * d;
  dk += head * tk * d;
  dv += head * tk * d;
  LoadTile(k, k0, tk, d, ks);
  LoadTile(v, k0, tk, d, vs);
  ZeroTile(d, dks);
  ZeroTile(d, dvs);
  // Query i sees key j when i >= j - offset: from the query tile holding k0 - offset on.
  for (int64_t q0 = std::max<int64_t>(0, k0 - offset) / kTile * kTile; q0 < tq; q0 += kTile) {
    __syncthreads();
    LoadTile(q, q0, tq, d, qs);
    LoadTile(dy, q0, tq, d, dys);
    __syncthreads();
    const int64_t i = q0 + lane;
    const T lane_lse = i < tq ? lse[i] : T(0), lane_d = i < tq ? dsum[i] : T(0);
    for (int c = warp * kRowsPerWarp; c < (warp + 1) * kRowsPerWarp; ++c) {
      T p = 0, ds = 0;
      if (i < tq && k0 + c < tk && k0 + c <= i + offset) {
        p = exp(TileDot(qs + lane * ld, ks + c * ld, d) * scale - lane_lse);
        ds = p * (TileDot(dys + lane * ld, vs + c * ld, d) - lane_d) * scale;
      }
      AddWeightedRows(p, dys, d, dvs + c * ld);
      AddWeightedRows(ds, qs, d, dks + c * ld);
    }
  }
  __syncthreads();  // dks and dvs were zeroed by other threads (and tq may be 0)
  for (int c = warp * kRowsPerWarp; c < (warp + 1) * kRowsPerWarp; ++c) {
    if (k0 + c >= tk) continue;
    for (int64_t x = lane; x < d; x += 32) {
      dk[(k0 + c) * d + x] = dks[c * ld + x];
      dv[(k0 + c) * d + x] = dvs[c * ld + x];
    }
  }
}

// Lets `kernel` take `tiles` tiles of shared memory a block (beyond the default 48 KiB
// where the device allows), or says which head size is too wide.
template <typename Kernel>
int64_t SharedBytes(const char* op, Kernel kernel, int tiles, int64_t d, int64_t itemsize) {
  const int64_t bytes = tiles * kTile * (d + 1) * itemsize;
  int device = 0, most = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device), op);
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), op);
  EMBER_CHECK(bytes <= most, op, ": a head of d = ", d, " needs ", bytes,
              " bytes of shared memory a block; this GPU gives at most ", most);
  EMBER_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
                   op);
  return bytes;
}

constexpr int kBlock = kWarps * 32;

int64_t Tiles(int64_t rows) { return (rows + kTile - 1) / kTile; }

}  // namespace

void CausalAttentionForward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d, const void* q,
                            const void* k, const void* v, void* y, void* lse) {
  if (batch == 0 || tq == 0) return;
  VisitFloat("causal_attention", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t shared = SharedBytes("causal_attention", ForwardKernel<T>, 4, d, sizeof(T));
    ForwardKernel<T><<<batch * Tiles(tq), kBlock, shared>>>(
        Tiles(tq), tq, tk, d, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
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
    const char* op = "causal_attention_backward";
    const T *qt = static_cast<const T*>(q), *kt = static_cast<const T*>(k), *vt = static_cast<const T*>(v);
    const T *lt = static_cast<const T*>(lse), *gt = static_cast<const T*>(dy);
    int device = 0;
    EMBER_CUDA_CHECK(cudaGetDevice(&device), op);
    const int64_t dsum_bytes = batch * tq * static_cast<int64_t>(sizeof(T));
    T* dsum = static_cast<T*>(Allocate(device, dsum_bytes));  // nullptr when tq == 0
    if (tq > 0) {
      RowDotKernel<T><<<internal::Blocks(batch * tq * 32), kBlock>>>(batch * tq, d, gt, static_cast<const T*>(y),
                                                                     dsum);
      const int64_t dq_shared = SharedBytes(op, QueryGradKernel<T>, 5, d, sizeof(T));
      QueryGradKernel<T><<<batch * Tiles(tq), kBlock, dq_shared>>>(Tiles(tq), tq, tk, d, qt, kt, vt, lt, dsum, gt,
                                                                   static_cast<T*>(dq));
    }
    const int64_t dkv_shared = SharedBytes(op, KeyGradKernel<T>, 6, d, sizeof(T));
    KeyGradKernel<T><<<batch * Tiles(tk), kBlock, dkv_shared>>>(Tiles(tk), tq, tk, d, qt, kt, vt, lt, dsum, gt,
                                                                static_cast<T*>(dk), static_cast<T*>(dv));
    Deallocate(device, dsum, dsum_bytes);  // stream-ordered: reused only by later work
  });
  EMBER_CUDA_CHECK_LAUNCH("causal_attention_backward");
}

}  // namespace ember::kernels::cuda
