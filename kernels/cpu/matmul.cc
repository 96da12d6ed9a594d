// Gemm (see matmul.h): the blocked GEMM of internal/gemm-inl.h on strided matrices,
// split across threads, and an unpacked path for a few rows; compiled once per SIMD
// target.

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
// clang-format on
#include "kernels/cpu/internal/gemm-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace gemm = internal::HWY_NAMESPACE;
using gemm::kMr;

// C (+)= A B on the calling thread, A and B strided matrices.
template <typename T>
void GemmSerial(int64_t m, int64_t k, int64_t n, const T* a, int64_t ars, int64_t acs, const T* b,
                int64_t brs, int64_t bcs, T* c, int64_t ldc, bool accumulate) {
  gemm::GemmBlocked(m, k, n, gemm::StridedA(a, ars, acs), gemm::StridedB(b, brs, bcs), c, ldc, accumulate);
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
  if (k == 0) {  // C = 0 (or unchanged): nothing to split
    GemmSerial(m, k, n, a, ars, acs, b, brs, bcs, c, ldc, accumulate);
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
  const int64_t nr = gemm::PanelWidth<T>();
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
