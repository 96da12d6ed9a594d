// kernels/attention.h on the GPU, from the same equations, as flash attention
// (Dao et al. 2022): no T x T matrix is ever in memory. Each thread owns one row, a
// query (forward, dQ) or a key (dV, dK), and keeps that row's d-vectors in registers;
// the block streams tiles of kCols rows of the other side through shared memory, where
// all the threads of a warp read the same address (a broadcast, 16 bytes at a time),
// so the inner loops are fused multiply-adds on registers. The head size is a template
// bound kD (32, 64 or 128; a smaller d runs with zeros past it).
//
//   forward (query i): for each tile of keys, s_j = q_i . k_j / sqrt(d) (-inf past
//       key i + tk - tq), m' = max(m, max_j s_j), o = o e^(m - m') + sum_j e^(s_j - m') v_j,
//       l = l e^(m - m') + sum_j e^(s_j - m'); at the end y_i = o / l, lse_i = m + log l.
//   dQ (query i):  P_ij = e^(s_ij - lse_i), dS_ij = P_ij (dy_i . v_j - D_i) / sqrt(d),
//       dq_i = sum_j dS_ij k_j, where D_i = dy_i . y_i (a warp a row, first).
//   dV (key j):    dv_j = sum_i P_ij dy_i.
//   dK (key j):    dk_j = sum_i dS_ij q_i.
// dV and dK are two kernels, each recomputing P, so that no thread holds more than
// three d-vectors (192 registers at d = 64). Every sum has one owner and one order: no
// float atomics, the same result every run. With TF32 allowed (runtime.h), f32 heads of
// d = 64 run Tf32ForwardKernel, Tf32QueryGradKernel and Tf32KeyGradKernel, the same
// equations with each tile's products on tensor cores: on an H200, the forward of 96
// heads x 1024 x 64 in 0.55 ms against 1.19. bf16 heads (d = 64) go to
// attention_bf16.cu's kernels, on bf16 tensor cores.

#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <initializer_list>
#include <type_traits>

#include "base/error.h"
#include "kernels/attention.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/attention_bf16.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/cuda/runtime.h"
#include "kernels/philox.h"

namespace ember::kernels::cuda {
namespace {

using internal::DispatchFloat;

constexpr int kRows = 128;  // rows a block: one a thread
constexpr int kCols = 32;   // rows of the other side a shared tile

// v[0, kD) = row `row` of m [rows, d], zeros past d or past the last row.
template <typename T, int kD>
__device__ void LoadRow(const T* m, int64_t row, int64_t rows, int64_t d, T (&v)[kD]) {
#pragma unroll
  for (int x = 0; x < kD; ++x) v[x] = row < rows && x < d ? m[row * d + x] : T(0);
}

// tile [kCols, kD] = rows [row0, row0 + kCols) of m [rows, d], zero-padded;
// consecutive threads read consecutive elements. With `async` (d == kD, m 16-byte
// aligned), as 16-byte cp.async copies (sm_80), which land while the block computes on
// the other stage (see CommitTiles); otherwise plain loads.
// 16 bytes from global `from` to shared `to` (both 16-byte aligned) by cp.async, or 16
// zero bytes (nothing read) when !valid. sm_80 and later.
__device__ void CopyAsync16(void* to, const void* from, bool valid) {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   static_cast<unsigned>(__cvta_generic_to_shared(to))),
               "l"(from), "r"(valid ? 16 : 0));
#endif
}

template <typename T, int kD>
__device__ void LoadTile(const T* m, int64_t row0, int64_t rows, int64_t d, T* tile, bool async) {
#if __CUDA_ARCH__ >= 800
  if (async) {
    constexpr int kVec = 16 / sizeof(T), kPerRow = kD / kVec;
    for (int e = threadIdx.x; e < kCols * kPerRow; e += blockDim.x) {
      const int64_t r = row0 + e / kPerRow;
      const bool valid = r < rows;  // else 16 bytes of zeros, nothing read
      CopyAsync16(tile + e * kVec, valid ? m + r * d + e % kPerRow * kVec : m, valid);
    }
    return;
  }
#endif
  for (int e = threadIdx.x; e < kCols * kD; e += blockDim.x) {
    const int64_t r = row0 + e / kD, x = e % kD;
    tile[e] = r < rows && x < d ? m[r * d + x] : T(0);
  }
}

// The loops over tiles keep two stages of shared memory: at tile t, the copies of tile
// t + 1 are issued into the other stage and closed as one group (CommitTiles), then
// WaitForTile waits for every group but that newest one, i.e. for tile t, and a barrier
// makes all the block's copies visible. A barrier after the tile's work frees its stage
// for tile t + 2. The copies of the next tile run under this tile's arithmetic (one
// stage, loaded between barriers, left the SM waiting on L2 for 30% of its cycles).
__device__ void CommitTiles() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
__device__ void WaitForTile() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group 1;\n" ::);
#endif
  __syncthreads();
}

// That loop, over the tiles starting at first, first + step, ... below end: load(t)
// issues tile t's copies into its stage, body(t) works on it once it has landed.
template <typename Load, typename Body>
__device__ void ForEachTile(int64_t first, int64_t end, int64_t step, const Load& load,
                            const Body& body) {
  if (first < end) load(first);
  CommitTiles();
  for (int64_t t = first; t < end; t += step) {
    if (t + step < end) load(t + step);
    CommitTiles();  // an empty group at the last tile, so that one wait fits every tile
    WaitForTile();
    body(t);
    __syncthreads();  // this stage is refilled with tile t + 2
  }
}

