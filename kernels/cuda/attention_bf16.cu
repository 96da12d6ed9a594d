// Causal attention for bf16 heads of d = 64 on tensor cores (internal/attention_bf16.h),
// flash attention 2's scheme (Dao 2023) on mma.sync m16n8k16 (bf16 operands, f32 sums):
// a block is 4 warps and owns 64 rows, a warp 16 of them, whose operand fragments stay in
// registers while tiles of 64 rows of the other side come through shared memory.
//
//   forward (queries): S = Q K^T scale, online softmax over the key tiles (the row's
//       running max m and sum l in f32, O rescaled by exp(m - m')), P rounded to bf16
//       for O += P V; y = O / l, lse = m + log l.
//   dQ (queries):  P = exp(S - lse), dP = dY V^T, dS = P (dP - D) scale, dQ += dS K.
//   dK, dV (keys): the same P^T and dS^T from K Q^T and V dY^T, dV += P^T dY and
//       dK += dS^T Q, over the query tiles that see the block's keys.
// D = dY . Y per query row comes first (a warp a row). Every sum has one owner: no
// atomics, the same bits every run.
//
// Fragments of m16n8k16 (PTX ISA, "matrix fragments for mma.m16n8k16"), with g = lane / 4
// and c = lane % 4: A (16 x 16, row-major) is four registers of two bf16, rows g and
// g + 8, columns 2c, 2c + 1 and those + 8; B (16 x 8) is two, rows 2c, 2c + 1 and those
// + 8, column g; the f32 sums D (16 x 8) are four, rows g (d0, d1) and g + 8 (d2, d3),
// columns 2c, 2c + 1. Two n8 tiles of sums side by side are, rounded to bf16, the A
// fragment of the next product: P never leaves registers.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/attention_bf16.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"

