// Gemm (see matmul.h): the blocked GEMM of internal/gemm-inl.h on strided matrices,
// split across threads, and an unpacked path for a few rows; compiled once per SIMD
// target.

#include "kernels/matmul.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/internal/dispatch.h"
#include "kernels/cpu/internal/gemm_bf16.h"
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

// C (+)= A B on the calling thread, A and B strided matrices. A row-major A against a
// B of at most kInPlacePanels panels is read in place: each block of A then serves only
// that many tiles, and packing it (a transpose through registers, a load and a store an
// entry) costs more than the tiles' strided loads. Measured with matmul_benchmark on a
// 2-core AVX-512 VM, GFLOP/s on 1 and 2 threads: the main job's Linear backward (2048 x
// 8192 x 128) 84-86 -> 98-105 and 159-174 -> 194-202; 2048 x 512 x 128 93-99 ->
// 102-108 and 187-198 -> 199-213; with 512 columns (11 panels) in place gained nothing,
// so a wider B keeps A packed.
constexpr int64_t kInPlacePanels = 4;
// Otherwise A is packed whole (gemm::PackAllA) for GemmBlocked, in pieces of at most
// kPackedABytes: the forward and backward products of GPT-2's layers (A [256, 3072] at
// most, 3 MiB) in one. A deeper A goes in pieces of whole blocks of depth, C summing
// them as GemmBlocked sums its blocks (so the result is the same, and each block of B is
// packed once still); a taller one in pieces of rows, each of which packs B again.
constexpr int64_t kPackedABytes = int64_t{4} << 20;

template <typename T>
void GemmSerial(int64_t m, int64_t k, int64_t n, const T* a, int64_t ars, int64_t acs, const T* b,
                int64_t brs, int64_t bcs, T* c, int64_t ldc, bool accumulate) {
  if (acs == 1 && n <= kInPlacePanels * gemm::PanelWidth<T>()) {
    gemm::GemmBlocked(m, k, n, gemm::InPlaceA(a, ars), gemm::StridedB(b, brs, bcs), c, ldc,
                      accumulate);
    return;
  }
  const int64_t kc = gemm::BlockDepth<T>(), size = sizeof(T);
  const int64_t rows_per_piece = std::max(kMr, kPackedABytes / (kc * size) / kMr * kMr);
  for (int64_t i0 = 0; i0 < m; i0 += rows_per_piece) {
    const int64_t rows = std::min(rows_per_piece, m - i0), padded = gemm::PaddedRows(rows);
    const int64_t depth_per_piece = std::max(kc, kPackedABytes / (padded * size) / kc * kc);
    int64_t p0 = 0;
    do {  // at least once: k = 0 still writes C
      const int64_t depth = std::min(depth_per_piece, k - p0);
      T* const packed = gemm::PackBuffer<T>(1, padded * depth);
      gemm::PackAllA(a + i0 * ars + p0 * acs, ars, acs, rows, depth, packed);
      gemm::GemmBlocked(rows, depth, n, gemm::PrepackedA(packed, rows),
                        gemm::StridedB(b + p0 * brs, brs, bcs), c + i0 * ldc, ldc,
                        accumulate || p0 > 0);
      p0 += depth;
    } while (p0 < k);
  }
}

// C row ci[j0, j0 + kVecs lanes) (+)= sum_p a_p B[p, j0:...] (a_p = ai[p acs], rows of B
// brs apart), the kVecs vectors of C held in registers over the whole depth: C is read
// and written once, not once a row of B (a chain through memory). Each vector's FMAs run
// in p's order, from C or 0.
template <int kVecs, typename T>
HWY_INLINE void AxpyBlock(int64_t k, const T* ai, int64_t acs, const T* b, int64_t brs, T* ci,
                          bool accumulate) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  hn::Vec<decltype(d)> acc[kVecs];
  for (int v = 0; v < kVecs; ++v) acc[v] = accumulate ? hn::LoadU(d, ci + v * lanes) : hn::Zero(d);
  for (int64_t p = 0; p < k; ++p) {
    const T* row = b + p * brs;
    const auto av = hn::Set(d, ai[p * acs]);
    for (int v = 0; v < kVecs; ++v) acc[v] = hn::MulAdd(av, hn::LoadU(d, row + v * lanes), acc[v]);
  }
  for (int v = 0; v < kVecs; ++v) hn::StoreU(acc[v], d, ci + v * lanes);
}