// a . b and o += w b, for b a 16-byte aligned row of a shared tile.
template <typename T, int kD>
__device__ T Dot(const T (&a)[kD], const T* b) {
  T sum = 0;
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int x = 0; x < kD; x += 4) {
      const float4 w = *reinterpret_cast<const float4*>(b + x);
      sum += a[x] * w.x + a[x + 1] * w.y + a[x + 2] * w.z + a[x + 3] * w.w;
    }
  } else {
#pragma unroll
    for (int x = 0; x < kD; x += 2) {
      const double2 w = *reinterpret_cast<const double2*>(b + x);
      sum += a[x] * w.x + a[x + 1] * w.y;
    }
  }
  return sum;
}
template <typename T, int kD>
__device__ void Axpy(T w, const T* b, T (&o)[kD]) {
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int x = 0; x < kD; x += 4) {
      const float4 v = *reinterpret_cast<const float4*>(b + x);
      o[x] += w * v.x;
      o[x + 1] += w * v.y;
      o[x + 2] += w * v.z;
      o[x + 3] += w * v.w;
    }
  } else {
#pragma unroll
    for (int x = 0; x < kD; x += 2) {
      const double2 v = *reinterpret_cast<const double2*>(b + x);
      o[x] += w * v.x;
      o[x + 1] += w * v.y;
    }
  }
}

// The query tile of block b among a head's `tiles`, the last (the most keys under the
// causal mask) first: the longest blocks start in the first wave instead of the last,
// where they would run on a few SMs while the rest sit idle.
__device__ int64_t LastFirst(int64_t tiles) { return tiles - 1 - blockIdx.x % tiles; }

// attention.h's dropout factor M_ij of head `head`, query i, key j: the same Philox word
// the CPU kernel reads (one Philox block a call: dropout runs these plain kernels only).
template <typename T>
__device__ T DropoutFactor(const AttentionDropout& dropout, int64_t head, int64_t tq, int64_t tk,
                           int64_t i, int64_t j) {
  if (dropout.p <= 0) return T(1);
  PhiloxStream stream(dropout.seed);
  const double u =
      stream.Uniform(dropout.offset + static_cast<uint64_t>((head * tq + i) * tk + j), 24);
  return u >= dropout.p && dropout.p < 1 ? T(1 / (1 - dropout.p)) : T(0);
}

template <typename T, int kD>
__device__ void StoreRow(const T (&v)[kD], int64_t row, int64_t rows, int64_t d, T* m) {
  if (row >= rows) return;
#pragma unroll
  for (int x = 0; x < kD; ++x) {
    if (x < d) m[row * d + x] = v[x];
  }
}

// Block b: head b / tiles, queries [kRows t, + kRows) for t = LastFirst(tiles). Shared:
// two stages of K and V tiles.
template <typename T, int kD>
__global__ void __launch_bounds__(kRows)
    ForwardKernel(int64_t tiles, int64_t tq, int64_t tk, int64_t d, const T* q, const T* k,
                  const T* v, int64_t kv_stride, T* y, T* lse, bool async,
                  AttentionDropout dropout) {
  extern __shared__ __align__(128) unsigned char shared[];
  constexpr int kStage = 2 * kCols * kD;
  const int64_t head = blockIdx.x / tiles, q0 = LastFirst(tiles) * kRows, offset = tk - tq;
  const int64_t i = q0 + threadIdx.x;
  const T scale = T(1) / sqrt(T(d));
  k += head * kv_stride;
  v += head * kv_stride;
  T qi[kD], o[kD];
  LoadRow(q + head * tq * d, i, tq, d, qi);
#pragma unroll
  for (int x = 0; x < kD; ++x) o[x] = 0;
  // Key 0 is seen by every query (offset >= 0), rows past tq included, so m is finite
  // after the first tile and exp(m - m') never meets -inf - -inf.
  T m = -INFINITY, l = 0;
  const int64_t key_end = std::min(tk, std::min(q0 + kRows, tq) + offset);
  auto load = [&](int64_t k0) {
    T* ks = reinterpret_cast<T*>(shared) + k0 / kCols % 2 * kStage;
    LoadTile<T, kD>(k, k0, tk, d, ks, async);
    LoadTile<T, kD>(v, k0, tk, d, ks + kCols * kD, async);
  };
  ForEachTile(0, key_end, kCols, load, [&](int64_t k0) {
    const T* ks = reinterpret_cast<const T*>(shared) + k0 / kCols % 2 * kStage;
    const T* vs = ks + kCols * kD;
    T s[kCols];
    T m_new = m;
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      s[c] = k0 + c < tk && k0 + c <= i + offset ? Dot(qi, ks + c * kD) * scale : T(-INFINITY);
      m_new = max(m_new, s[c]);
    }
    const T alpha = exp(m - m_new);  // 0 on the first tile
    l *= alpha;
#pragma unroll
    for (int x = 0; x < kD; ++x) o[x] *= alpha;
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      const T p = exp(s[c] - m_new);
      l += p;  // the undropped softmax's sum; o takes P * M
      Axpy(dropout.p > 0 ? p * DropoutFactor<T>(dropout, head, tq, tk, i, k0 + c) : p, vs + c * kD,
           o);
    }
    m = m_new;
  });
  if (i < tq) {
#pragma unroll
    for (int x = 0; x < kD; ++x) o[x] /= l;
    StoreRow(o, i, tq, d, y + head * tq * d);
    lse[head * tq + i] = m + log(l);
  }
}

