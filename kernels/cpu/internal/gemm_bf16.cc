// The AVX512-BF16 GEMM of gemm_bf16.h. Only its kernels carry the target attribute, so
// that nothing here runs on a CPU without the instruction unless HasAvx512Bf16() said so.

#include "kernels/cpu/internal/gemm_bf16.h"

#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ember::kernels::cpu::internal {
namespace {

constexpr int64_t kMr = 8;             // rows of the register tile
constexpr int64_t kLanes = 16;         // f32 lanes of a zmm
constexpr int64_t kNv = 3;             // zmm of columns in the tile
constexpr int64_t kNr = kNv * kLanes;  // columns of a packed panel
constexpr int64_t kDepthPairs = 192;   // pairs of depth in a block: 384 products, as f32's
constexpr int64_t kPrefetchPairs = 4;  // how far ahead PackB reads a row-major B's pairs of rows

uint32_t Pair(uint16_t low, uint16_t high) {
  return static_cast<uint32_t>(low) | (static_cast<uint32_t>(high) << 16);
}

// Columns of B per packed block: whole panels filling half of L2 at kDepthPairs words a
// column (matmul's f32 blocks hold the same bytes).
int64_t BlockColumns() {
  static const int64_t columns = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    const int64_t bytes = l2 > 0 ? l2 : int64_t{1} << 20;
    return std::max(4 * kNr, bytes / 2 / (kDepthPairs * 4) / kNr * kNr);
  }();
  return columns;
}

#define EMBER_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

// Eight (ymm) or sixteen (zmm) pairs from two bf16 vectors: word i = (low[i], high[i]).
EMBER_AVX512_BF16 __m256i Interleave(__m128i low, __m128i high) {
  return _mm256_or_si256(_mm256_cvtepu16_epi32(low),
                         _mm256_slli_epi32(_mm256_cvtepu16_epi32(high), 16));
}
EMBER_AVX512_BF16 __m512i Interleave(__m256i low, __m256i high) {
  return _mm512_or_si512(_mm512_cvtepu16_epi32(low),
                         _mm512_slli_epi32(_mm512_cvtepu16_epi32(high), 16));
}

// The first `count` of 16 bits set (none for count <= 0).
__mmask16 FirstN(int64_t count) {
  return count >= 16  ? static_cast<__mmask16>(0xffff)
         : count <= 0 ? static_cast<__mmask16>(0)
                      : static_cast<__mmask16>((1u << count) - 1);
}

