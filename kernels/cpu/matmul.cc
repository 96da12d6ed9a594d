// Gemm (see matmul.h): packing and a register-tiled micro-kernel in Highway, compiled
// once per SIMD target.

#include "kernels/cpu/matmul.h"

#include <algorithm>

#include "base/error.h"
#include "kernels/cpu/internal/check.h"
#include "kernels/cpu/thread_pool.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/matmul.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/aligned_allocator.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Register tile: kMr rows of C by kNv vectors of columns (nr = kNv * lanes). The
// kMr * kNv accumulators, kNv B vectors and one broadcast A value must fit the register
// file: 8 x 3 (24 + 4 registers) with AVX-512's 32, 6 x 2 (12 + 3) with AVX2's 16.
// Cache blocking: a kc x nr panel of B stays in L1 (kKc f32 rows: 24 KiB with AVX-512,
// 16 KiB with AVX2; as many bytes for f64) while a kMc x kc block of A stays in L2;
// kNc columns of B (a 512 KiB f32 block with AVX-512, under half of L2) are packed at a
// time. Measured with matmul_benchmark: the 8 x 3 tile and these blocks took AVX-512
// from 55-75% of OpenBLAS to 78-96% at GPT-2's shapes on 2 threads.
#if HWY_TARGET <= HWY_AVX3 || !HWY_ARCH_X86
constexpr int64_t kMr = 8, kNv = 3, kKc = 128;
#else
constexpr int64_t kMr = 6, kNv = 2, kKc = 256;
#endif
constexpr int64_t kMc = 16 * kMr;
constexpr int64_t kNc = 1024;

// Packs rows [0, rows) x columns [0, depth) of A (from `a`) into slivers of kMr rows:
// packed[s][p][r] = A[s * kMr + r][p], rows past the end zero.
template <typename T>
void PackA(const T* a, int64_t rs, int64_t cs, int64_t rows, int64_t depth, T* packed) {
  for (int64_t s = 0; s < rows; s += kMr) {
    const int64_t valid = std::min(kMr, rows - s);
    for (int64_t p = 0; p < depth; ++p) {
      for (int64_t r = 0; r < kMr; ++r) {
        *packed++ = r < valid ? a[(s + r) * rs + p * cs] : T(0);
      }
    }
  }
}

// Packs rows [0, depth) x columns [0, cols) of B into panels of nr columns:
// packed[s][p][c] = B[p][s * nr + c], columns past the end zero. B is read along its
// contiguous direction: row by row for a row-major B; column by column for a
// transposed one (x W^T with W [out, in], Linear's forward), each column written
// down its panel with stride nr (the panel, kc x nr, stays in L1).
template <typename T>
void PackB(const T* b, int64_t rs, int64_t cs, int64_t depth, int64_t cols, int64_t nr, T* packed) {
  const int64_t panels = (cols + nr - 1) / nr;
  if (rs == 1 && cs != 1) {
    for (int64_t s = 0; s < panels; ++s) {
      T* panel = packed + s * depth * nr;
      const int64_t valid = std::min(nr, cols - s * nr);
      for (int64_t c = 0; c < valid; ++c) {
        const T* column = b + (s * nr + c) * cs;
        for (int64_t p = 0; p < depth; ++p) panel[p * nr + c] = column[p];
      }
      for (int64_t c = valid; c < nr; ++c) {
        for (int64_t p = 0; p < depth; ++p) panel[p * nr + c] = T(0);
      }
    }
    return;
  }
  for (int64_t p = 0; p < depth; ++p) {
    const T* row = b + p * rs;
    for (int64_t s = 0; s < panels; ++s) {
      T* dst = packed + (s * depth + p) * nr;
      const int64_t valid = std::min(nr, cols - s * nr);
      if (cs == 1 && valid == nr) {  // whole vectors (a memcpy call per 192 bytes costs more)
        const hn::ScalableTag<T> d;
        const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
        for (int64_t v = 0; v < nr; v += lanes) hn::Store(hn::LoadU(d, row + s * nr + v), d, dst + v);
        continue;
      }
      for (int64_t c = 0; c < nr; ++c) dst[c] = c < valid ? row[(s * nr + c) * cs] : T(0);
    }
  }
}

