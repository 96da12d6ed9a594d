// The blocked GEMM that Gemm (matmul.cc) and the convolution (conv.cc) share: packing,
// the register-tiled micro-kernel, and the loop over cache blocks, with the packing of
// each operand left to the caller (a strided matrix for Gemm; the image itself, unrolled
// straight into packed panels, for the convolution). A textual header, included once per
// SIMD target after hwy/highway.h (Highway's per-target include guard below).

#if defined(EMBER_KERNELS_CPU_INTERNAL_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_CPU_INTERNAL_GEMM_INL_H_
#undef EMBER_KERNELS_CPU_INTERNAL_GEMM_INL_H_
#else
#define EMBER_KERNELS_CPU_INTERNAL_GEMM_INL_H_
#endif

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "hwy/aligned_allocator.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Register tile: kMr rows of C by kNv vectors of columns (nr = kNv * lanes). The
// kMr * kNv accumulators, kNv B vectors and one broadcast A value must fit the register
// file: 8 x 3 (24 + 4 registers) with AVX-512's 32, 6 x 2 (12 + 3) with AVX2's 16.
// Cache blocking (GemmBlocked): a block of B, kc deep and BlockColumns wide, is packed
// to stay in L2, and each sliver of A (kMr x kc: 12 KiB with AVX-512) stays in L1 while
// it sweeps the block's panels; A is packed whole beforehand (PackAllA), so that the
// narrow blocks of B do not make anyone pack it again. A deep block (kKc) spreads each
// tile's load and store of C over more multiply-adds. Measured with matmul_benchmark on
// a 2-core AVX-512 VM (Zen 4; FMA peak 116 GFLOP/s a core), one thread, GPT-2's shapes
// in all three layouts: kKc 128 -> 384, with C's tile prefetched and B packed on huge
// pages, took AVX-512 from 81-102 to 93-103 GFLOP/s; AVX2 gained 0-9% at kKc 256. On
// a 2-vCPU Intel Xeon (Emerald Rapids) with EMBER_SIMD=AVX2, GPT-2's shapes (M = 256) in
// all three layouts, medians of 3 alternating runs, AVX2's kKc 256 -> 384 moved one
// thread by -4% to +10% (256 x 3072 x 768, A^T B: 67 -> 74 GFLOP/s) and two by -6% to
// +17%, 23 of the 30 rows up.
#if HWY_TARGET <= HWY_AVX3 || !HWY_ARCH_X86
constexpr int64_t kMr = 8, kNv = 3;
#else
constexpr int64_t kMr = 6, kNv = 2;
#endif
constexpr int64_t kKc = 384;

// An N x N block transposed in registers, N the lane count: calls store(j, v) with v
// holding src[r * src_stride + j] in lane r, for each j < N; rows r >= rows read as
// zero (so that a caller never reads past its matrix), and src's rows must hold N
// entries. log2(N) rounds deinterleave pairs of vectors (ConcatEven / ConcatOdd): a
// round moves the entry at flattened index f = r N + j to (f mod 2) N^2 / 2 + f / 2,
// i.e. rotates the bits of f right by one, so after log2(N) rounds entry (r, j) sits at
// j N + r. One permute per vector per round: log2(N) / N per entry, against a load and
// a store per entry for the scalar transpose, whose strided side misses the store
// buffer's combining (measured 6 cycles an entry when packing the convolution's panels).
template <typename T, class Store>
void TransposeBlock(const T* src, int64_t src_stride, int64_t rows, const Store& store) {
  const hn::ScalableTag<T> d;
  constexpr int64_t kN = static_cast<int64_t>(hn::MaxLanes(d));
  using V = decltype(hn::Zero(d));
  V v[kN];  // unrolled loops below keep v in registers (kN <= 16 of AVX-512's 32)
#pragma GCC unroll 16
  for (int64_t r = 0; r < kN; ++r)
    v[r] = r < rows ? hn::LoadU(d, src + r * src_stride) : hn::Zero(d);
#if HWY_TARGET != HWY_SCALAR  // one lane: nothing to permute (and no ConcatEven)
#pragma GCC unroll 4
  for (int64_t round = 1; round < kN; round *= 2) {
    V next[kN];
#pragma GCC unroll 8
    for (int64_t i = 0; i < kN / 2; ++i) {
      next[i] = hn::ConcatEven(d, v[2 * i + 1], v[2 * i]);
      next[kN / 2 + i] = hn::ConcatOdd(d, v[2 * i + 1], v[2 * i]);
    }
#pragma GCC unroll 16
    for (int64_t i = 0; i < kN; ++i) v[i] = next[i];
  }
#endif
#pragma GCC unroll 16
  for (int64_t j = 0; j < kN; ++j) store(j, v[j]);
}