// C[0:m, j0:j1] (+)= A B for a few rows of A (m < kMr), without packing: packing B
// costs as much as using it once, and a row of generated tokens is one row. B's
// contiguous side decides the loop: rows of B (C row += a_ip B[p, :], axpy over
// columns, in blocks of 4 vectors kept in registers) or columns of B (C[i][j] = a_i .
// B[:, j], dot products; x W^T with W [out, in]).
template <typename T>
void GemmFewRows(int64_t m, int64_t k, int64_t j0, int64_t j1, const T* a, int64_t ars, int64_t acs,
                 const T* b, int64_t brs, int64_t bcs, T* c, int64_t ldc, bool accumulate) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t i = 0; i < m; ++i) {
    const T* ai = a + i * ars;
    T* ci = c + i * ldc;
    if (bcs == 1) {
      int64_t j = j0;
      for (; j + 4 * lanes <= j1; j += 4 * lanes)
        AxpyBlock<4>(k, ai, acs, b + j, brs, ci + j, accumulate);
      for (; j + lanes <= j1; j += lanes) AxpyBlock<1>(k, ai, acs, b + j, brs, ci + j, accumulate);
      for (; j < j1; ++j) {
        T sum = accumulate ? ci[j] : T(0);
        for (int64_t p = 0; p < k; ++p) sum += ai[p * acs] * b[p * brs + j];
        ci[j] = sum;
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
// packing, so that no thread waits for another's: column blocks (whole nr-wide panels),
// each of which packs all of A (unless A is read in place), or row blocks (whole
// slivers), each of which packs all of B. The split packs the smaller operand twice:
// rows for most of GPT-2's weight gradients (dW = dY^T X: A is [out, 256], B [256,
// in]), columns for the forward and the input's gradient (B is the weight). Measured
// with matmul_benchmark on a 2-core AVX-512 VM, 2 threads, GFLOP/s: dW of the head
// (50257 x 256 x 768) 192 -> 204, of the MLP's first layer (3072 x 256 x 768) 195 ->
// 211. The serial fallback of a busy machine (thread_pool.h: every chunk on the
// caller) packs the same twice: the MNIST MLP's forward (32 x 784 x 128), split by
// rows, packed its weight twice, and trailed one thread by 10%. A few rows against a
// B with a contiguous side go unpacked (GemmFewRows), split by columns.
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
    ParallelForWork((n + kBlock - 1) / kBlock, m * k * kBlock / 8, [&](int64_t begin, int64_t end) {
      GemmFewRows(m, k, begin * kBlock, std::min(n, end * kBlock), a, ars, acs, b, brs, bcs, c, ldc,
                  accumulate);
    });
    return;
  }
  const int64_t nr = gemm::PanelWidth<T>();
  if (ars == 1 && acs != 1 && n <= kInPlacePanels * nr && m > n) {
    // A stored transposed (a weight gradient, dW = dY^T X) against a narrow B: packing
    // A's blocks would transpose all of it. C^T = B^T A^T instead puts A on B's side,
    // whose rows pack by plain copies, and B^T, small, on A's; C^T goes through a buffer
    // and is transposed into C. Measured with matmul_benchmark on a 2-core AVX-512 VM at
    // the main job's head gradient (8192 x 2048 x 128): 65-68 -> 82-83 GFLOP/s on one
    // thread, 126-128 -> 159-161 on two.
    thread_local std::vector<T> buffer;
    buffer.resize(static_cast<size_t>(n * m));
    GemmImpl(n, k, m, b, bcs, brs, a, acs, ars, buffer.data(), m, false);
    // C = (C^T)^T a lane-count square at a time, transposed in registers; the columns
    // past the last whole square, and the rows past it, entry by entry.
    const T* ct = buffer.data();
    ParallelForWork(m, n, [&](int64_t begin, int64_t end) {
      const hn::ScalableTag<T> d;
      const int64_t lanes = static_cast<int64_t>(hn::Lanes(d)), whole = n / lanes * lanes;
      const auto entries = [&](int64_t i0, int64_t i1, int64_t j0) {
        for (int64_t i = i0; i < i1; ++i) {
          T* row = c + i * ldc;
          for (int64_t j = j0; j < n; ++j)
            row[j] = accumulate ? row[j] + ct[j * m + i] : ct[j * m + i];
        }
      };
      int64_t i = begin;
      for (; i + lanes <= end; i += lanes) {
        for (int64_t j = 0; j < whole; j += lanes) {
          // Lane r of v: C^T [j + r][i + row] = C [i + row][j + r].
          gemm::TransposeBlock(ct + j * m + i, m, lanes, [&](int64_t row, auto v) {
            T* out = c + (i + row) * ldc + j;
            hn::StoreU(accumulate ? hn::Add(hn::LoadU(d, out), v) : v, d, out);
          });
        }
        entries(i, i + lanes, whole);
      }
      entries(i, end, 0);
    });
    return;
  }
  const int64_t panels = (n + nr - 1) / nr, slivers = (m + kMr - 1) / kMr;
  // The threads this product will run on (one while a busy machine's loops go to the
  // caller alone: thread_pool.h); the results do not depend on the plan.
  const int64_t threads = ThreadsNow();
  const int64_t panels_per_thread = (panels + threads - 1) / threads;
  const bool a_in_place = acs == 1 && panels_per_thread <= kInPlacePanels;
  // Whole panels split unevenly where there are few: the main job's 128-wide products
  // have 3 (of 48 columns with AVX-512), 2 + 1 on two threads, one thread idle a third
  // of the time. Rows split evenly, at the price of packing B once per thread, small
  // beside the product where A has many rows (not the MNIST MLP's 32, above). On a
  // 2-vCPU Intel Xeon (Emerald Rapids), 2 threads, GFLOP/s: 2048 x 512 x 128 191-199 ->
  // 225-294, 2048 x 8192 x 128 195 -> 287-290 (x W and x W^T alike).
  const bool columns_uneven =
      10 * panels < 9 * panels_per_thread * threads && slivers >= 16 * threads;
  const bool by_columns =
      !columns_uneven &&
      (panels >= threads ? (a_in_place || m <= n || slivers < threads) : slivers < threads);
  if (by_columns) {
    ParallelForWork(panels, m * nr * k / 8, [&](int64_t begin, int64_t end) {
      const int64_t j0 = begin * nr, j1 = std::min(n, end * nr);
      GemmSerial(m, k, j1 - j0, a, ars, acs, b + j0 * bcs, brs, bcs, c + j0, ldc, accumulate);
    });
  } else {
    ParallelForWork(slivers, kMr * n * k / 8, [&](int64_t begin, int64_t end) {
      const int64_t i0 = begin * kMr, i1 = std::min(m, end * kMr);
      GemmSerial(i1 - i0, k, n, a + i0 * ars, ars, acs, b, brs, bcs, c + i0 * ldc, ldc, accumulate);
    });
  }
}

// C of a bf16 product: bf16, or f32 (GemmBf16F32), `elements` on from c.
void* COffset(void* c, bool c_f32, int64_t elements) {
  return static_cast<char*>(c) + elements * (c_f32 ? 4 : 2);
}

// bf16: C [m, n] (+)= A B for bf16 A and B, the products summed in f32; C bf16 (C + A B
// rounded once) or f32 (c_f32). On an AVX-512 target of a CPU with AVX512-BF16, by
// vdpbf16ps (internal/gemm_bf16.h); otherwise A and B widened to f32 and multiplied by
// this target's f32 GEMM.
void GemmBf16Serial(int64_t m, int64_t k, int64_t n, const uint16_t* a, int64_t ars, int64_t acs,
                    const uint16_t* b, int64_t brs, int64_t bcs, void* c, bool c_f32, int64_t ldc,
                    bool accumulate) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if (internal::HasAvx512Bf16()) {
    internal::GemmBf16Avx512(m, k, n, a, ars, acs, b, brs, bcs, c, c_f32, ldc, accumulate);
    return;
  }
#endif
  thread_local std::vector<float> sums, wide_a, wide_b;
  auto widen = [](uint16_t bits) { return BFloat16{bits}.ToFloat(); };
  wide_a.resize(static_cast<size_t>(m * k));
  wide_b.resize(static_cast<size_t>(k * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) wide_a[i * k + p] = widen(a[i * ars + p * acs]);
  }
  for (int64_t p = 0; p < k; ++p) {
    for (int64_t j = 0; j < n; ++j) wide_b[p * n + j] = widen(b[p * brs + j * bcs]);
  }
  if (c_f32) {
    GemmSerial(m, k, n, wide_a.data(), k, 1, wide_b.data(), n, 1, static_cast<float*>(c), ldc,
               accumulate);
    return;
  }
  sums.resize(static_cast<size_t>(m * n));
  GemmSerial(m, k, n, wide_a.data(), k, 1, wide_b.data(), n, 1, sums.data(), n, false);
  for (int64_t i = 0; i < m; ++i) {
    BFloat16* row = static_cast<BFloat16*>(c) + i * ldc;
    const float* sum = sums.data() + i * n;
    for (int64_t j = 0; j < n; ++j) {
      row[j] = BFloat16::FromFloat(accumulate ? row[j].ToFloat() + sum[j] : sum[j]);
    }
  }
}