// ---- the forward on TF32 tensor cores (AllowTf32, f32, d = 64) ----
//
// ForwardKernel's equations with each tile's two products on tensor cores, through
// WMMA's m16n16k8 TF32 fragments (inputs rounded to TF32, sums in f32): S = Q K^T and
// O += P V. A block holds kTcRows queries, a warp 16 of them; tiles of kTcCols keys
// come through two stages of shared memory as above. A warp stores its S tile [16,
// kTcCols] in shared memory, where its lanes apply the scale, the mask and the online
// softmax (two lanes a row, 32 columns each, holding the row's m and l and their 32
// columns of O in registers) and write P back; the P V tile comes back through the
// same place and the lanes add it to O. Shared rows are padded to kTcLd floats.
constexpr int kTcRows = 64, kTcCols = 64, kTcD = 64, kTcLd = kTcD + 4;
constexpr int kTcThreads = kTcRows / 16 * 32;
constexpr int kTcTile = kTcCols * kTcLd;  // floats of one K or V tile
constexpr int64_t kTcShared =             // Q; two stages of K and V; each warp's S
    (kTcRows * kTcLd + 2 * 2 * kTcTile + kTcRows * kTcLd) * int64_t{sizeof(float)};

#if __CUDA_ARCH__ >= 800
using TcA = nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 8, nvcuda::wmma::precision::tf32,
                                   nvcuda::wmma::row_major>;
using TcAcc = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 8, float>;

// Rounds a fragment's floats to TF32, as the tensor cores take them.
template <typename Fragment>
__device__ void ToTf32(Fragment& f) {
#pragma unroll
  for (int t = 0; t < f.num_elements; ++t) f.x[t] = nvcuda::wmma::__float_to_tf32(f.x[t]);
}

// out [16, kTcCols] (a warp's buffer, rows kTcLd apart) = A [16, kTcD] times the
// transpose of a shared tile's kTcCols rows: the tile's rows, read column-major, are
// its transpose.
__device__ void ProductWithRows(const TcA (&a)[kTcD / 8], const float* tile, float* out) {
  namespace wmma = nvcuda::wmma;
#pragma unroll
  for (int nt = 0; nt < kTcCols / 16; ++nt) {
    TcAcc acc;
    wmma::fill_fragment(acc, 0.0f);
#pragma unroll
    for (int kk = 0; kk < kTcD / 8; ++kk) {
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b;
      wmma::load_matrix_sync(b, tile + nt * 16 * kTcLd + kk * 8, kTcLd);
      ToTf32(b);
      wmma::mma_sync(acc, a[kk], b, acc);
    }
    wmma::store_matrix_sync(out + nt * 16, acc, kTcLd, wmma::mem_row_major);
  }
}

// acc [16, kTcD] += p [16, kTcCols] (a warp's buffer) times a shared tile's kTcCols rows.
__device__ void AccumulateProduct(const float* p, const float* tile, TcAcc (&acc)[kTcD / 16]) {
  namespace wmma = nvcuda::wmma;
#pragma unroll
  for (int kk = 0; kk < kTcCols / 8; ++kk) {
    TcA a;
    wmma::load_matrix_sync(a, p + kk * 8, kTcLd);
    ToTf32(a);
#pragma unroll
    for (int nt = 0; nt < kTcD / 16; ++nt) {
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
      wmma::load_matrix_sync(b, tile + kk * 8 * kTcLd + nt * 16, kTcLd);
      ToTf32(b);
      wmma::mma_sync(acc[nt], a, b, acc[nt]);
    }
  }
}

// A's fragments of rows [row0, row0 + 16) of m [rows, kTcD] (zeros past rows), through
// the warp's buffer buf [16, kTcLd].
__device__ void LoadWarpRows(const float* m, int64_t row0, int64_t rows, float* buf,
                             TcA (&a)[kTcD / 8]) {
  for (int e = threadIdx.x % 32; e < 16 * kTcD / 4; e += 32) {
    const int r = e / (kTcD / 4), x = e % (kTcD / 4) * 4;
    *reinterpret_cast<float4*>(buf + r * kTcLd + x) =
        row0 + r < rows ? *reinterpret_cast<const float4*>(m + (row0 + r) * kTcD + x)
                        : float4{0, 0, 0, 0};
  }
  __syncwarp();
#pragma unroll
  for (int kk = 0; kk < kTcD / 8; ++kk) {
    nvcuda::wmma::load_matrix_sync(a[kk], buf + kk * 8, kTcLd);
    ToTf32(a[kk]);
  }
  __syncwarp();
}

// Rows [row0, row0 + 16) of m [rows, kTcD] = acc, through the warp's buffer buf.
__device__ void StoreWarpRows(const TcAcc (&acc)[kTcD / 16], float* buf, float* m, int64_t row0,
                              int64_t rows) {
#pragma unroll
  for (int nt = 0; nt < kTcD / 16; ++nt) {
    nvcuda::wmma::store_matrix_sync(buf + nt * 16, acc[nt], kTcLd, nvcuda::wmma::mem_row_major);
  }
  __syncwarp();
  for (int e = threadIdx.x % 32; e < 16 * kTcD / 4; e += 32) {
    const int r = e / (kTcD / 4), x = e % (kTcD / 4) * 4;
    if (row0 + r < rows) {
      *reinterpret_cast<float4*>(m + (row0 + r) * kTcD + x) =
          *reinterpret_cast<const float4*>(buf + r * kTcLd + x);
    }
  }
  __syncwarp();
}
#endif

// rows [row0, row0 + count) of m [rows, kTcD] into tile [count, kTcLd], zeros past rows.
__device__ void LoadTcTile(const float* m, int64_t row0, int64_t rows, int count, float* tile) {
  for (int e = threadIdx.x; e < count * kTcD / 4; e += blockDim.x) {
    const int r = e / (kTcD / 4), x = e % (kTcD / 4) * 4;
    const bool valid = row0 + r < rows;
    CopyAsync16(tile + r * kTcLd + x, valid ? m + (row0 + r) * kTcD + x : m, valid);
  }
}

