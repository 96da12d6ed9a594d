// Gemm (see matmul.h): packing and a register-tiled micro-kernel in Highway, compiled
// once per SIMD target.

#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <cstring>

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

// Register tile: kMr rows of C by two vectors of columns (kNr = 2 * lanes): 12
// accumulators, two B vectors and one broadcast A value fit AVX2's 16 registers.
constexpr int64_t kMr = 6;
// Cache blocking: a kKc x kNr panel of B stays in L1 while an kMc x kKc block of A
// stays in L2; kNc columns of B are packed at a time.
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 96;  // a multiple of kMr
constexpr int64_t kNc = 2048;

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
// packed[s][p][c] = B[p][s * nr + c], columns past the end zero. B is read row by row
// (a row of a wide B is contiguous; its columns are far apart).
template <typename T>
void PackB(const T* b, int64_t rs, int64_t cs, int64_t depth, int64_t cols, int64_t nr, T* packed) {
  const int64_t panels = (cols + nr - 1) / nr;
  for (int64_t p = 0; p < depth; ++p) {
    const T* row = b + p * rs;
    for (int64_t s = 0; s < panels; ++s) {
      T* dst = packed + (s * depth + p) * nr;
      const int64_t valid = std::min(nr, cols - s * nr);
      if (cs == 1 && valid == nr) {
        std::memcpy(dst, row + s * nr, nr * sizeof(T));
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
  V c00 = hn::Zero(d), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  V c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t p = 0; p < depth; ++p) {
    const V b0 = hn::LoadU(d, bp), b1 = hn::LoadU(d, bp + lanes);
    bp += 2 * lanes;
    V a = hn::Set(d, ap[0]);
    c00 = hn::MulAdd(a, b0, c00);
    c01 = hn::MulAdd(a, b1, c01);
    a = hn::Set(d, ap[1]);
    c10 = hn::MulAdd(a, b0, c10);
    c11 = hn::MulAdd(a, b1, c11);
    a = hn::Set(d, ap[2]);
    c20 = hn::MulAdd(a, b0, c20);
    c21 = hn::MulAdd(a, b1, c21);
    a = hn::Set(d, ap[3]);
    c30 = hn::MulAdd(a, b0, c30);
    c31 = hn::MulAdd(a, b1, c31);
    a = hn::Set(d, ap[4]);
    c40 = hn::MulAdd(a, b0, c40);
    c41 = hn::MulAdd(a, b1, c41);
    a = hn::Set(d, ap[5]);
    c50 = hn::MulAdd(a, b0, c50);
    c51 = hn::MulAdd(a, b1, c51);
    ap += kMr;
  }
  const V tile[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  if (cols == 2 * lanes) {
    for (int64_t r = 0; r < rows; ++r) {
      T* row = c + r * ldc;
      for (int64_t h = 0; h < 2; ++h) {
        V v = tile[r][h];
        if (add) v = hn::Add(v, hn::LoadU(d, row + h * lanes));
        hn::StoreU(v, d, row + h * lanes);
      }
    }
    return;
  }
  // A partial tile at the right edge: through a buffer.
  HWY_ALIGN T buffer[2 * HWY_MAX_BYTES / sizeof(T)];
  for (int64_t r = 0; r < rows; ++r) {
    hn::Store(tile[r][0], d, buffer);
    hn::Store(tile[r][1], d, buffer + lanes);
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

template <typename T>
void GemmImpl(int64_t m, int64_t k, int64_t n, const T* a, int64_t ars, int64_t acs, const T* b,
              int64_t brs, int64_t bcs, T* c, int64_t ldc, bool accumulate) {
  const hn::ScalableTag<T> d;
  const int64_t nr = 2 * static_cast<int64_t>(hn::Lanes(d));
  if (k == 0) {  // C = 0 (or unchanged)
    if (!accumulate) {
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    }
    return;
  }
  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    const int64_t nc_padded = (nc + nr - 1) / nr * nr;
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      const bool add = accumulate || pc > 0;
      // Pack B's panels across the pool, then the row blocks of C.
      const int64_t panels = nc_padded / nr;
      T* const pb = PackBuffer<T>(0, kc * nc_padded);
      ParallelFor(panels, 8, [&](int64_t begin, int64_t end) {
        PackB(b + pc * brs + (jc + begin * nr) * bcs, brs, bcs, kc,
              std::min(nc, end * nr) - begin * nr, nr, pb + begin * nr * kc);
      });
      // Threads take contiguous runs of kMr-row slivers of C (balanced to one
      // sliver), each in blocks of at most kMc rows.
      const int64_t slivers = (m + kMr - 1) / kMr;
      ParallelFor(slivers, 1, [&](int64_t begin, int64_t end) {
        T* const packed_a = PackBuffer<T>(1, kMc * kc);
        for (int64_t ic = begin * kMr; ic < std::min(m, end * kMr); ic += kMc) {
          const int64_t mc = std::min({kMc, m - ic, end * kMr - ic});
          PackA(a + ic * ars + pc * acs, ars, acs, mc, kc, packed_a);
          for (int64_t jr = 0; jr < nc; jr += nr) {
            for (int64_t ir = 0; ir < mc; ir += kMr) {
              MicroKernel(kc, packed_a + ir * kc, pb + jr * kc,
                          c + (ic + ir) * ldc + jc + jr, ldc, std::min(kMr, mc - ir),
                          std::min(nr, nc - jr), add);
            }
          }
        }
      });
    }
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