namespace ember::kernels::cuda::internal {
namespace {

constexpr int kD = static_cast<int>(kCudaBf16HeadSize);
constexpr int kWarps = 4;
constexpr int kBlockThreads = 32 * kWarps;
constexpr int kTile = 16 * kWarps;  // rows a block owns; rows of the other side a tile
constexpr int kLd = kD + 8;         // a shared row, padded: the fragments' reads spread over banks
constexpr int kChunks = kD / 16;    // k16 steps over the head
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Two bf16 in one register, `low` at the lower address.
__device__ uint32_t Join(uint16_t low, uint16_t high) {
  return static_cast<uint32_t>(low) | (static_cast<uint32_t>(high) << 16);
}
__device__ uint32_t Pack(float low, float high) {
  return Join(FromFloat<Bf16>(low).bits, FromFloat<Bf16>(high).bits);
}
// Two neighbouring bf16 of a shared row (an even column: 4-byte aligned).
__device__ uint32_t PairAt(const uint16_t* p) { return *reinterpret_cast<const uint32_t*>(p); }

// d += a b for one m16n8k16 tile.
__device__ void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// tile [kTile, kLd] = rows [r0, r0 + kTile) of m [rows, kD], zeros past the last row; 16
// bytes a thread at a time (a row of m is 128 bytes, 16-byte aligned).
__device__ void LoadTile(const uint16_t* m, int64_t r0, int64_t rows, uint16_t* tile) {
  for (int i = threadIdx.x; i < kTile * (kD / 8); i += blockDim.x) {
    const int r = i / (kD / 8), c = i % (kD / 8) * 8;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r0 + r < rows) v = *reinterpret_cast<const uint4*>(m + (r0 + r) * kD + c);
    *reinterpret_cast<uint4*>(tile + r * kLd + c) = v;
  }
}

// The A fragments of a warp's 16 rows [row0, row0 + 16) of a shared tile, over the head.
__device__ void LoadA(const uint16_t* tile, int row0, uint32_t (&a)[kChunks][4]) {
  const int g = threadIdx.x % 32 / 4, c = threadIdx.x % 4;
#pragma unroll
  for (int kc = 0; kc < kChunks; ++kc) {
    const uint16_t* top = tile + (row0 + g) * kLd + kc * 16 + 2 * c;
    a[kc][0] = PairAt(top);
    a[kc][1] = PairAt(top + 8 * kLd);
    a[kc][2] = PairAt(top + 8);
    a[kc][3] = PairAt(top + 8 * kLd + 8);
  }
}

// s[j] (j < kTile / 8) = a times the transpose of the tile's rows [8 j, 8 j + 8): B[k][n]
// = tile[8 j + n][k], whose pairs along k are neighbours in a shared row.
__device__ void TimesTransposed(const uint32_t (&a)[kChunks][4], const uint16_t* tile,
                                float (&s)[kTile / 8][4]) {
  const int g = threadIdx.x % 32 / 4, c = threadIdx.x % 4;
#pragma unroll
  for (int j = 0; j < kTile / 8; ++j) {
    s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0;
#pragma unroll
    for (int kc = 0; kc < kChunks; ++kc) {
      const uint16_t* row = tile + (8 * j + g) * kLd + kc * 16 + 2 * c;
      Mma(s[j], a[kc], PairAt(row), PairAt(row + 8));
    }
  }
}

// acc[n] (n < kD / 8) += p times the tile: p [16, kTile] as sums (rounded here to bf16
// as A fragments), B[k][n] = tile[k][8 n + col], two rows a register.
__device__ void AccumulateTimes(const float (&p)[kTile / 8][4], const uint16_t* tile,
                                float (&acc)[kD / 8][4]) {
  const int g = threadIdx.x % 32 / 4, c = threadIdx.x % 4;
#pragma unroll
  for (int kk = 0; kk < kTile / 16; ++kk) {
    const uint32_t a[4] = {Pack(p[2 * kk][0], p[2 * kk][1]), Pack(p[2 * kk][2], p[2 * kk][3]),
                           Pack(p[2 * kk + 1][0], p[2 * kk + 1][1]),
                           Pack(p[2 * kk + 1][2], p[2 * kk + 1][3])};
    const uint16_t* rows = tile + (16 * kk + 2 * c) * kLd + g;
#pragma unroll
    for (int n = 0; n < kD / 8; ++n) {
      const uint16_t* at = rows + 8 * n;
      Mma(acc[n], a, Join(at[0], at[kLd]), Join(at[8 * kLd], at[9 * kLd]));
    }
  }
}

// Rows [row0, row0 + 16) of m [rows, kD] = acc * factor[h] (h = 0 for row g, 1 for g + 8),
// rounded to bf16; rows past the last skipped.
__device__ void StoreRows(const float (&acc)[kD / 8][4], const float (&factor)[2], uint16_t* m,
                          int64_t row0, int64_t rows) {
  const int g = threadIdx.x % 32 / 4, c = threadIdx.x % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int64_t r = row0 + g + 8 * h;
    if (r >= rows) continue;
#pragma unroll
    for (int n = 0; n < kD / 8; ++n) {
      *reinterpret_cast<uint32_t*>(m + r * kD + 8 * n + 2 * c) =
          Pack(acc[n][2 * h] * factor[h], acc[n][2 * h + 1] * factor[h]);
    }
  }
}