// Packs rows [0, rows) x columns [0, depth) of A (from `a`) into slivers of kMr rows:
// packed[s][p][r] = A[s * kMr + r][p], rows past the end zero. A row-major A (cs == 1)
// is transposed a lane-count square at a time: two slivers per square where a vector
// is twice a sliver's height (AVX-512 f32), else a sliver's rows in groups of N (a
// group narrower than a vector stored masked). The last depth % N columns go entry by
// entry; a column-major A, whose sliver rows are already contiguous, by copies of them.
template <typename T>
void PackA(const T* a, int64_t rs, int64_t cs, int64_t rows, int64_t depth, T* packed) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t squares = cs == 1 ? depth / lanes * lanes : 0;  // columns packed by squares
  int64_t s = 0;  // sliver s / kMr starts at packed + s * depth
#if HWY_TARGET != HWY_SCALAR
  if (lanes == 2 * kMr) {
    const hn::Half<decltype(d)> dh;
    for (; squares > 0 && s + kMr < rows; s += 2 * kMr) {  // the second sliver may be partial
      T* const first = packed + s * depth;
      T* const second = first + kMr * depth;
      for (int64_t p = 0; p < squares; p += lanes) {
        TransposeBlock(a + s * rs + p, rs, std::min(lanes, rows - s), [&](int64_t j, auto v) {
          hn::StoreU(hn::LowerHalf(dh, v), dh, first + (p + j) * kMr);
          hn::StoreU(hn::UpperHalf(dh, v), dh, second + (p + j) * kMr);
        });
      }
    }
  }
#endif
  for (; squares > 0 && s < rows; s += kMr) {
    for (int64_t p = 0; p < squares; p += lanes) {
      for (int64_t g = 0; g < kMr; g += lanes) {
        T* const dst = packed + s * depth + p * kMr + g;
        const int64_t width = std::min(lanes, kMr - g);
        const int64_t group_rows = std::clamp<int64_t>(rows - s - g, 0, width);
        TransposeBlock(a + (s + g) * rs + p, rs, group_rows, [&](int64_t j, auto v) {
          if (width == lanes) {
            hn::StoreU(v, d, dst + j * kMr);
          } else {
            hn::BlendedStore(v, hn::FirstN(d, static_cast<size_t>(width)), d, dst + j * kMr);
          }
        });
      }
    }
  }
  for (s = 0; s < rows; s += kMr) {
    const int64_t valid = std::min(kMr, rows - s);
    T* const sliver = packed + s * depth;
    if (rs == 1 &&
        valid == kMr) {  // column-major (dY^T of a weight gradient): a sliver row is kMr in a row
      for (int64_t p = squares; p < depth; ++p) std::copy_n(a + s + p * cs, kMr, sliver + p * kMr);
      continue;
    }
    for (int64_t p = squares; p < depth; ++p) {
      for (int64_t r = 0; r < kMr; ++r)
        sliver[p * kMr + r] = r < valid ? a[(s + r) * rs + p * cs] : T(0);
    }
  }
}