// The kRows x 16 words v[r][j] (kRows 8 or 16) transposed in registers: word (r, j) at
// kRows j + r of the registers in order after, in four rounds that each deinterleave
// pairs of rows (a round moves the word at f = 16 r + j to (f mod 2) 8 kRows + f / 2,
// rotating f's bits right by one: after four, (r, j) is at kRows j + r), one two-source
// permute per row and round.
template <int kRows>
EMBER_AVX512_BF16 void TransposeWords(__m512i v[kRows]) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
#pragma GCC unroll 4
  for (int round = 0; round < 4; ++round) {
    __m512i next[kRows];
#pragma GCC unroll 8
    for (int i = 0; i < kRows / 2; ++i) {
      next[i] = _mm512_permutex2var_epi32(v[2 * i], even, v[2 * i + 1]);
      next[kRows / 2 + i] = _mm512_permutex2var_epi32(v[2 * i], odd, v[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) v[i] = next[i];
  }
}

// Pairs [q0, q0 + pairs) of the depth of A's rows [0, rows) into slivers of kMr rows:
// packed[s * pairs + q * kMr + r] = (A[s + r][2 q'], A[s + r][2 q' + 1]) for q' = q0 + q,
// past the matrix zero. A stored transposed (ars == 1: dY^T of a weight gradient) has
// a sliver's rows side by side in two stored rows: interleaved 8 at a time. A row-major
// A (acs == 1) has each pair as one 32-bit word and a row's pairs side by side: 8 rows x
// 16 pairs (a cache line of each row) loaded and transposed in registers, the pairs left
// over gathered 8 rows at a time.
EMBER_AVX512_BF16 void PackA(const uint16_t* a, int64_t ars, int64_t acs, int64_t rows, int64_t k,
                             int64_t q0, int64_t pairs, uint32_t* packed) {
  // Pairs [0, full) lie wholly inside the matrix; the rest (an odd depth's last) go
  // entry by entry.
  const int64_t full = std::clamp<int64_t>((k - 2 * q0) / 2, 0, pairs);
  for (int64_t s = 0; s < rows; s += kMr) {
    uint32_t* sliver = packed + s * pairs;
    const int64_t valid = std::min(kMr, rows - s);
    // The sliver's kMr (<= 8) words of a pair, and those of its rows inside A.
    const __mmask8 words = static_cast<__mmask8>((1u << kMr) - 1);
    const __mmask8 live = static_cast<__mmask8>((1u << valid) - 1);
    int64_t done = 0;  // pairs packed by vectors
    if (ars == 1) {
      for (; done < full; ++done) {
        const uint16_t* even = a + s + 2 * (q0 + done) * acs;
        _mm256_storeu_si256(
            reinterpret_cast<__m256i*>(sliver + done * kMr),
            Interleave(_mm_maskz_loadu_epi16(live, even), _mm_maskz_loadu_epi16(live, even + acs)));
      }
    } else if (acs == 1) {
      const uint16_t* first = a + s * ars + 2 * q0;
      for (; done + kLanes <= full; done += kLanes) {
        __m512i words_of[kMr];  // row r's pairs [done, done + 16)
#pragma GCC unroll 8
        for (int r = 0; r < kMr; ++r) {
          words_of[r] =
              r < valid ? _mm512_loadu_si512(first + r * ars + 2 * done) : _mm512_setzero_si512();
        }
        TransposeWords<kMr>(words_of);
#pragma GCC unroll 8
        for (int t = 0; t < kMr; ++t) {
          _mm512_storeu_si512(sliver + (done + 2 * t) * kMr, words_of[t]);
        }
      }
      // Offsets (in bf16) of the sliver's rows; rows past the end are masked off.
      const __m256i offsets = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                                 _mm256_set1_epi32(static_cast<int32_t>(ars)));
      for (; done < full && ars < (int64_t{1} << 30); ++done) {
        _mm256_mask_storeu_epi32(sliver + done * kMr, words,
                                 _mm256_mmask_i32gather_epi32(_mm256_setzero_si256(), live, offsets,
                                                              first + 2 * done, 2));
      }
    }
    for (int64_t r = 0; r < kMr; ++r) {
      const uint16_t* row = a + (s + r) * ars + 2 * q0 * acs;
      for (int64_t q = done; q < pairs; ++q) {
        const int64_t p = 2 * (q0 + q);
        const uint16_t low = r < valid && p < k ? row[2 * q * acs] : 0;
        const uint16_t high = r < valid && p + 1 < k ? row[(2 * q + 1) * acs] : 0;
        sliver[q * kMr + r] = Pair(low, high);
      }
    }
  }
}