// The sum (max) of v over the four lanes that hold one row's columns.
__device__ float RowSum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}
__device__ float RowMax(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

// The tile of 64 rows a block takes among a head's `tiles`, the last (the most keys under
// the causal mask, or for keys the fewest queries) first, as attention.cu's kernels.
__device__ int64_t LastFirst(int64_t tiles) { return tiles - 1 - blockIdx.x % tiles; }

// Block b: head b / tiles, queries [64 t, + 64) for t = LastFirst(tiles).
__global__ void __launch_bounds__(kBlockThreads)
    ForwardKernel(int64_t tiles, int64_t tq, int64_t tk, const uint16_t* q, const uint16_t* k,
                  const uint16_t* v, int64_t kv_stride, uint16_t* y, float* lse) {
  __shared__ __align__(16) uint16_t qs[kTile * kLd], ks[kTile * kLd], vs[kTile * kLd];
  const int64_t head = blockIdx.x / tiles, q0 = LastFirst(tiles) * kTile, offset = tk - tq;
  const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, c = threadIdx.x % 4;
  q += head * tq * kD;
  k += head * kv_stride;
  v += head * kv_stride;
  LoadTile(q, q0, tq, qs);
  __syncthreads();
  uint32_t qa[kChunks][4];
  LoadA(qs, 16 * warp, qa);
  // Scores in the log2 domain: s log2(e) / sqrt(d), so that exp is one exp2.
  const float scale = kLog2e / sqrtf(static_cast<float>(kD));
  const int64_t row[2] = {q0 + 16 * warp + g, q0 + 16 * warp + g + 8};
  float o[kD / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0, 0};
  const int64_t key_end = std::min(tk, std::min(q0 + kTile, tq) + offset);
  for (int64_t k0 = 0; k0 < key_end; k0 += kTile) {
    __syncthreads();  // the last tile's reads are done
    LoadTile(k, k0, tk, ks);
    LoadTile(v, k0, tk, vs);
    __syncthreads();
    float s[kTile / 8][4];
    TimesTransposed(qa, ks, s);
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int h = e / 2;
        const int64_t key = k0 + 8 * j + 2 * c + e % 2;
        s[j][e] = key < tk && key <= row[h] + offset ? s[j][e] * scale : -INFINITY;
        tile_max[h] = fmaxf(tile_max[h], s[j][e]);
      }
    }
    float base[2], correction[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float next = fmaxf(m[h], RowMax(tile_max[h]));
      base[h] = next == -INFINITY ? 0.0f : next;  // a row with nothing visible yet
      correction[h] = exp2f(m[h] - base[h]);
      m[h] = next;
      l[h] *= correction[h];
    }
#pragma unroll
    for (int n = 0; n < kD / 8; ++n) {
      o[n][0] *= correction[0];
      o[n][1] *= correction[0];
      o[n][2] *= correction[1];
      o[n][3] *= correction[1];
    }
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[j][e] = exp2f(s[j][e] - base[e / 2]);
        l[e / 2] += s[j][e];
      }
    }
    AccumulateTimes(s, vs, o);
  }
  float inverse[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] = RowSum(l[h]);
    inverse[h] = 1.0f / l[h];
    if (c == 0 && row[h] < tq) lse[head * tq + row[h]] = (m[h] + log2f(l[h])) * kLn2;
  }
  StoreRows(o, inverse, y + head * tq * kD, 16 * warp + q0, tq);
}

// D_r = dY_r . Y_r in f32, a warp a row.
__global__ void RowDotKernel(int64_t rows, const uint16_t* dy, const uint16_t* y, float* out) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32; r < rows;
       r += warps) {
    float sum = 0;
    for (int x = lane; x < kD; x += 32) {
      sum += ToFloat(Bf16{dy[r * kD + x]}) * ToFloat(Bf16{y[r * kD + x]});
    }
    sum = WarpReduce(sum, SumOp{});
    if (lane == 0) out[r] = sum;
  }
}

// dS = P (dP - D) scale in place of dp, and P in place of s: P = exp(s - lse) where
// visible (s in the log2 domain, lse and D per row h of the fragment), else 0.
template <typename Visible>
__device__ void GradScores(float (&s)[kTile / 8][4], float (&dp)[kTile / 8][4],
                           const float (&lse2)[2], const float (&dsum)[2], float scale,
                           Visible visible) {
#pragma unroll
  for (int j = 0; j < kTile / 8; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int h = e / 2;
      const float p = visible(j, e) ? exp2f(fminf(s[j][e] - lse2[h], 0.0f)) : 0.0f;
      s[j][e] = p;
      dp[j][e] = p * (dp[j][e] - dsum[h]) * scale;
    }
  }
}