// Splits a bf16 product across the pool as GemmImpl does: whole panels of 48 columns
// (the AVX512-BF16 tile's width) where there are enough and A is not much taller than B
// is wide, else whole slivers of 8 rows; each piece a GemmBf16Serial.
void GemmBf16Impl(int64_t m, int64_t k, int64_t n, const uint16_t* a, int64_t ars, int64_t acs,
                  const uint16_t* b, int64_t brs, int64_t bcs, void* c, bool c_f32, int64_t ldc,
                  bool accumulate) {
  constexpr int64_t kPanel = 48, kSliver = 8;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  // A few rows (a generated token) unpacked, threads taking blocks of 64 columns.
  if (m < kSliver && k > 0 && !c_f32 && internal::HasAvx512Bf16() &&
      ((brs == 1 && acs == 1) || bcs == 1)) {
    constexpr int64_t kBlock = 64;
    ParallelForWork(
        (n + kBlock - 1) / kBlock, m * k * kBlock / 16, [&](int64_t begin, int64_t end) {
          internal::GemmBf16FewRowsAvx512(m, k, begin * kBlock, std::min(n, end * kBlock), a, ars,
                                          acs, b, brs, bcs, static_cast<uint16_t*>(c), ldc,
                                          accumulate);
        });
    return;
  }
#endif
  const int64_t panels = (n + kPanel - 1) / kPanel, slivers = (m + kSliver - 1) / kSliver;
  const int64_t threads = ThreadsNow();
  if (panels >= threads && (m <= n || slivers < threads)) {
    ParallelForWork(panels, m * kPanel * k / 16, [&](int64_t begin, int64_t end) {
      const int64_t j0 = begin * kPanel, j1 = std::min(n, end * kPanel);
      GemmBf16Serial(m, k, j1 - j0, a, ars, acs, b + j0 * bcs, brs, bcs, COffset(c, c_f32, j0),
                     c_f32, ldc, accumulate);
    });
  } else {
    ParallelForWork(slivers, kSliver * n * k / 16, [&](int64_t begin, int64_t end) {
      const int64_t i0 = begin * kSliver, i1 = std::min(m, end * kSliver);
      GemmBf16Serial(i1 - i0, k, n, a + i0 * ars, ars, acs, b, brs, bcs,
                     COffset(c, c_f32, i0 * ldc), c_f32, ldc, accumulate);
    });
  }
}