// Pairs [q0, q0 + pairs) of B's depth x columns [0, cols) into panels of kNr columns:
// packed[(j / kNr) * pairs * kNr + q * kNr + j % kNr] = (B[2 q'][j], B[2 q' + 1][j]),
// past the matrix zero. A row-major B has a pair's two halves in two rows: interleaved
// 16 columns at a time, each pair of rows read along its length into every panel (a
// streaming read: B is a weight coming from memory). A transposed B (brs == 1: x W^T,
// W [out, in]) has each pair as one 32-bit word and a column's pairs side by side:
// 16 columns x 16 pairs loaded and transposed in registers, the next panel's columns
// prefetched meanwhile, the edges gathered a pair of 16 columns at a time.
EMBER_AVX512_BF16 void PackB(const uint16_t* b, int64_t brs, int64_t bcs, int64_t k, int64_t q0,
                             int64_t pairs, int64_t cols, uint32_t* packed) {
  const bool gather = bcs != 1 && brs == 1 && bcs < (int64_t{1} << 30);
  // Offsets (in bf16) of 16 columns, for the gather.
  const __m512i columns_at =
      _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                         _mm512_set1_epi32(static_cast<int32_t>(gather ? bcs : 0)));
  // Pairs [0, full) lie wholly inside the matrix.
  const int64_t full = std::clamp<int64_t>((k - 2 * q0) / 2, 0, pairs);
  int64_t interleaved = 0;  // pairs of a row-major B packed into every panel
  if (bcs == 1) {
    for (; interleaved < full; ++interleaved) {
      const uint16_t* even = b + 2 * (q0 + interleaved) * brs;
      if (2 * (q0 + interleaved + kPrefetchPairs) + 1 < k) {
        const uint16_t* ahead = even + 2 * kPrefetchPairs * brs;
        for (int64_t j = 0; j < cols; j += 32) {
          _mm_prefetch(reinterpret_cast<const char*>(ahead + j), _MM_HINT_T0);
          _mm_prefetch(reinterpret_cast<const char*>(ahead + brs + j), _MM_HINT_T0);
        }
      }
      for (int64_t j0 = 0; j0 < cols; j0 += kNr) {
        uint32_t* dst = packed + j0 * pairs + interleaved * kNr;
        for (int64_t v = 0; v < kNv; ++v) {
          const int64_t j = j0 + v * kLanes;
          const __mmask16 live = FirstN(cols - j);
          _mm512_storeu_si512(dst + v * kLanes,
                              Interleave(_mm256_maskz_loadu_epi16(live, even + j),
                                         _mm256_maskz_loadu_epi16(live, even + brs + j)));
        }
      }
    }
  }
  for (int64_t j0 = 0; j0 < cols; j0 += kNr) {
    uint32_t* panel = packed + j0 * pairs;
    const int64_t valid = std::min(kNr, cols - j0);
    int64_t done = interleaved;  // pairs packed already, then by transposes
    if (gather && valid == kNr) {
      const bool next_full = cols - j0 >= 2 * kNr;
      for (; done + kLanes <= full; done += kLanes) {
        for (int64_t v = 0; v < kNv; ++v) {
          __m512i rows[16];
          const uint16_t* first = b + 2 * (q0 + done) + (j0 + v * kLanes) * bcs;
#pragma GCC unroll 16
          for (int r = 0; r < 16; ++r) {
            rows[r] = _mm512_loadu_si512(first + r * bcs);
            if (next_full) _mm_prefetch(first + (r + kNr) * bcs, _MM_HINT_T0);
          }
          TransposeWords<16>(rows);
#pragma GCC unroll 16
          for (int q = 0; q < 16; ++q) {
            _mm512_storeu_si512(panel + (done + q) * kNr + v * kLanes, rows[q]);
          }
        }
      }
    }
    for (int64_t q = done; q < pairs; ++q) {
      const int64_t p = 2 * (q0 + q);
      const uint16_t* even = b + p * brs + j0 * bcs;
      uint32_t* dst = panel + q * kNr;
      if (q < full && gather) {
        for (int64_t v = 0; v < kNv; ++v) {
          const __mmask16 live = FirstN(valid - v * kLanes);
          _mm512_storeu_si512(dst + v * kLanes,
                              _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, columns_at,
                                                          even + v * kLanes * bcs, 2));
        }
        continue;
      }
      for (int64_t c = 0; c < valid; ++c) {
        dst[c] = Pair(p < k ? even[c * bcs] : 0, p + 1 < k ? even[c * bcs + brs] : 0);
      }
      std::fill(dst + valid, dst + kNr, 0u);
    }
  }
}

// Where a tile's sums go. Before the last block of depth, to f32 partial sums
// (`partial`, row stride ldp; added to those there unless first); in the last, to C
// (row stride ldc): partial sums (unless first) + C (with `accumulate`) + the tile,
// rounded once to bf16, or kept in f32 (c_f32).
struct TileOut {
  float* partial;
  int64_t ldp;
  void* c;     // bf16, or f32 with c_f32
  bool c_f32;  // C in f32: the sums stored without rounding
  int64_t ldc;
  bool first, last, accumulate;
};