// Block b: head b / tiles, queries [64 t, + 64) for t = LastFirst(tiles); dQ.
__global__ void __launch_bounds__(kBlockThreads)
    QueryGradKernel(int64_t tiles, int64_t tq, int64_t tk, const uint16_t* q, const uint16_t* k,
                    const uint16_t* v, const float* lse, const float* dsum, const uint16_t* dy,
                    uint16_t* dq) {
  __shared__ __align__(16) uint16_t ks[kTile * kLd], vs[kTile * kLd];
  const int64_t head = blockIdx.x / tiles, q0 = LastFirst(tiles) * kTile, offset = tk - tq;
  const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, c = threadIdx.x % 4;
  q += head * tq * kD;
  dy += head * tq * kD;
  k += head * tk * kD;
  v += head * tk * kD;
  uint32_t qa[kChunks][4], da[kChunks][4];
  LoadTile(q, q0, tq, ks);  // the key tiles' space holds Q and dY first
  LoadTile(dy, q0, tq, vs);
  __syncthreads();
  LoadA(ks, 16 * warp, qa);
  LoadA(vs, 16 * warp, da);
  const float scale = 1.0f / sqrtf(static_cast<float>(kD)), scale2 = kLog2e * scale;
  const int64_t row[2] = {q0 + 16 * warp + g, q0 + 16 * warp + g + 8};
  float lse2[2], drow[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    lse2[h] = row[h] < tq ? lse[head * tq + row[h]] * kLog2e : 0.0f;
    drow[h] = row[h] < tq ? dsum[head * tq + row[h]] : 0.0f;
  }
  float acc[kD / 8][4] = {};
  const int64_t key_end = std::min(tk, std::min(q0 + kTile, tq) + offset);
  for (int64_t k0 = 0; k0 < key_end; k0 += kTile) {
    __syncthreads();
    LoadTile(k, k0, tk, ks);
    LoadTile(v, k0, tk, vs);
    __syncthreads();
    float s[kTile / 8][4], dp[kTile / 8][4];
    TimesTransposed(qa, ks, s);
    TimesTransposed(da, vs, dp);
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[j][e] *= scale2;
    }
    GradScores(s, dp, lse2, drow, scale, [&](int j, int e) {
      const int64_t key = k0 + 8 * j + 2 * c + e % 2;
      return row[e / 2] < tq && key < tk && key <= row[e / 2] + offset;
    });
    AccumulateTimes(dp, ks, acc);
  }
  const float one[2] = {1.0f, 1.0f};
  StoreRows(acc, one, dq + head * tq * kD, q0 + 16 * warp, tq);
}