// B packed into panels of nr columns: packed[s][p][c] = B[p][s * nr + c], columns past
// the end zero. A caller packs B row by row (PackBRow: row p, `cols` entries with stride
// cs) or, where columns are contiguous, a group of at most N (the lane count) columns
// at a time (PackBColumns: column c0 + c at column + c * cs, `depth` entries each,
// transposed into the panel; then PadLastPanel).
template <typename T>
void PackBRow(const T* row, int64_t cs, int64_t p, int64_t depth, int64_t cols, int64_t nr,
              T* packed) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t j = 0; j < cols; j += nr) {
    T* dst = packed + (j * depth + p * nr);  // panel j / nr, row p: aligned, whole vectors
    const int64_t valid = std::min(nr, cols - j);
    int64_t c = 0;
    if (cs == 1) {  // vectors (a memcpy call per 192 bytes costs more)
      for (; c + lanes <= valid; c += lanes) hn::Store(hn::LoadU(d, row + j + c), d, dst + c);
    }
    for (; c < valid; ++c) dst[c] = row[(j + c) * cs];
    for (; c % lanes != 0; ++c) dst[c] = T(0);  // the padding: the rest of a vector,
    for (; c < nr; c += lanes) hn::Store(hn::Zero(d), d, dst + c);  // then whole ones
  }
}
template <typename T>
void PackBColumns(const T* column, int64_t cs, int64_t c0, int64_t count, int64_t depth, int64_t nr,
                  T* packed) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  T* dst = packed + c0 / nr * depth * nr + c0 % nr;  // nr is a whole number of lanes
  int64_t p = 0;
  for (; p + lanes <= depth; p += lanes) {
    TransposeBlock(column + p, cs, count,
                   [&](int64_t j, auto v) { hn::StoreU(v, d, dst + (p + j) * nr); });
  }
  for (; p < depth; ++p) {
    for (int64_t c = 0; c < count; ++c) dst[p * nr + c] = column[c * cs + p];
  }
}
template <typename T>
void PadLastPanel(int64_t depth, int64_t cols, int64_t nr, T* packed) {
  const int64_t valid = cols % nr;
  if (valid == 0) return;
  T* panel = packed + cols / nr * depth * nr;
  for (int64_t p = 0; p < depth; ++p) std::fill(panel + p * nr + valid, panel + (p + 1) * nr, T(0));
}

// Rows [0, depth) x columns [0, cols) of a strided B, read along its contiguous side:
// row by row for a row-major B; columns at a time for a transposed one (x W^T with
// W [out, in], Linear's forward).
template <typename T>
void PackB(const T* b, int64_t rs, int64_t cs, int64_t depth, int64_t cols, int64_t nr, T* packed) {
  if (rs == 1 && cs != 1) {
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
    for (int64_t c = 0; c < cols; c += lanes) {
      PackBColumns(b + c * cs, cs, c, std::min(lanes, cols - c), depth, nr, packed);
    }
    PadLastPanel(depth, cols, nr, packed);
    return;
  }
  // A row-major B (a weight, from memory) has its rows prefetched kPrefetchRows ahead:
  // each short row starts a new stream that the hardware would wait for.
  constexpr int64_t kPrefetchRows = 8;
  for (int64_t p = 0; p < depth; ++p) {
    if (cs == 1 && p + kPrefetchRows < depth) {
      const T* ahead = b + (p + kPrefetchRows) * rs;
      for (int64_t c = 0; c < cols; c += 64 / sizeof(T)) hwy::Prefetch(ahead + c);
    }
    PackBRow(b + p * rs, cs, p, depth, cols, nr, packed);
  }
}

// Where a block of A is for the micro-kernel: packed (PackA's slivers: entry (r, p) of
// the sliver that starts at row i at ptr + i * kc + p * kMr + r) or, for a row-major A
// that few tiles share, in place (entry (r, p) of the rows from i at ptr + (i + r) *
// stride + p; no packing, whose transposing load and store cost as much as a few
// tiles' use of the block).
template <typename T>
struct ABlock {
  const T* ptr;
  int64_t stride;  // 0: packed; else A's row stride, in place
};