// C[0:rows, 0:cols] (+)= Ap Bp over `depth`, for one kMr x nr tile (rows <= kMr,
// cols <= nr); `add` says whether to add to C.
template <typename T>
void MicroKernel(int64_t depth, const T* HWY_RESTRICT ap, const T* HWY_RESTRICT bp, T* c,
                 int64_t ldc, int64_t rows, int64_t cols, bool add) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  using V = decltype(hn::Zero(d));
  V tile[kMr][kNv];
  for (int64_t r = 0; r < kMr; ++r) {
    for (int64_t v = 0; v < kNv; ++v) tile[r][v] = hn::Zero(d);
  }
  for (int64_t p = 0; p < depth; ++p) {
    V b[kNv];
    for (int64_t v = 0; v < kNv; ++v) b[v] = hn::LoadU(d, bp + v * lanes);
    bp += kNv * lanes;
#pragma GCC unroll 16
    for (int64_t r = 0; r < kMr; ++r) {
      const V a = hn::Set(d, ap[r]);
      for (int64_t v = 0; v < kNv; ++v) tile[r][v] = hn::MulAdd(a, b[v], tile[r][v]);
    }
    ap += kMr;
  }
  if (cols == kNv * lanes) {
    for (int64_t r = 0; r < rows; ++r) {
      T* row = c + r * ldc;
      for (int64_t v = 0; v < kNv; ++v) {
        V sum = tile[r][v];
        if (add) sum = hn::Add(sum, hn::LoadU(d, row + v * lanes));
        hn::StoreU(sum, d, row + v * lanes);
      }
    }
    return;
  }
  // A partial tile at the right edge: through a buffer.
  HWY_ALIGN T buffer[kNv * HWY_MAX_BYTES / sizeof(T)];
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t v = 0; v < kNv; ++v) hn::Store(tile[r][v], d, buffer + v * lanes);
    T* row = c + r * ldc;
    for (int64_t j = 0; j < cols; ++j) row[j] = add ? row[j] + buffer[j] : buffer[j];
  }
}

// Per-thread packing buffers (0: B, 1: A), grown when needed and reused, so that a
// steady stream of products allocates nothing. Aligned to 64 bytes: a packed row of
// B is then whole cache lines.
template <typename T>
T* PackBuffer(int which, int64_t items) {
  struct Slot {
    hwy::AlignedFreeUniquePtr<T[]> data;
    int64_t capacity = 0;
  };
  thread_local Slot slots[2];
  Slot& slot = slots[which];
  if (slot.capacity < items) {
    slot.data = hwy::AllocateAligned<T>(static_cast<size_t>(items));
    slot.capacity = items;
  }
  return slot.data.get();
}

// C (+)= A B on the calling thread: B in blocks of kNc columns and max_kc rows, each
// packed once and swept by kMc-row blocks of packed A, tile by tile.
template <typename T>
void GemmSerial(int64_t m, int64_t k, int64_t n, const T* a, int64_t ars, int64_t acs, const T* b,
                int64_t brs, int64_t bcs, T* c, int64_t ldc, bool accumulate) {
  const hn::ScalableTag<T> d;
  const int64_t nr = kNv * static_cast<int64_t>(hn::Lanes(d));
  const int64_t max_kc = kKc * 4 / static_cast<int64_t>(sizeof(T));  // same panel bytes
  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    const int64_t nc_padded = (nc + nr - 1) / nr * nr;
    for (int64_t pc = 0; pc < k; pc += max_kc) {
      const int64_t kc = std::min(max_kc, k - pc);
      const bool add = accumulate || pc > 0;
      T* const packed_b = PackBuffer<T>(0, kc * nc_padded);
      PackB(b + pc * brs + jc * bcs, brs, bcs, kc, nc, nr, packed_b);
      T* const packed_a = PackBuffer<T>(1, kMc * kc);
      for (int64_t ic = 0; ic < m; ic += kMc) {
        const int64_t mc = std::min(kMc, m - ic);
        PackA(a + ic * ars + pc * acs, ars, acs, mc, kc, packed_a);
        for (int64_t jr = 0; jr < nc; jr += nr) {
          for (int64_t ir = 0; ir < mc; ir += kMr) {
            MicroKernel(kc, packed_a + ir * kc, packed_b + jr * kc, c + (ic + ir) * ldc + jc + jr,
                        ldc, std::min(kMr, mc - ir), std::min(nr, nc - jr), add);
          }
        }
      }
    }
  }
}

// C[0:m, j0:j1] (+)= A B for a few rows of A (m < kMr), without packing: packing B
// costs as much as using it once, and a row of generated tokens is one row. B's
// contiguous side decides the loop: rows of B (C row += a_ip B[p, :], axpy over
// columns) or columns of B (C[i][j] = a_i . B[:, j], dot products; x W^T with W [out,
// in]).
template <typename T>
void GemmFewRows(int64_t m, int64_t k, int64_t j0, int64_t j1, const T* a, int64_t ars, int64_t acs,
                 const T* b, int64_t brs, int64_t bcs, T* c, int64_t ldc, bool accumulate) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0; i < m; ++i) {
    const T* ai = a + i * ars;
    T* ci = c + i * ldc;
    if (bcs == 1) {
      if (!accumulate) std::fill(ci + j0, ci + j1, T(0));
      for (int64_t p = 0; p < k; ++p) {
        const T* row = b + p * brs;
        const auto av = hn::Set(d, ai[p * acs]);
        int64_t j = j0;
        for (; j + lanes <= j1; j += lanes) {
          hn::StoreU(hn::MulAdd(av, hn::LoadU(d, row + j), hn::LoadU(d, ci + j)), d, ci + j);
        }
        for (; j < j1; ++j) ci[j] += ai[p * acs] * row[j];
      }
      continue;
    }
    for (int64_t j = j0; j < j1; ++j) {  // brs == 1: column j is contiguous
      const T* col = b + j * bcs;
      T sum = 0;
      int64_t p = 0;
      if (acs == 1) {
        auto s0 = hn::Zero(d), s1 = s0;
        for (; p + 2 * lanes <= k; p += 2 * lanes) {
          s0 = hn::MulAdd(hn::LoadU(d, ai + p), hn::LoadU(d, col + p), s0);
          s1 = hn::MulAdd(hn::LoadU(d, ai + p + lanes), hn::LoadU(d, col + p + lanes), s1);
        }
        sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
      }
      for (; p < k; ++p) sum += ai[p * acs] * col[p];
      ci[j] = accumulate ? ci[j] + sum : sum;
    }
  }
}