// Block b: head b / tiles, keys [64 t, + 64) for t = LastFirst(tiles); dK and dV.
__global__ void __launch_bounds__(kBlockThreads)
    KeyGradKernel(int64_t tiles, int64_t tq, int64_t tk, const uint16_t* q, const uint16_t* k,
                  const uint16_t* v, const float* lse, const float* dsum, const uint16_t* dy,
                  uint16_t* dk, uint16_t* dv) {
  __shared__ __align__(16) uint16_t qs[kTile * kLd], dys[kTile * kLd];
  __shared__ float lse_tile[kTile], d_tile[kTile];
  const int64_t head = blockIdx.x / tiles, k0 = LastFirst(tiles) * kTile, offset = tk - tq;
  const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, c = threadIdx.x % 4;
  q += head * tq * kD;
  dy += head * tq * kD;
  k += head * tk * kD;
  v += head * tk * kD;
  uint32_t ka[kChunks][4], va[kChunks][4];
  LoadTile(k, k0, tk, qs);  // the query tiles' space holds K and V first
  LoadTile(v, k0, tk, dys);
  __syncthreads();
  LoadA(qs, 16 * warp, ka);
  LoadA(dys, 16 * warp, va);
  const float scale = 1.0f / sqrtf(static_cast<float>(kD)), scale2 = kLog2e * scale;
  const int64_t key[2] = {k0 + 16 * warp + g, k0 + 16 * warp + g + 8};
  float dk_acc[kD / 8][4] = {}, dv_acc[kD / 8][4] = {};
  // Query i sees key j when j <= i + offset: the first query tile that sees key k0.
  const int64_t first = std::max<int64_t>(0, k0 - offset) / kTile * kTile;
  for (int64_t i0 = first; i0 < tq; i0 += kTile) {
    __syncthreads();
    LoadTile(q, i0, tq, qs);
    LoadTile(dy, i0, tq, dys);
    for (int i = threadIdx.x; i < kTile; i += blockDim.x) {
      const bool in = i0 + i < tq;
      lse_tile[i] = in ? lse[head * tq + i0 + i] * kLog2e : 0.0f;
      d_tile[i] = in ? dsum[head * tq + i0 + i] : 0.0f;
    }
    __syncthreads();
    // S^T = K Q^T and dP^T = V dY^T: rows are keys, columns queries.
    float st[kTile / 8][4], dpt[kTile / 8][4];
    TimesTransposed(ka, qs, st);
    TimesTransposed(va, dys, dpt);
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = 8 * j + 2 * c + e % 2;
        const int64_t query = i0 + col;
        const bool visible = query < tq && key[e / 2] < tk && key[e / 2] <= query + offset;
        const float p = visible ? exp2f(fminf(st[j][e] * scale2 - lse_tile[col], 0.0f)) : 0.0f;
        st[j][e] = p;
        dpt[j][e] = p * (dpt[j][e] - d_tile[col]) * scale;
      }
    }
    AccumulateTimes(st, dys, dv_acc);  // dV += P^T dY
    AccumulateTimes(dpt, qs, dk_acc);  // dK += dS^T Q
  }
  const float one[2] = {1.0f, 1.0f};
  StoreRows(dv_acc, one, dv + head * tk * kD, k0 + 16 * warp, tk);
  StoreRows(dk_acc, one, dk + head * tk * kD, k0 + 16 * warp, tk);
}

int64_t Tiles(int64_t rows) { return (rows + kTile - 1) / kTile; }

}  // namespace

void Bf16CausalAttentionForward(int64_t batch, int64_t tq, int64_t tk, const uint16_t* q,
                                const uint16_t* k, const uint16_t* v, int64_t kv_stride,
                                uint16_t* y, float* lse) {
  ForwardKernel<<<batch * Tiles(tq), kBlockThreads>>>(Tiles(tq), tq, tk, q, k, v, kv_stride, y,
                                                      lse);
  EMBER_CUDA_CHECK_LAUNCH("causal_attention (bf16)");
}

void Bf16CausalAttentionBackward(int64_t batch, int64_t tq, int64_t tk, const uint16_t* q,
                                 const uint16_t* k, const uint16_t* v, const uint16_t* y,
                                 const float* lse, const uint16_t* dy, uint16_t* dq, uint16_t* dk,
                                 uint16_t* dv) {
  const char* op = "causal_attention_backward (bf16)";
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device), op);
  const ScopedAllocation dsum_block(device, batch * tq * static_cast<int64_t>(sizeof(float)));
  float* dsum = dsum_block.as<float>();
  if (tq > 0) {
    RowDotKernel<<<Blocks(batch * tq * 32), kThreads>>>(batch * tq, dy, y, dsum);
    QueryGradKernel<<<batch * Tiles(tq), kBlockThreads>>>(Tiles(tq), tq, tk, q, k, v, lse, dsum, dy,
                                                          dq);
  }
  KeyGradKernel<<<batch * Tiles(tk), kBlockThreads>>>(Tiles(tk), tq, tk, q, k, v, lse, dsum, dy, dk,
                                                      dv);
  EMBER_CUDA_CHECK_LAUNCH(op);
}

}  // namespace ember::kernels::cuda::internal