// C[0:rows, 0:cols] (+)= A Bp over `depth`, for one tile of kMr rows by kV vectors
// (rows <= kMr, cols <= kV lanes): with `add`, C += A Bp; otherwise C = bias[r] + A Bp
// (bias: one value per row of the tile, or null for none). A is a packed sliver at ap
// (kInPlace false) or the tile's rows of a row-major A at ap, a_stride apart (the rows
// past `rows` read the last one again, never past the matrix). Bp's rows are nr apart
// whatever kV: a panel's last columns go through a narrower tile (kV < kNv), not
// through multiply-adds of its zero padding.
template <int64_t kV, bool kInPlace, typename T>
void MicroKernel(int64_t depth, const T* HWY_RESTRICT ap, int64_t a_stride,
                 const T* HWY_RESTRICT bp, int64_t nr, T* c, int64_t ldc, int64_t rows,
                 int64_t cols, bool add, const T* bias) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  using V = decltype(hn::Zero(d));
  // C's tile is read (or written) after the depth loop: fetch it now, behind the loop's
  // multiply-adds, rather than stall on it after them (a tile's rows are a row of C
  // apart, past the caches when C is large).
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t v = 0; v < kV; ++v) __builtin_prefetch(c + r * ldc + v * lanes, 1);
  }
  V tile[kMr][kV];
  for (int64_t r = 0; r < kMr; ++r) {
    const V start = bias && r < rows ? hn::Set(d, bias[r]) : hn::Zero(d);
    for (int64_t v = 0; v < kV; ++v) tile[r][v] = start;
  }
  if constexpr (kInPlace) {
    const T* a_rows[kMr];  // one pointer a row: loads of a_rows[r] + p share p's index
    for (int64_t r = 0; r < kMr; ++r) a_rows[r] = ap + std::min(r, rows - 1) * a_stride;
    for (int64_t p = 0; p < depth; ++p) {
      V b[kV];
      for (int64_t v = 0; v < kV; ++v) b[v] = hn::LoadU(d, bp + v * lanes);
      bp += nr;
#pragma GCC unroll 16
      for (int64_t r = 0; r < kMr; ++r) {
        const V a = hn::Set(d, a_rows[r][p]);
        for (int64_t v = 0; v < kV; ++v) tile[r][v] = hn::MulAdd(a, b[v], tile[r][v]);
      }
    }
  } else {
    for (int64_t p = 0; p < depth; ++p) {
      V b[kV];
      for (int64_t v = 0; v < kV; ++v) b[v] = hn::LoadU(d, bp + v * lanes);
      bp += nr;
#pragma GCC unroll 16
      for (int64_t r = 0; r < kMr; ++r) {
        const V a = hn::Set(d, ap[r]);
        for (int64_t v = 0; v < kV; ++v) tile[r][v] = hn::MulAdd(a, b[v], tile[r][v]);
      }
      ap += kMr;
    }
  }
  if (cols == kV * lanes) {
    for (int64_t r = 0; r < rows; ++r) {
      T* row = c + r * ldc;
      for (int64_t v = 0; v < kV; ++v) {
        V sum = tile[r][v];
        if (add) sum = hn::Add(sum, hn::LoadU(d, row + v * lanes));
        hn::StoreU(sum, d, row + v * lanes);
      }
    }
    return;
  }
  // A partial tile at the right edge: through a buffer.
  HWY_ALIGN T
      buffer[kV * HWY_MAX_BYTES / sizeof(T)] = {};  // zeroed: GCC cannot see the stores cover it
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t v = 0; v < kV; ++v) hn::Store(tile[r][v], d, buffer + v * lanes);
    T* row = c + r * ldc;
    for (int64_t j = 0; j < cols; ++j) row[j] = add ? row[j] + buffer[j] : buffer[j];
  }
}