// Block b: head b / tiles, queries [kTcRows t, + kTcRows) for t = LastFirst(tiles).
__global__ void __launch_bounds__(kTcThreads)
    Tf32ForwardKernel(int64_t tiles, int64_t tq, int64_t tk, const float* q, const float* k,
                      const float* v, int64_t kv_stride, float* y, float* lse) {
#if __CUDA_ARCH__ >= 800
  namespace wmma = nvcuda::wmma;
  extern __shared__ __align__(128) unsigned char shared[];
  float* qs = reinterpret_cast<float*>(shared);
  float* stages = qs + kTcRows * kTcLd;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* sw = stages + 2 * 2 * kTcTile + warp * 16 * kTcLd;  // this warp's S, P and P V
  const int64_t head = blockIdx.x / tiles, q0 = LastFirst(tiles) * kTcRows, offset = tk - tq;
  q += head * tq * kTcD;
  k += head * kv_stride;
  v += head * kv_stride;
  const int row = lane / 2, half = lane % 2;  // the lane's row of the warp's 16, its 32 columns
  const int64_t i = q0 + warp * 16 + row;
  float* srow = sw + row * kTcLd + half * 32;
  const float scale = 0.125f;  // 1 / sqrt(64)
  float o[32], m = -INFINITY, l = 0;
#pragma unroll
  for (int c = 0; c < 32; ++c) o[c] = 0;
  TcA qa[kTcD / 8];
  const int64_t key_end = std::min(tk, std::min(q0 + kTcRows, tq) + offset);
  auto load = [&](int64_t k0) {
    float* ks = stages + k0 / kTcCols % 2 * 2 * kTcTile;
    LoadTcTile(k, k0, tk, kTcCols, ks);
    LoadTcTile(v, k0, tk, kTcCols, ks + kTcTile);
  };
  LoadTcTile(q, q0, tq, kTcRows, qs);  // in the first tile's group
  ForEachTile(0, key_end, kTcCols, load, [&](int64_t k0) {
    if (k0 == 0) {  // Q came with the first tile
#pragma unroll
      for (int kk = 0; kk < kTcD / 8; ++kk) {
        wmma::load_matrix_sync(qa[kk], qs + warp * 16 * kTcLd + kk * 8, kTcLd);
        ToTf32(qa[kk]);
      }
    }
    const float* ks = stages + k0 / kTcCols % 2 * 2 * kTcTile;
    const float* vs = ks + kTcTile;
    ProductWithRows(qa, ks, sw);  // S = Q K^T
    __syncwarp();
    // The online softmax of the lane's half row; its partner lane (lane ^ 1) has the other.
    float s[32], tile_max = -INFINITY;
#pragma unroll
    for (int c = 0; c < 32; ++c) {
      const int64_t key = k0 + half * 32 + c;
      s[c] = key < tk && key <= i + offset ? srow[c] * scale : -INFINITY;
      tile_max = fmaxf(tile_max, s[c]);
    }
    // Key 0 is seen by every row (offset >= 0), so m is finite from the first tile on.
    const float m_new = fmaxf(m, fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1)));
    const float alpha = expf(m - m_new);  // 0 on the first tile
    float sum = 0;
#pragma unroll
    for (int c = 0; c < 32; ++c) {
      const float p = expf(s[c] - m_new);
      srow[c] = p;
      sum += p;
    }
    l = l * alpha + sum + __shfl_xor_sync(0xffffffffu, sum, 1);
    m = m_new;
#pragma unroll
    for (int c = 0; c < 32; ++c) o[c] *= alpha;
    __syncwarp();
    // P V, then into O.
    TcAcc pv[kTcD / 16];
#pragma unroll
    for (int nt = 0; nt < kTcD / 16; ++nt) wmma::fill_fragment(pv[nt], 0.0f);
    AccumulateProduct(sw, vs, pv);
    __syncwarp();  // every lane has read P
#pragma unroll
    for (int nt = 0; nt < kTcD / 16; ++nt)
      wmma::store_matrix_sync(sw + nt * 16, pv[nt], kTcLd, wmma::mem_row_major);
    __syncwarp();
#pragma unroll
    for (int c = 0; c < 32; ++c) o[c] += srow[c];
  });
  if (i < tq) {
    float* yr = y + (head * tq + i) * kTcD + half * 32;
#pragma unroll
    for (int c = 0; c < 32; ++c) yr[c] = o[c] / l;
    if (half == 0) lse[head * tq + i] = m + logf(l);
  }
#endif
}

// D_r = dY_r . Y_r, a warp a row.
template <typename T>
__global__ void RowDotKernel(int64_t rows, int64_t d, const T* dy, const T* y, T* out) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32; r < rows;
       r += warps) {
    T sum = 0;
    for (int64_t x = lane; x < d; x += 32) sum += dy[r * d + x] * y[r * d + x];
    sum = internal::WarpReduce(sum, internal::SumOp{});
    if (lane == 0) out[r] = sum;
  }
}