// A tile's rows [0, rows) x columns [0, cols) (cols <= kV * 16, rows <= kMr): the sums
// over `pairs` of a sliver of A (ap) by a panel of B (bp), kV zmm of columns.
template <int64_t kV>
EMBER_AVX512_BF16 void Tile(int64_t pairs, const uint32_t* __restrict ap,
                            const uint32_t* __restrict bp, const TileOut& out, int64_t rows,
                            int64_t cols) {
  __m512 tile[kMr][kV];
#pragma GCC unroll 16
  for (int64_t r = 0; r < kMr; ++r) {
#pragma GCC unroll 8
    for (int64_t v = 0; v < kV; ++v) tile[r][v] = _mm512_setzero_ps();
  }
  // Every loop over rows and vectors unrolled, so that the tile, B's vectors and A's
  // broadcast stay in registers (a rolled loop over B's vectors spills them).
  for (int64_t q = 0; q < pairs; ++q) {
    __m512bh bv[kV];
#pragma GCC unroll 8
    for (int64_t v = 0; v < kV; ++v) {
      bv[v] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(bp + q * kNr + v * kLanes));
    }
#pragma GCC unroll 16
    for (int64_t r = 0; r < kMr; ++r) {
      const __m512bh av = reinterpret_cast<__m512bh>(_mm512_set1_epi32(ap[q * kMr + r]));
#pragma GCC unroll 8
      for (int64_t v = 0; v < kV; ++v) tile[r][v] = _mm512_dpbf16_ps(tile[r][v], av, bv[v]);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* partial = out.partial + r * out.ldp;
    uint16_t* c = static_cast<uint16_t*>(out.c) + r * out.ldc;
    float* c32 = static_cast<float*>(out.c) + r * out.ldc;
    for (int64_t v = 0; v < kV; ++v) {
      const __mmask16 live = FirstN(cols - v * kLanes);
      if (live == 0) break;
      __m512 sum = tile[r][v];
      if (!out.first) sum = _mm512_add_ps(sum, _mm512_maskz_loadu_ps(live, partial + v * kLanes));
      if (!out.last) {
        _mm512_mask_storeu_ps(partial + v * kLanes, live, sum);
        continue;
      }
      if (out.c_f32) {
        if (out.accumulate) sum = _mm512_add_ps(sum, _mm512_maskz_loadu_ps(live, c32 + v * kLanes));
        _mm512_mask_storeu_ps(c32 + v * kLanes, live, sum);
        continue;
      }
      if (out.accumulate) {
        const __m256i bits = _mm256_maskz_loadu_epi16(live, c + v * kLanes);
        sum = _mm512_add_ps(
            sum, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16)));
      }
      // Rounded to nearest even (NaN stays NaN), as BFloat16::FromFloat.
      _mm256_mask_storeu_epi16(c + v * kLanes, live,
                               reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(sum)));
    }
  }
}

// Tile with the fewest zmm (at most kV) that cover `cols`.
template <int64_t kV = kNv>
void TileFor(int64_t pairs, const uint32_t* ap, const uint32_t* bp, const TileOut& out,
             int64_t rows, int64_t cols) {
  if constexpr (kV > 1) {
    if (cols <= (kV - 1) * kLanes) return TileFor<kV - 1>(pairs, ap, bp, out, rows, cols);
  }
  Tile<kV>(pairs, ap, bp, out, rows, cols);
}

// Stores sums (16 f32) into 16 bf16 of C at c, `live` of them, adding C's there first
// with `accumulate`; rounded to nearest even.
EMBER_AVX512_BF16 void StoreBf16(uint16_t* c, __mmask16 live, __m512 sum, bool accumulate) {
  if (accumulate) {
    const __m256i bits = _mm256_maskz_loadu_epi16(live, c);
    sum =
        _mm512_add_ps(sum, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16)));
  }
  _mm256_mask_storeu_epi16(c, live, reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(sum)));
}