// MicroKernel with the fewest vectors (at most kV) that cover `cols`, on the tile of A
// that starts at row `row` of the block.
template <int64_t kV, typename T>
void MicroKernelFor(int64_t depth, ABlock<T> a, int64_t row, const T* bp, int64_t nr, T* c,
                    int64_t ldc, int64_t rows, int64_t cols, bool add, const T* bias) {
  if constexpr (kV > 1) {
    if (cols <= (kV - 1) * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()))) {
      return MicroKernelFor<kV - 1>(depth, a, row, bp, nr, c, ldc, rows, cols, add, bias);
    }
  }
  if (a.stride == 0) {
    MicroKernel<kV, false>(depth, a.ptr + row * depth, 0, bp, nr, c, ldc, rows, cols, add, bias);
  } else {
    MicroKernel<kV, true>(depth, a.ptr + row * a.stride, a.stride, bp, nr, c, ldc, rows, cols, add,
                          bias);
  }
}

// Per-thread packing buffers (0: B, 1: A), grown when needed and reused, so that a
// steady stream of products allocates nothing. Whole 2 MiB huge pages where the kernel
// grants them (madvise): a packed block of B is megabytes, written a panel row at a
// time (pages kc * nr apart) and read back panel by panel, and on 4 KiB pages its TLB
// misses cost 1-4% of a product. A packed row of B is then whole cache lines.
template <typename T>
T* PackBuffer(int which, int64_t items) {
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  struct Slot {
    std::unique_ptr<T, Free> data;
    int64_t capacity = 0;
  };
  thread_local Slot slots[2];
  Slot& slot = slots[which];
  if (slot.capacity < items) {
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t bytes = (static_cast<size_t>(items) * sizeof(T) + kHuge - 1) / kHuge * kHuge;
    slot.data.reset(static_cast<T*>(std::aligned_alloc(kHuge, bytes)));
    madvise(slot.data.get(), bytes, MADV_HUGEPAGE);
    slot.capacity = static_cast<int64_t>(bytes / sizeof(T));
  }
  return slot.data.get();
}

// Columns of B per packed panel (nr) and rows of a packed block (depth: the same panel
// bytes for f32 and f64).
template <typename T>
int64_t PanelWidth() {
  return kNv * static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
}
template <typename T>
constexpr int64_t BlockDepth() {
  return kKc * 4 / static_cast<int64_t>(sizeof(T));
}

// Rows of A padded to whole slivers.
inline int64_t PaddedRows(int64_t m) { return (m + kMr - 1) / kMr * kMr; }

// All of A [m, k] packed at once (PaddedRows(m) * k entries), for GemmBlocked, whose
// blocks of B each take every row of A, or for an A that many products share (a
// convolution's weights, one product per image): block pc (kc deep) of slivers at
// packed + pc * PaddedRows(m), where PrepackedA finds it.
template <typename T>
void PackAllA(const T* a, int64_t rs, int64_t cs, int64_t m, int64_t k, T* packed) {
  for (int64_t pc = 0; pc < k; pc += BlockDepth<T>()) {
    PackA(a + pc * cs, rs, cs, m, std::min(BlockDepth<T>(), k - pc), packed + pc * PaddedRows(m));
  }
}

// Columns of B per packed block: as many whole panels as fill half of L2 at BlockDepth
// rows (682 -> 672 with AVX-512 on a 2 MiB L2), so that the block stays there beside
// the sliver of A and the tiles of C passing through. Blocks of 2048 columns (3 MiB of
// f32, in L3), the earlier choice, made the tiles fetch their panels from L3 and left
// the micro-kernel near 90% of the FMA peak, where it reaches 95-100% on operands in L2;
// they were wide so that each packed block of A served many panels, and with A packed
// whole, nothing pays for narrow ones. Measured with matmul_benchmark on a 2-vCPU Intel
// Xeon (Emerald Rapids, 2 MiB L2; FMA peak 177 GFLOP/s a core), one thread, the forward
// (x W^T), GFLOP/s: 256 x 768 x 50257 126 -> 140, 256 x 768 x 3072 138 -> 145, 256 x 768
// x 768 141 -> 147, 1024^3 150 -> 153.
template <typename T>
int64_t BlockColumns() {
  static const int64_t columns = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    const int64_t bytes = l2 > 0 ? l2 : int64_t{1} << 20;  // unknown: 1 MiB
    const int64_t nr = PanelWidth<T>();
    return std::max(4 * nr,
                    bytes / 2 / (BlockDepth<T>() * static_cast<int64_t>(sizeof(T))) / nr * nr);
  }();
  return columns;
}