// Block b: head b / tiles, queries [kRows t, + kRows) for t = LastFirst(tiles). Shared:
// K, V tiles.
template <typename T, int kD>
__global__ void __launch_bounds__(kRows)
    QueryGradKernel(int64_t tiles, int64_t tq, int64_t tk, int64_t d, const T* q, const T* k,
                    const T* v, const T* lse, const T* dsum, const T* dy, T* dq, bool async,
                    AttentionDropout dropout) {
  extern __shared__ __align__(128) unsigned char shared[];
  constexpr int kStage = 2 * kCols * kD;
  const int64_t head = blockIdx.x / tiles, q0 = LastFirst(tiles) * kRows, offset = tk - tq;
  const int64_t i = q0 + threadIdx.x;
  const T scale = T(1) / sqrt(T(d));
  k += head * tk * d;
  v += head * tk * d;
  T qi[kD], dyi[kD], dqi[kD];
  LoadRow(q + head * tq * d, i, tq, d, qi);
  LoadRow(dy + head * tq * d, i, tq, d, dyi);
#pragma unroll
  for (int x = 0; x < kD; ++x) dqi[x] = 0;
  const T lse_i = i < tq ? lse[head * tq + i] : T(0), d_i = i < tq ? dsum[head * tq + i] : T(0);
  const int64_t key_end = std::min(tk, std::min(q0 + kRows, tq) + offset);
  auto load = [&](int64_t k0) {  // as in ForwardKernel
    T* ks = reinterpret_cast<T*>(shared) + k0 / kCols % 2 * kStage;
    LoadTile<T, kD>(k, k0, tk, d, ks, async);
    LoadTile<T, kD>(v, k0, tk, d, ks + kCols * kD, async);
  };
  ForEachTile(0, key_end, kCols, load, [&](int64_t k0) {
    const T* ks = reinterpret_cast<const T*>(shared) + k0 / kCols % 2 * kStage;
    const T* vs = ks + kCols * kD;
#pragma unroll 4
    for (int c = 0; c < kCols; ++c) {
      const bool seen = i < tq && k0 + c < tk && k0 + c <= i + offset;
      const T p = seen ? exp(Dot(qi, ks + c * kD) * scale - lse_i) : T(0);
      const T dp = seen && dropout.p > 0
                       ? Dot(dyi, vs + c * kD) * DropoutFactor<T>(dropout, head, tq, tk, i, k0 + c)
                       : Dot(dyi, vs + c * kD);
      const T ds = seen ? p * (dp - d_i) * scale : T(0);
      Axpy(ds, ks + c * kD, dqi);
    }
  });
  StoreRow(dqi, i, tq, d, dq + head * tq * d);
}

// Block b: head b / tiles, keys [kRows (b % tiles), + kRows) (the first keys, seen by the
// most queries, first); shared: Q and dY tiles
// with their rows' lse and D. kValues: dV (from P); else dK (from dS).
template <typename T, int kD, bool kValues>
__global__ void __launch_bounds__(kRows)
    KeyGradKernel(int64_t tiles, int64_t tq, int64_t tk, int64_t d, const T* q, const T* k,
                  const T* v, const T* lse, const T* dsum, const T* dy, T* out, bool async,
                  AttentionDropout dropout) {
  extern __shared__ __align__(128) unsigned char shared[];
  constexpr int kStage = 2 * kCols * kD + 2 * kCols;  // Q, dY tiles, their lse and D
  const int64_t head = blockIdx.x / tiles, k0 = blockIdx.x % tiles * kRows, offset = tk - tq;
  const int64_t j = k0 + threadIdx.x;
  const T scale = T(1) / sqrt(T(d));
  q += head * tq * d;
  dy += head * tq * d;
  T kj[kD], vj[kD], acc[kD];
  LoadRow(k + head * tk * d, j, tk, d, kj);
  if constexpr (!kValues) LoadRow(v + head * tk * d, j, tk, d, vj);
#pragma unroll
  for (int x = 0; x < kD; ++x) acc[x] = 0;
  auto load = [&](int64_t i0) {  // as in ForwardKernel, with the rows' lse and D
    T* qs = reinterpret_cast<T*>(shared) + i0 / kCols % 2 * kStage;
    LoadTile<T, kD>(q, i0, tq, d, qs, async);
    LoadTile<T, kD>(dy, i0, tq, d, qs + kCols * kD, async);
    T* lses = qs + 2 * kCols * kD;
    for (int c = threadIdx.x; c < kCols; c += blockDim.x) {
      lses[c] = i0 + c < tq ? lse[head * tq + i0 + c] : T(0);
      lses[kCols + c] = i0 + c < tq ? dsum[head * tq + i0 + c] : T(0);
    }
  };
  // Query i sees key j when i >= j - offset: from the tile holding k0 - offset on.
  ForEachTile(std::max<int64_t>(0, k0 - offset) / kCols * kCols, tq, kCols, load, [&](int64_t i0) {
    const T* qs = reinterpret_cast<const T*>(shared) + i0 / kCols % 2 * kStage;
    const T* dys = qs + kCols * kD;
    const T* lses = dys + kCols * kD;
    const T* ds_of = lses + kCols;  // D of the tile's queries
#pragma unroll 4
    for (int c = 0; c < kCols; ++c) {
      const bool seen = i0 + c < tq && j < tk && j <= i0 + c + offset;
      const T p = seen ? exp(Dot(kj, qs + c * kD) * scale - lses[c]) : T(0);
      const T mask =
          seen && dropout.p > 0 ? DropoutFactor<T>(dropout, head, tq, tk, i0 + c, j) : T(1);
      if constexpr (kValues) {
        Axpy(p * mask, dys + c * kD, acc);  // dV = (P * M)^T dY
      } else {
        const T ds = seen ? p * (Dot(vj, dys + c * kD) * mask - ds_of[c]) * scale : T(0);
        Axpy(ds, qs + c * kD, acc);
      }
    }
  });
  StoreRow(acc, j, tk, d, out + head * tk * d);
}

// ---- the backward on TF32 tensor cores (AllowTf32, f32, d = 64) ----
//
// QueryGradKernel's and KeyGradKernel's equations with each tile's products on tensor
// cores, as in Tf32ForwardKernel: a block holds 64 rows of its side (queries for dQ,
// keys for dK and dV), a warp 16 of them, as A fragments kept for the whole loop; tiles
// of 64 rows of the other side stream through two stages of shared memory. Each tile's
// two products with the warp's rows (S and dP) land in the warp's two buffers, where
// two lanes a row turn them into P and dS, and those multiply the tile again into
// accumulator fragments held across the loop. dK and dV share one pass over the
// queries (P^T feeds dV, dS^T dK). On an H200 (96 heads x 1024 x 64) the f32 kernels
// above took 3.25 ms for the backward.
constexpr int kTcStage = 2 * kTcTile + 2 * kTcCols;  // two tiles, then (keys' pass) lse and D
constexpr int64_t kTcGradShared =                    // two stages; each warp's two buffers
    (2 * kTcStage + kTcThreads / 32 * 2 * 16 * kTcLd) * int64_t{sizeof(float)};