// C[0:m, j0:j1] for a B whose columns are contiguous (x W^T, W [out, in]) and a
// row-major A: each C[i][j] a dot product, 32 bf16 of A's row and of B's column per
// vdpbf16ps (the tail masked), four columns at a time sharing A's loads.
EMBER_AVX512_BF16 void DotColumns(int64_t m, int64_t k, int64_t j0, int64_t j1, const uint16_t* a,
                                  int64_t ars, const uint16_t* b, int64_t bcs, uint16_t* c,
                                  int64_t ldc, bool accumulate) {
  for (int64_t i = 0; i < m; ++i) {
    const uint16_t* row = a + i * ars;
    alignas(64) float sums[16];
    for (int64_t j = j0; j < j1; j += 4) {
      const int64_t count = std::min<int64_t>(4, j1 - j);
      __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                       _mm512_setzero_ps()};
      for (int64_t p = 0; p < k; p += 32) {
        const __mmask32 live = k - p >= 32 ? ~__mmask32{0} : (__mmask32{1} << (k - p)) - 1;
        const __m512bh x = reinterpret_cast<__m512bh>(_mm512_maskz_loadu_epi16(live, row + p));
        for (int64_t t = 0; t < count; ++t) {
          const __m512i w = _mm512_maskz_loadu_epi16(live, b + (j + t) * bcs + p);
          acc[t] = _mm512_dpbf16_ps(acc[t], x, reinterpret_cast<__m512bh>(w));
        }
      }
      for (int64_t t = 0; t < count; ++t) sums[t] = _mm512_reduce_add_ps(acc[t]);
      StoreBf16(c + i * ldc + j, FirstN(count), _mm512_loadu_ps(sums), accumulate);
    }
  }
}

// C[0:m, j0:j1] for a B whose rows are contiguous: 32 columns at a time, each pair of
// B's rows interleaved in registers and multiplied by the broadcast pair of each row of
// A (m <= kMr rows, their sums all in registers).
EMBER_AVX512_BF16 void PairRows(int64_t m, int64_t k, int64_t j0, int64_t j1, const uint16_t* a,
                                int64_t ars, int64_t acs, const uint16_t* b, int64_t brs,
                                uint16_t* c, int64_t ldc, bool accumulate) {
  for (int64_t j = j0; j < j1; j += 2 * kLanes) {
    const __mmask16 live0 = FirstN(j1 - j), live1 = FirstN(j1 - j - kLanes);
    __m512 acc[kMr][2];
    for (int64_t i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t p = 0; p < k; p += 2) {
      const bool pair = p + 1 < k;
      const uint16_t* even = b + p * brs + j;
      const __m256i zero = _mm256_setzero_si256();
      const __m512bh b0 = reinterpret_cast<__m512bh>(
          Interleave(_mm256_maskz_loadu_epi16(live0, even),
                     pair ? _mm256_maskz_loadu_epi16(live0, even + brs) : zero));
      const __m512bh b1 = reinterpret_cast<__m512bh>(
          Interleave(_mm256_maskz_loadu_epi16(live1, even + kLanes),
                     pair ? _mm256_maskz_loadu_epi16(live1, even + brs + kLanes) : zero));
      for (int64_t i = 0; i < m; ++i) {
        const uint16_t* row = a + i * ars;
        const __m512bh av = reinterpret_cast<__m512bh>(_mm512_set1_epi32(
            static_cast<int32_t>(Pair(row[p * acs], pair ? row[(p + 1) * acs] : 0))));
        acc[i][0] = _mm512_dpbf16_ps(acc[i][0], av, b0);
        acc[i][1] = _mm512_dpbf16_ps(acc[i][1], av, b1);
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      StoreBf16(c + i * ldc + j, live0, acc[i][0], accumulate);
      if (live1 != 0) StoreBf16(c + i * ldc + j + kLanes, live1, acc[i][1], accumulate);
    }
  }
}

}  // namespace