void Gemm(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c,
          int64_t ldc, bool accumulate) {
  if (m == 0 || n == 0) return;
  if (dtype == DType::kBF16) {
    const internal::FlushSubnormals flush;  // vdpbf16ps reads subnormals as 0 as well
    GemmBf16Impl(m, k, n, At<uint16_t>(a.data), a.row_stride, a.col_stride, At<uint16_t>(b.data),
                 b.row_stride, b.col_stride, c, /*c_f32=*/false, ldc, accumulate);
    return;
  }
  DispatchFloat("matmul", dtype, [&](auto type) {
    using T = decltype(type);
    GemmImpl(m, k, n, At<T>(a.data), a.row_stride, a.col_stride, At<T>(b.data), b.row_stride,
             b.col_stride, At<T>(c), ldc, accumulate);
  });
}

void GemmBf16F32(int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c, int64_t ldc,
                 bool accumulate) {
  if (m == 0 || n == 0) return;
  const internal::FlushSubnormals flush;
  GemmBf16Impl(m, k, n, At<uint16_t>(a.data), a.row_stride, a.col_stride, At<uint16_t>(b.data),
               b.row_stride, b.col_stride, c, /*c_f32=*/true, ldc, accumulate);
}

void GemmBatched(DType dtype, int64_t batches, int64_t m, int64_t k, int64_t n, MatrixIn a,
                 const int64_t* a_offsets, MatrixIn b, const int64_t* b_offsets, void* c,
                 int64_t ldc, int64_t c_batch_stride, bool accumulate) {
  if (m == 0 || n == 0) return;
  if (dtype == DType::kBF16) {
    const internal::FlushSubnormals flush;
    ParallelForWork(batches, m * k * n / 16, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        GemmBf16Impl(m, k, n, At<uint16_t>(a.data, a_offsets[i]), a.row_stride, a.col_stride,
                     At<uint16_t>(b.data, b_offsets[i]), b.row_stride, b.col_stride,
                     COffset(c, false, i * c_batch_stride), false, ldc, accumulate);
      }
    });
    return;
  }
  DispatchFloat("matmul", dtype, [&](auto type) {
    using T = decltype(type);
    // A nested ParallelFor (inside GemmImpl) runs serially.
    ParallelForWork(batches, m * k * n / 8, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        GemmImpl(m, k, n, At<T>(a.data, a_offsets[i]), a.row_stride, a.col_stride,
                 At<T>(b.data, b_offsets[i]), b.row_stride, b.col_stride,
                 At<T>(c, i * c_batch_stride), ldc, accumulate);
      }
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(Gemm);
HWY_EXPORT(GemmBatched);
HWY_EXPORT(GemmBf16F32);

void Gemm(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c,
          int64_t ldc, bool accumulate) {
  HWY_DYNAMIC_DISPATCH(Gemm)(dtype, m, k, n, a, b, c, ldc, accumulate);
}

void GemmBf16F32(int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c, int64_t ldc,
                 bool accumulate) {
  HWY_DYNAMIC_DISPATCH(GemmBf16F32)(m, k, n, a, b, c, ldc, accumulate);
}

void GemmBias(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b,
              const void* bias, void* c, int64_t ldc) {
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kBF16,
              "linear: dtype ", DTypeName(dtype), " is not supported (f32, f64 or bf16)");
  const int64_t item = ItemSize(dtype);
  ParallelForWork(m, n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      std::memcpy(static_cast<char*>(c) + i * ldc * item, bias, n * item);
    }
  });
  Gemm(dtype, m, k, n, a, b, c, ldc, /*accumulate=*/true);
}

void GemmBatched(DType dtype, int64_t batches, int64_t m, int64_t k, int64_t n, MatrixIn a,
                 const int64_t* a_offsets, MatrixIn b, const int64_t* b_offsets, void* c,
                 int64_t ldc, int64_t c_batch_stride, bool accumulate) {
  HWY_DYNAMIC_DISPATCH(GemmBatched)
  (dtype, batches, m, k, n, a, a_offsets, b, b_offsets, c, ldc, c_batch_stride, accumulate);
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