// Block b: head b / tiles, queries [kTcRows t, + kTcRows) for t = LastFirst(tiles).
__global__ void __launch_bounds__(kTcThreads)
    Tf32QueryGradKernel(int64_t tiles, int64_t tq, int64_t tk, const float* q, const float* k,
                        const float* v, const float* lse, const float* dsum, const float* dy,
                        float* dq) {
#if __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) unsigned char shared[];
  float* stages = reinterpret_cast<float*>(shared);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* sw = stages + 2 * kTcStage + warp * 2 * 16 * kTcLd;  // S, then P
  float* dpw = sw + 16 * kTcLd;                               // dP, then dS
  const int64_t head = blockIdx.x / tiles, q0 = LastFirst(tiles) * kTcRows, offset = tk - tq;
  q += head * tq * kTcD;
  dy += head * tq * kTcD;
  k += head * tk * kTcD;
  v += head * tk * kTcD;
  const int row = lane / 2, half = lane % 2;  // the lane's row of the warp's 16, its 32 columns
  const int64_t i = q0 + warp * 16 + row;
  const float scale = 0.125f, lse_i = i < tq ? lse[head * tq + i] : 0.f,
              d_i = i < tq ? dsum[head * tq + i] : 0.f;
  TcA qa[kTcD / 8], dya[kTcD / 8];
  LoadWarpRows(q, q0 + warp * 16, tq, sw, qa);
  LoadWarpRows(dy, q0 + warp * 16, tq, sw, dya);
  TcAcc acc[kTcD / 16];
#pragma unroll
  for (int nt = 0; nt < kTcD / 16; ++nt) nvcuda::wmma::fill_fragment(acc[nt], 0.0f);
  const int64_t key_end = std::min(tk, std::min(q0 + kTcRows, tq) + offset);
  auto load = [&](int64_t k0) {
    float* ks = stages + k0 / kTcCols % 2 * kTcStage;
    LoadTcTile(k, k0, tk, kTcCols, ks);
    LoadTcTile(v, k0, tk, kTcCols, ks + kTcTile);
  };
  ForEachTile(0, key_end, kTcCols, load, [&](int64_t k0) {
    const float* ks = stages + k0 / kTcCols % 2 * kTcStage;
    ProductWithRows(qa, ks, sw);              // S = Q K^T
    ProductWithRows(dya, ks + kTcTile, dpw);  // dP = dY V^T
    __syncwarp();
    const float* srow = sw + row * kTcLd + half * 32;
    float* dprow = dpw + row * kTcLd + half * 32;
#pragma unroll
    for (int c = 0; c < 32; ++c) {
      const int64_t key = k0 + half * 32 + c;
      const float p = i < tq && key < tk && key <= i + offset ? expf(srow[c] * scale - lse_i) : 0.f;
      dprow[c] = p * (dprow[c] - d_i) * scale;
    }
    __syncwarp();
    AccumulateProduct(dpw, ks, acc);  // dQ += dS K
    __syncwarp();                     // the buffers are rewritten by the next tile
  });
  StoreWarpRows(acc, sw, dq + head * tq * kTcD, q0 + warp * 16, tq);
#endif
}

// Block b: head b / tiles, keys [kTcRows (b % tiles), + kTcRows) (the first keys, seen
// by the most queries, first).
__global__ void __launch_bounds__(kTcThreads)
    Tf32KeyGradKernel(int64_t tiles, int64_t tq, int64_t tk, const float* q, const float* k,
                      const float* v, const float* lse, const float* dsum, const float* dy,
                      float* dk, float* dv) {
#if __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) unsigned char shared[];
  float* stages = reinterpret_cast<float*>(shared);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* sw = stages + 2 * kTcStage + warp * 2 * 16 * kTcLd;  // S^T, then P^T
  float* dpw = sw + 16 * kTcLd;                               // dP^T, then dS^T
  const int64_t head = blockIdx.x / tiles, k0 = blockIdx.x % tiles * kTcRows, offset = tk - tq;
  q += head * tq * kTcD;
  dy += head * tq * kTcD;
  lse += head * tq;
  dsum += head * tq;
  const int row = lane / 2, half = lane % 2;
  const int64_t j = k0 + warp * 16 + row;
  const float scale = 0.125f;
  TcA ka[kTcD / 8], va[kTcD / 8];
  LoadWarpRows(k + head * tk * kTcD, k0 + warp * 16, tk, sw, ka);
  LoadWarpRows(v + head * tk * kTcD, k0 + warp * 16, tk, sw, va);
  TcAcc dk_acc[kTcD / 16], dv_acc[kTcD / 16];
#pragma unroll
  for (int nt = 0; nt < kTcD / 16; ++nt) {
    nvcuda::wmma::fill_fragment(dk_acc[nt], 0.0f);
    nvcuda::wmma::fill_fragment(dv_acc[nt], 0.0f);
  }
  auto load = [&](int64_t i0) {  // Q and dY tiles, then their rows' lse and D
    float* qs = stages + i0 / kTcCols % 2 * kTcStage;
    LoadTcTile(q, i0, tq, kTcCols, qs);
    LoadTcTile(dy, i0, tq, kTcCols, qs + kTcTile);
    float* lses = qs + 2 * kTcTile;
    for (int c = threadIdx.x; c < kTcCols; c += blockDim.x) {
      lses[c] = i0 + c < tq ? lse[i0 + c] : 0.f;
      lses[kTcCols + c] = i0 + c < tq ? dsum[i0 + c] : 0.f;
    }
  };
  // Query i sees key j when i >= j - offset: from the tile holding k0 - offset on.
  ForEachTile(
      std::max<int64_t>(0, k0 - offset) / kTcCols * kTcCols, tq, kTcCols, load, [&](int64_t i0) {
        const float* qs = stages + i0 / kTcCols % 2 * kTcStage;
        const float* dys = qs + kTcTile;
        const float* lses = dys + kTcTile + half * 32;
        const float* d_of = lses + kTcCols;
        ProductWithRows(ka, qs, sw);    // S^T = K Q^T
        ProductWithRows(va, dys, dpw);  // dP^T = V dY^T
        __syncwarp();
        float* srow = sw + row * kTcLd + half * 32;
        float* dprow = dpw + row * kTcLd + half * 32;
#pragma unroll
        for (int c = 0; c < 32; ++c) {
          const int64_t query = i0 + half * 32 + c;
          const float p =
              query < tq && j < tk && j <= query + offset ? expf(srow[c] * scale - lses[c]) : 0.f;
          srow[c] = p;
          dprow[c] = p * (dprow[c] - d_of[c]) * scale;
        }
        __syncwarp();
        AccumulateProduct(sw, dys, dv_acc);  // dV += P^T dY
        AccumulateProduct(dpw, qs, dk_acc);  // dK += dS^T Q
        __syncwarp();
      });
  StoreWarpRows(dv_acc, sw, dv + head * tk * kTcD, k0 + warp * 16, tk);
  StoreWarpRows(dk_acc, sw, dk + head * tk * kTcD, k0 + warp * 16, tk);
#endif
}