bool HasAvx512Bf16() {
  static const bool has = __builtin_cpu_supports("avx512bf16");
  return has;
}

void GemmBf16Avx512(int64_t m, int64_t k, int64_t n, const uint16_t* a, int64_t ars, int64_t acs,
                    const uint16_t* b, int64_t brs, int64_t bcs, void* c, bool c_f32, int64_t ldc,
                    bool accumulate) {
  if (k == 0) {
    if (accumulate) return;
    for (int64_t i = 0; i < m; ++i) {
      if (c_f32) {
        std::fill_n(static_cast<float*>(c) + i * ldc, n, 0.0f);
      } else {
        std::fill_n(static_cast<uint16_t*>(c) + i * ldc, n, uint16_t{0});
      }
    }
    return;
  }
  const int64_t item = c_f32 ? 4 : 2;  // bytes of C's element
  const int64_t all_pairs = (k + 1) / 2, padded_rows = (m + kMr - 1) / kMr * kMr;
  // A packed whole, block by block of depth (block q0 at packed_a + q0 * padded_rows),
  // so that each block of B is swept by every sliver without packing A again.
  thread_local std::vector<uint32_t> packed_a, packed_b;
  thread_local std::vector<float> partial;
  packed_a.resize(static_cast<size_t>(padded_rows * all_pairs));
  for (int64_t q0 = 0; q0 < all_pairs; q0 += kDepthPairs) {
    PackA(a, ars, acs, m, k, q0, std::min(kDepthPairs, all_pairs - q0),
          packed_a.data() + q0 * padded_rows);
  }
  const int64_t panels = (n + kNr - 1) / kNr;
  const int64_t blocks = (n + BlockColumns() - 1) / BlockColumns();
  const int64_t block_columns = (panels + blocks - 1) / blocks * kNr;
  packed_b.resize(static_cast<size_t>(kDepthPairs * block_columns));
  // Partial sums of a block of columns, where the depth takes more than one block.
  if (all_pairs > kDepthPairs) partial.resize(static_cast<size_t>(m * block_columns));
  for (int64_t jc = 0; jc < n; jc += block_columns) {
    const int64_t nc = std::min(block_columns, n - jc);
    for (int64_t q0 = 0; q0 < all_pairs; q0 += kDepthPairs) {
      const int64_t pairs = std::min(kDepthPairs, all_pairs - q0);
      PackB(b + jc * bcs, brs, bcs, k, q0, pairs, nc, packed_b.data());
      const uint32_t* block_a = packed_a.data() + q0 * padded_rows;
      for (int64_t ir = 0; ir < m; ir += kMr) {
        for (int64_t jr = 0; jr < nc; jr += kNr) {
          const TileOut out{partial.data() + ir * nc + jr,
                            nc,
                            static_cast<char*>(c) + (ir * ldc + jc + jr) * item,
                            c_f32,
                            ldc,
                            q0 == 0,
                            q0 + pairs == all_pairs,
                            accumulate};
          TileFor(pairs, block_a + ir * pairs, packed_b.data() + jr * pairs, out,
                  std::min(kMr, m - ir), std::min(kNr, nc - jr));
        }
      }
    }
  }
}

bool GemmBf16FewRowsAvx512(int64_t m, int64_t k, int64_t j0, int64_t j1, const uint16_t* a,
                           int64_t ars, int64_t acs, const uint16_t* b, int64_t brs, int64_t bcs,
                           uint16_t* c, int64_t ldc, bool accumulate) {
  if (m > kMr) return false;
  if (brs == 1 && acs == 1) {
    DotColumns(m, k, j0, j1, a, ars, b, bcs, c, ldc, accumulate);
    return true;
  }
  if (bcs == 1) {
    PairRows(m, k, j0, j1, a, ars, acs, b, brs, c, ldc, accumulate);
    return true;
  }
  return false;
}

}  // namespace ember::kernels::cpu::internal