// The packers GemmBlocked takes, for the common operands: A packed whole by PackAllA,
// a row-major A read in place, a strided B.
template <typename T>
auto PrepackedA(const T* packed, int64_t m) {
  return [=](int64_t pc, int64_t kc) { return ABlock<T>{packed + pc * PaddedRows(m), 0}; };
}
template <typename T>
auto InPlaceA(const T* a, int64_t rs) {
  return [=](int64_t pc, int64_t) { return ABlock<T>{a + pc, rs}; };
}
template <typename T>
auto StridedB(const T* b, int64_t rs, int64_t cs) {
  return [=](int64_t pc, int64_t kc, int64_t jc, int64_t nc, T* packed) {
    PackB(b + pc * rs + jc * cs, rs, cs, kc, nc, PanelWidth<T>(), packed);
  };
}

// C [m, n] (+)= A [m, k] B [k, n] on the calling thread: B in blocks of BlockDepth rows
// and at most BlockColumns columns (n split evenly), each packed once and swept by every
// sliver of A in turn, tile by tile. pack_a(pc, kc) returns columns [pc, pc + kc) of A,
// all rows, as an ABlock (PrepackedA, InPlaceA); pack_b(pc, kc, jc, nc, out) writes rows
// [pc, pc + kc) x columns [jc, jc + nc) of B packed as PackB does. Without
// `accumulate`, C = bias[i] + (A B)[i, j] where `bias` (m values, or null for none) is
// given: the convolution's bias per output channel, added by the tiles' first block.
template <typename T, class PackAFn, class PackBFn>
void GemmBlocked(int64_t m, int64_t k, int64_t n, const PackAFn& pack_a, const PackBFn& pack_b,
                 T* c, int64_t ldc, bool accumulate, const T* bias = nullptr) {
  if (k == 0 && !accumulate) {  // no block to write C
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, bias ? bias[i] : T(0));
  }
  const int64_t nr = PanelWidth<T>();
  const int64_t panels = (n + nr - 1) / nr,
                blocks = (n + BlockColumns<T>() - 1) / BlockColumns<T>();
  const int64_t block_columns = (panels + blocks - 1) / blocks * nr;
  for (int64_t jc = 0; jc < n; jc += block_columns) {
    const int64_t nc = std::min(block_columns, n - jc);
    const int64_t nc_padded = (nc + nr - 1) / nr * nr;
    for (int64_t pc = 0; pc < k; pc += BlockDepth<T>()) {
      const int64_t kc = std::min(BlockDepth<T>(), k - pc);
      const bool add = accumulate || pc > 0;
      T* const packed_b = PackBuffer<T>(0, kc * nc_padded);
      pack_b(pc, kc, jc, nc, packed_b);
      const ABlock<T> block_a = pack_a(pc, kc);
      for (int64_t ir = 0; ir < m; ir += kMr) {
        for (int64_t jr = 0; jr < nc; jr += nr) {
          MicroKernelFor<kNv>(kc, block_a, ir, packed_b + jr * kc, nr, c + ir * ldc + jc + jr, ldc,
                              std::min(kMr, m - ir), std::min(nr, nc - jr), add,
                              bias && !add ? bias + ir : nullptr);
        }
      }
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu::internal
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