// Lets `kernel` take `bytes` of shared memory a block (past the default 48 KiB where
// the device allows it), or says which head size is too wide.
template <typename Kernel>
void AllowShared(const char* op, Kernel kernel, int64_t bytes, int64_t d) {
  int device = 0, most = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device), op);
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                   op);
  EMBER_CHECK(bytes <= most, op, ": a head of d = ", d, " needs ", bytes,
              " bytes of shared memory a block; this GPU gives at most ", most);
  EMBER_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)),
                   op);
}

int64_t Tiles(int64_t rows) { return (rows + kRows - 1) / kRows; }

// Whether the streamed matrices' tiles can be copied as 16-byte cp.async vectors: rows
// as wide as the tile's (d == kD, every row then starts on a 16-byte boundary), 16-byte
// aligned bases and heads a whole number of rows apart (`head_stride`, K's and V's).
// Other head sizes load element by element.
bool Async(int kD, int64_t d, std::initializer_list<const void*> streamed,
           int64_t head_stride = 0) {
  bool aligned = d == kD && head_stride % d == 0;
  for (const void* p : streamed) aligned = aligned && reinterpret_cast<uintptr_t>(p) % 16 == 0;
  return aligned;
}

// Calls fn(std::integral_constant<int, kD>) with the smallest kD of 32, 64, 128 that
// holds d.
template <typename Fn>
void VisitHeadSize(const char* op, int64_t d, Fn&& fn) {
  if (d <= 32) return fn(std::integral_constant<int, 32>{});
  if (d <= 64) return fn(std::integral_constant<int, 64>{});
  if (d <= 128) return fn(std::integral_constant<int, 128>{});
  EMBER_THROW(op, ": heads of d = ", d, " are wider than the CUDA kernels' 128");
}

}  // namespace

void CausalAttentionForward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                            const void* q, const void* k, const void* v, int64_t kv_stride, void* y,
                            void* lse, const AttentionDropout& dropout) {
  if (batch == 0 || tq == 0) return;
  const char* op = "causal_attention";
  EMBER_CHECK(dropout.p == 0 || dtype != DType::kBF16, op,
              ": attention dropout runs on f32 or f64 heads on CUDA (tensor/ops widens bf16 ones)");
  if (dtype == DType::kBF16) {
    EMBER_CHECK(d == kCudaBf16HeadSize, op, ": bf16 heads of d = ", d,
                " (the CUDA bf16 kernels take d = ", kCudaBf16HeadSize, ")");
    EMBER_CHECK(Async(kCudaBf16HeadSize, d, {q, k, v, y}, kv_stride), op,
                ": bf16 q, k, v and y must start on 16-byte boundaries and heads of k and v a "
                "whole number of rows apart (their rows are read and written as 16-byte "
                "vectors; a contiguous copy does)");
    internal::Bf16CausalAttentionForward(batch, tq, tk, static_cast<const uint16_t*>(q),
                                         static_cast<const uint16_t*>(k),
                                         static_cast<const uint16_t*>(v), kv_stride,
                                         static_cast<uint16_t*>(y), static_cast<float*>(lse));
    return;
  }
  if (dtype == DType::kF32 && d == kTcD && AllowTf32() && dropout.p == 0 &&
      Async(kTcD, d, {q, k, v}, kv_stride)) {
    AllowShared(op, Tf32ForwardKernel, kTcShared, d);
    const int64_t tiles = (tq + kTcRows - 1) / kTcRows;
    Tf32ForwardKernel<<<batch * tiles, kTcThreads, kTcShared>>>(
        tiles, tq, tk, static_cast<const float*>(q), static_cast<const float*>(k),
        static_cast<const float*>(v), kv_stride, static_cast<float*>(y), static_cast<float*>(lse));
    EMBER_CUDA_CHECK_LAUNCH(op);
    return;
  }
  DispatchFloat(op, dtype, [&](auto type) {
    using T = decltype(type);
    VisitHeadSize(op, d, [&](auto head_size) {
      constexpr int kD = decltype(head_size)::value;
      const int64_t shared = 2 * 2 * kCols * kD * static_cast<int64_t>(sizeof(T));  // 2 stages
      AllowShared(op, ForwardKernel<T, kD>, shared, d);
      ForwardKernel<T, kD><<<batch * Tiles(tq), kRows, shared>>>(
          Tiles(tq), tq, tk, d, static_cast<const T*>(q), static_cast<const T*>(k),
          static_cast<const T*>(v), kv_stride, static_cast<T*>(y), static_cast<T*>(lse),
          Async(kD, d, {k, v}, kv_stride), dropout);
    });
  });
  EMBER_CUDA_CHECK_LAUNCH(op);
}