// Splits C across the pool into independent blocks, each a GemmSerial with its own
// packing: column blocks (whole nr-wide panels) when there are enough of them to go
// round, so that no thread waits for another's packed B; otherwise row blocks. A few
// rows against a B with a contiguous side go unpacked (GemmFewRows), split by columns.
template <typename T>
void GemmImpl(int64_t m, int64_t k, int64_t n, const T* a, int64_t ars, int64_t acs, const T* b,
              int64_t brs, int64_t bcs, T* c, int64_t ldc, bool accumulate) {
  if (k == 0) {  // C = 0 (or unchanged)
    if (!accumulate) {
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    }
    return;
  }
  if (m < kMr && (bcs == 1 || brs == 1)) {
    // Threads take blocks of 64 columns (whole vectors), so which columns go through
    // the vector loop, and so their rounding, does not depend on the thread count.
    constexpr int64_t kBlock = 64;
    ParallelFor((n + kBlock - 1) / kBlock, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, m * k * kBlock)),
                [&](int64_t begin, int64_t end) {
                  GemmFewRows(m, k, begin * kBlock, std::min(n, end * kBlock), a, ars, acs, b, brs, bcs, c, ldc,
                              accumulate);
                });
    return;
  }
  const hn::ScalableTag<T> d;
  const int64_t nr = kNv * static_cast<int64_t>(hn::Lanes(d));
  const int64_t panels = (n + nr - 1) / nr, slivers = (m + kMr - 1) / kMr;
  // Below about 2^17 multiply-adds a product is not worth waking the pool for.
  const int64_t min_tiles = std::max<int64_t>(1, (1 << 17) / (kMr * nr * k));
  if (panels >= 4 * NumThreads() || panels >= slivers) {
    ParallelFor(panels, min_tiles, [&](int64_t begin, int64_t end) {
      const int64_t j0 = begin * nr, j1 = std::min(n, end * nr);
      GemmSerial(m, k, j1 - j0, a, ars, acs, b + j0 * bcs, brs, bcs, c + j0, ldc, accumulate);
    });
  } else {
    ParallelFor(slivers, min_tiles, [&](int64_t begin, int64_t end) {
      const int64_t i0 = begin * kMr, i1 = std::min(m, end * kMr);
      GemmSerial(i1 - i0, k, n, a + i0 * ars, ars, acs, b, brs, bcs, c + i0 * ldc, ldc, accumulate);
    });
  }
}

void GemmF32(int64_t m, int64_t k, int64_t n, const float* a, int64_t ars, int64_t acs,
             const float* b, int64_t brs, int64_t bcs, float* c, int64_t ldc, bool accumulate) {
  GemmImpl(m, k, n, a, ars, acs, b, brs, bcs, c, ldc, accumulate);
}
void GemmF64(int64_t m, int64_t k, int64_t n, const double* a, int64_t ars, int64_t acs,
             const double* b, int64_t brs, int64_t bcs, double* c, int64_t ldc, bool accumulate) {
  GemmImpl(m, k, n, a, ars, acs, b, brs, bcs, c, ldc, accumulate);
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(GemmF32);
HWY_EXPORT(GemmF64);

void Gemm(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c,
          int64_t ldc, bool accumulate) {
  internal::CheckFloatDType("matmul", dtype);
  if (m == 0 || n == 0) return;
  if (dtype == DType::kF32) {
    HWY_DYNAMIC_DISPATCH(GemmF32)
    (m, k, n, static_cast<const float*>(a.data), a.row_stride, a.col_stride,
     static_cast<const float*>(b.data), b.row_stride, b.col_stride, static_cast<float*>(c), ldc,
     accumulate);
  } else {
    HWY_DYNAMIC_DISPATCH(GemmF64)
    (m, k, n, static_cast<const double*>(a.data), a.row_stride, a.col_stride,
     static_cast<const double*>(b.data), b.row_stride, b.col_stride, static_cast<double*>(c), ldc,
     accumulate);
  }
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