void CausalAttentionBackward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                             const void* q, const void* k, const void* v, const void* y,
                             const void* lse, const void* dy, void* dq, void* dk, void* dv,
                             const AttentionDropout& dropout) {
  if (batch == 0 || tk == 0) return;
  const char* op = "causal_attention_backward";
  EMBER_CHECK(dropout.p == 0 || dtype != DType::kBF16, op,
              ": attention dropout runs on f32 or f64 heads on CUDA (tensor/ops widens bf16 ones)");
  if (dtype == DType::kBF16) {
    EMBER_CHECK(d == kCudaBf16HeadSize, op, ": bf16 heads of d = ", d,
                " (the CUDA bf16 kernels take d = ", kCudaBf16HeadSize, ")");
    EMBER_CHECK(Async(kCudaBf16HeadSize, d, {q, k, v, dy, dq, dk, dv}), op,
                ": bf16 q, k, v, dy and the gradients must start on 16-byte boundaries (their "
                "rows are read and written as 16-byte vectors; a contiguous copy does)");
    internal::Bf16CausalAttentionBackward(
        batch, tq, tk, static_cast<const uint16_t*>(q), static_cast<const uint16_t*>(k),
        static_cast<const uint16_t*>(v), static_cast<const uint16_t*>(y),
        static_cast<const float*>(lse), static_cast<const uint16_t*>(dy),
        static_cast<uint16_t*>(dq), static_cast<uint16_t*>(dk), static_cast<uint16_t*>(dv));
    return;
  }
  DispatchFloat(op, dtype, [&](auto type) {
    using T = decltype(type);
    VisitHeadSize(op, d, [&](auto head_size) {
      constexpr int kD = decltype(head_size)::value;
      const T *qt = static_cast<const T*>(q), *kt = static_cast<const T*>(k),
              *vt = static_cast<const T*>(v);
      const T *lt = static_cast<const T*>(lse), *gt = static_cast<const T*>(dy);
      int device = 0;
      EMBER_CUDA_CHECK(cudaGetDevice(&device), op);
      const ScopedAllocation dsum_block(device, batch * tq * static_cast<int64_t>(sizeof(T)));
      T* dsum = dsum_block.as<T>();  // nullptr when tq == 0
      if (tq > 0) {
        RowDotKernel<T><<<internal::Blocks(batch * tq * 32), internal::kThreads>>>(
            batch * tq, d, gt, static_cast<const T*>(y), dsum);
      }
      if constexpr (std::is_same_v<T, float>) {
        if (d == kTcD && AllowTf32() && dropout.p == 0 &&
            Async(kTcD, d, {q, k, v, dy, dq, dk, dv})) {
          AllowShared(op, Tf32QueryGradKernel, kTcGradShared, d);
          AllowShared(op, Tf32KeyGradKernel, kTcGradShared, d);
          const int64_t q_tiles = (tq + kTcRows - 1) / kTcRows,
                        k_tiles = (tk + kTcRows - 1) / kTcRows;
          if (tq > 0) {
            Tf32QueryGradKernel<<<batch * q_tiles, kTcThreads, kTcGradShared>>>(
                q_tiles, tq, tk, qt, kt, vt, lt, dsum, gt, static_cast<T*>(dq));
          }
          Tf32KeyGradKernel<<<batch * k_tiles, kTcThreads, kTcGradShared>>>(
              k_tiles, tq, tk, qt, kt, vt, lt, dsum, gt, static_cast<T*>(dk), static_cast<T*>(dv));
          return;
        }
      }
      if (tq > 0) {
        const int64_t dq_shared = 2 * 2 * kCols * kD * static_cast<int64_t>(sizeof(T));
        AllowShared(op, QueryGradKernel<T, kD>, dq_shared, d);
        QueryGradKernel<T, kD><<<batch * Tiles(tq), kRows, dq_shared>>>(
            Tiles(tq), tq, tk, d, qt, kt, vt, lt, dsum, gt, static_cast<T*>(dq),
            Async(kD, d, {k, v}), dropout);
      }
      const int64_t kv_shared = 2 * (2 * kCols * kD + 2 * kCols) * static_cast<int64_t>(sizeof(T));
      AllowShared(op, KeyGradKernel<T, kD, true>, kv_shared, d);
      AllowShared(op, KeyGradKernel<T, kD, false>, kv_shared, d);
      const bool async = Async(kD, d, {q, dy});
      KeyGradKernel<T, kD, true><<<batch * Tiles(tk), kRows, kv_shared>>>(
          Tiles(tk), tq, tk, d, qt, kt, vt, lt, dsum, gt, static_cast<T*>(dv), async, dropout);
      KeyGradKernel<T, kD, false><<<batch * Tiles(tk), kRows, kv_shared>>>(
          Tiles(tk), tq, tk, d, qt, kt, vt, lt, dsum, gt, static_cast<T*>(dk), async, dropout);
    });
  });
  EMBER_CUDA_CHECK_LAUNCH(op);
}

}  // namespace ember::kernels::cuda
