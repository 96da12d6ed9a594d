// PackedLinear (see packed_linear.h): packed weights streamed through a register tile of
// a few rows of A by 64 output columns; compiled once per SIMD target. int8 multiplies
// integer levels (internal/packed_i8.h): with vpdpbusd where the CPU has AVX512-VNNI,
// elsewhere in f32, exactly, with the same result.

#include "kernels/packed_linear.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/internal/dispatch.h"
#include "kernels/cpu/internal/packed_i8.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/packed_linear.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on
#include "hwy/cache_control.h"
#include "kernels/cpu/internal/bf16-inl.h"

// What every target shares: the layout's sizes.
#ifndef EMBER_KERNELS_CPU_PACKED_LINEAR_ONCE_
#define EMBER_KERNELS_CPU_PACKED_LINEAR_ONCE_
namespace ember::kernels::cpu::internal {

static_assert(kI8Panel == kPackedPanel && kI8Group == kPackedGroup, "packed_i8.h's layout");

// The depth rounded up to whole groups.
inline int64_t PaddedDepth(int64_t k) {
  return (k + kPackedGroup - 1) / kPackedGroup * kPackedGroup;
}

// Bytes of one panel of a depth kp (a multiple of kPackedGroup).
inline int64_t PanelBytes(PackedFormat format, int64_t kp) {
  switch (format) {
    case PackedFormat::kF32:
      return kp * kPackedPanel * 4;
    case PackedFormat::kBF16:
      return kp * kPackedPanel * 2;
    case PackedFormat::kI8:
      return kp / kPackedGroup * kI8GroupBytes;
  }
  return 0;
}

// A's rows [m, k] (f32 or bf16, row stride lda) quantized for the int8 product
// (packed_linear.h): per row and group of 32 depths, a = max |A| / 127 and r = round(A
// 127 / max |A|) to nearest even (0 where max |A| = 0); a group holding an inf or a NaN
// gets r = 0 and a = NaN, so that its row's products are NaN. The depth past k is 0.
// Held in the calling thread's buffers until its next call.
inline QuantizedRows QuantizeRows(DType dtype, int64_t m, int64_t k, const void* a, int64_t lda) {
  const int64_t kp = PaddedDepth(k), groups = kp / kPackedGroup;
  thread_local std::vector<int8_t> levels;
  thread_local std::vector<float> row, scale;
  thread_local std::vector<int32_t> offset;
  levels.assign(static_cast<size_t>(m * kp), 0);
  row.assign(static_cast<size_t>(kp), 0.0f);
  scale.resize(static_cast<size_t>(m * groups));
  offset.resize(static_cast<size_t>(m * groups));
  for (int64_t i = 0; i < m; ++i) {
    if (dtype == DType::kF32) {
      std::memcpy(row.data(), static_cast<const float*>(a) + i * lda,
                  static_cast<size_t>(k) * sizeof(float));
    } else {
      const BFloat16* in = static_cast<const BFloat16*>(a) + i * lda;
      for (int64_t p = 0; p < k; ++p) row[p] = in[p].ToFloat();
    }
    for (int64_t g = 0; g < groups; ++g) {
      const float* x = row.data() + g * kPackedGroup;
      float largest = 0;
      bool finite = true;
      for (int64_t p = 0; p < kPackedGroup; ++p) {
        finite = finite && std::isfinite(x[p]);
        largest = std::max(largest, std::fabs(x[p]));
      }
      const float inverse = finite && largest > 0 ? 127.0f / largest : 0.0f;
      int8_t* r = levels.data() + i * kp + g * kPackedGroup;
      int32_t sum = 0;
      for (int64_t p = 0; p < kPackedGroup; ++p) {
        // To nearest even: |x 127 / max| <= 127 (to rounding), and adding 1.5 x 2^23 leaves
        // a float no bits below 1 (std::nearbyint is a library call).
        const float level = (x[p] * inverse + 0x1.8p23f) - 0x1.8p23f;
        r[p] = static_cast<int8_t>(level);
        sum += r[p];
      }
      scale[i * groups + g] = finite ? largest / 127.0f : std::numeric_limits<float>::quiet_NaN();
      offset[i * groups + g] = kI8Offset * sum;
    }
  }
  return {levels.data(), kp, scale.data(), offset.data(), groups};
}

}  // namespace ember::kernels::cpu::internal
#endif  // EMBER_KERNELS_CPU_PACKED_LINEAR_ONCE_

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace bf16 = internal::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(DF()));
constexpr int64_t kBlock = 64;                           // output columns a tile holds
constexpr int64_t kBlockPanels = kBlock / kPackedPanel;  // 4
constexpr int64_t kPanelVecs = kPackedPanel / kLanes;    // vectors across a panel
constexpr int64_t kVecs = kBlock / kLanes;               // vectors across a tile
// Rows of A a tile holds: 16 vector registers of sums (4 rows with AVX-512's 16 lanes).
constexpr int64_t kRows = std::max<int64_t>(1, 16 / kVecs);
// Groups of depth widened to f32 at a time for more than kRows rows: 256 x 64 f32
// (64 KiB, in L2), read once per kRows rows instead of converted again.
constexpr int64_t kChunkGroups = 8;

// How far ahead of its reads a tile asks for each panel's bytes (a line per Load that
// starts one): the four panels are four streams the hardware prefetcher alone follows
// too late.
constexpr int64_t kAheadBytes = 4 * internal::kI8GroupBytes;
static_assert(kVecs * kLanes == 4 * internal::kI8Panel, "a tile is four panels");

// The f32 or bf16 weights of a tile's 64 columns, a group of depth at a time: At(g) then
// Load(i, w) gives depth 32 g + i as kVecs f32 vectors. The block's panels are at
// panel[t] (panels past W's last repeat it; their columns are dropped); each depth's 16
// of a panel side by side, depth_stride elements from one depth to the next
// (kPackedPanel packed; kBlock in a chunk widened to f32).
template <typename T>
struct WideSource {
  const T* panel[kBlockPanels];
  int64_t depth_stride;
  struct Group {
    const T* at[kBlockPanels];
    int64_t depth_stride;
    HWY_INLINE void Load(int64_t i, VF* w) const {
      const DF df;
      const bool line_starts = i * depth_stride * static_cast<int64_t>(sizeof(T)) % 64 == 0;
#pragma GCC unroll 4
      for (int64_t t = 0; t < kBlockPanels; ++t) {
#pragma GCC unroll 16
        for (int64_t u = 0; u < kPanelVecs; ++u) {
          const T* at_depth = at[t] + i * depth_stride;
          if (u == 0 && line_starts) hwy::Prefetch(at_depth + kAheadBytes / sizeof(T));
          w[t * kPanelVecs + u] = bf16::LoadWide(df, at_depth + u * kLanes);
        }
      }
    }
  };
  HWY_INLINE Group At(int64_t g) const {
    Group group{{}, depth_stride};
    for (int64_t t = 0; t < kBlockPanels; ++t) {
      group.at[t] = panel[t] + g * kPackedGroup * depth_stride;
    }
    return group;
  }
};

// acc[r] += A[r][p] W'[p] over the depth of groups [g0, g1), rows [0, R) of A (f32, row
// stride lda, depth padded with zeros). The sums stay in registers for the whole depth.
template <int64_t R, class Source>
HWY_INLINE void TileRows(const Source& source, int64_t g0, int64_t g1, const float* a, int64_t lda,
                         VF (&acc)[kRows][kVecs]) {
  const DF df;
  VF sum[R][kVecs];
#pragma GCC unroll 4
  for (int64_t r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int64_t v = 0; v < kVecs; ++v) sum[r][v] = acc[r][v];
  }
  for (int64_t g = g0; g < g1; ++g) {
    const auto group = source.At(g);
    const float* ag = a + g * kPackedGroup;
    for (int64_t i = 0; i < kPackedGroup; ++i) {
      VF w[kVecs];
      group.Load(i, w);
#pragma GCC unroll 4
      for (int64_t r = 0; r < R; ++r) {
        const VF x = hn::Set(df, ag[r * lda + i]);
#pragma GCC unroll 16
        for (int64_t v = 0; v < kVecs; ++v) sum[r][v] = hn::MulAdd(x, w[v], sum[r][v]);
      }
    }
  }
#pragma GCC unroll 4
  for (int64_t r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int64_t v = 0; v < kVecs; ++v) acc[r][v] = sum[r][v];
  }
}

// TileRows for `rows` (1 to kRows) rows.
template <int64_t R = kRows, class Source>
void Tile(int64_t rows, const Source& source, int64_t g0, int64_t g1, const float* a, int64_t lda,
          VF (&acc)[kRows][kVecs]) {
  if constexpr (R > 1) {
    if (rows < R) return Tile<R - 1>(rows, source, g0, g1, a, lda, acc);
  }
  TileRows<R>(source, g0, g1, a, lda, acc);
}

// Stores rows [0, rows) of sums (f32, row stride kBlock) plus the bias into C's columns
// [0, cols): f32, or rounded to bf16.
template <typename T>
void StoreBlock(int64_t rows, int64_t cols, const float* sums, const float* bias, T* c,
                int64_t ldc) {
  const DF df;
  for (int64_t r = 0; r < rows; ++r) {
    T* row = c + r * ldc;
    const float* sum = sums + r * kBlock;
    if (cols == kBlock) {
      for (int64_t j = 0; j < kBlock; j += kLanes) {
        VF v = hn::LoadU(df, sum + j);
        if (bias != nullptr) v = hn::Add(v, hn::LoadU(df, bias + j));
        bf16::StoreNarrow(v, df, row + j);
      }
      continue;
    }
    for (int64_t j = 0; j < cols; ++j) {
      const float v = sum[j] + (bias != nullptr ? bias[j] : 0.0f);
      if constexpr (std::is_same_v<T, BFloat16>) {
        row[j] = BFloat16::FromFloat(v);
      } else {
        row[j] = v;
      }
    }
  }
}

// C's columns [j0, j0 + cols) (cols <= kBlock) from the block's source. A (f32 [m, kp])
// is padded; up to kRows rows stream the packed weights once, more widen them to f32 a
// chunk of depth at a time and take kRows rows per pass over the chunk.
template <typename T, class Source>
void Block(int64_t m, int64_t kp, const float* a, const Source& source, const float* bias,
           int64_t cols, T* c, int64_t ldc) {
  const DF df;
  const int64_t groups = kp / kPackedGroup;
  VF acc[kRows][kVecs];
  alignas(64) float sums[kRows * kBlock];
  if (m <= kRows) {
    for (auto& row : acc) {
      for (VF& v : row) v = hn::Zero(df);
    }
    Tile(m, source, 0, groups, a, kp, acc);
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t v = 0; v < kVecs; ++v) hn::Store(acc[r][v], df, sums + r * kBlock + v * kLanes);
    }
    StoreBlock(m, cols, sums, bias, c, ldc);
    return;
  }
  thread_local std::vector<float> wide, partial;
  wide.resize(static_cast<size_t>(kChunkGroups * kPackedGroup * kBlock));
  partial.resize(static_cast<size_t>(m * kBlock));
  for (int64_t g0 = 0; g0 < groups; g0 += kChunkGroups) {
    const int64_t g1 = std::min(groups, g0 + kChunkGroups);
    // wide [depth of the chunk][64]: the chunk's weights as f32.
    for (int64_t g = g0; g < g1; ++g) {
      const auto group = source.At(g);
      for (int64_t i = 0; i < kPackedGroup; ++i) {
        VF w[kVecs];
        group.Load(i, w);
        float* row = wide.data() + ((g - g0) * kPackedGroup + i) * kBlock;
        for (int64_t v = 0; v < kVecs; ++v) hn::StoreU(w[v], df, row + v * kLanes);
      }
    }
    WideSource<float> chunk{{}, kBlock};
    for (int64_t t = 0; t < kBlockPanels; ++t) chunk.panel[t] = wide.data() + t * kPackedPanel;
    for (int64_t r0 = 0; r0 < m; r0 += kRows) {
      const int64_t rows = std::min(kRows, m - r0);
      float* part = partial.data() + r0 * kBlock;
      for (int64_t r = 0; r < kRows; ++r) {
        for (int64_t v = 0; v < kVecs; ++v) {
          acc[r][v] =
              g0 == 0 || r >= rows ? hn::Zero(df) : hn::LoadU(df, part + r * kBlock + v * kLanes);
        }
      }
      // The chunk's depth starts at 0 in `wide`; A's at g0's.
      Tile(rows, chunk, 0, g1 - g0, a + r0 * kp + g0 * kPackedGroup, kp, acc);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t v = 0; v < kVecs; ++v)
          hn::StoreU(acc[r][v], df, part + r * kBlock + v * kLanes);
      }
    }
  }
  StoreBlock(m, cols, partial.data(), bias, c, ldc);
}

// internal::PackedI8RowsAvx512Vnni on any target, the same operations in the same order:
// each group's sum of products of levels in f32, exact (at most 32 products of |q + 128|
// <= 255 and |r| <= 127: integers below 2^24).
template <int64_t R>
void I8Rows(const uint8_t* const* panel, int64_t groups, const internal::QuantizedRows& a,
            float* sums) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  const auto low_byte = hn::Set(du, 0xFF);
  VF total[R][kVecs];
  for (auto& row : total) {
    for (VF& v : row) v = hn::Zero(df);
  }
  for (int64_t g = 0; g < groups; ++g) {
    const uint8_t* group[kBlockPanels];
    for (int64_t t = 0; t < kBlockPanels; ++t) group[t] = panel[t] + g * internal::kI8GroupBytes;
    VF part[R][kVecs];
    for (auto& row : part) {
      for (VF& v : row) v = hn::Zero(df);
    }
    for (int64_t d = 0; d < kPackedGroup / 4; ++d) {
      // words[v]: kLanes columns' four bytes, depth 4 d + e in bits [8 e, 8 e + 8).
      hn::Vec<decltype(du)> words[kVecs];
      for (int64_t t = 0; t < kBlockPanels; ++t) {
        const uint8_t* quad = group[t] + internal::kI8ScaleBytes + d * 64;
        hwy::Prefetch(quad + kAheadBytes);
        for (int64_t u = 0; u < kPanelVecs; ++u) {
          words[t * kPanelVecs + u] =
              hn::LoadU(du, reinterpret_cast<const uint32_t*>(quad) + u * kLanes);
        }
      }
      for (int e = 0; e < 4; ++e) {
        VF level[kVecs];
        for (int64_t v = 0; v < kVecs; ++v) {
          level[v] = hn::ConvertTo(
              df, hn::BitCast(di, hn::And(hn::ShiftRightSame(words[v], 8 * e), low_byte)));
        }
        for (int64_t r = 0; r < R; ++r) {
          const VF x = hn::Set(df, a.levels[r * a.ld_levels + g * kPackedGroup + 4 * d + e]);
          for (int64_t v = 0; v < kVecs; ++v) part[r][v] = hn::MulAdd(x, level[v], part[r][v]);
        }
      }
    }
    VF s[kVecs];  // the group's scales
    for (int64_t t = 0; t < kBlockPanels; ++t) {
      const auto* scales = reinterpret_cast<const BFloat16*>(group[t]);
      for (int64_t u = 0; u < kPanelVecs; ++u) {
        s[t * kPanelVecs + u] = bf16::LoadWide(df, scales + u * kLanes);
      }
    }
    for (int64_t r = 0; r < R; ++r) {
      const VF scale = hn::Set(df, a.scale[r * a.ld_groups + g]);
      const VF offset = hn::Set(df, static_cast<float>(a.offset[r * a.ld_groups + g]));
      for (int64_t v = 0; v < kVecs; ++v) {
        total[r][v] =
            hn::Add(total[r][v], hn::Mul(hn::Mul(s[v], scale), hn::Sub(part[r][v], offset)));
      }
    }
  }
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t v = 0; v < kVecs; ++v) hn::StoreU(total[r][v], df, sums + r * kBlock + v * kLanes);
  }
}

// C's columns [j0, j0 + cols) (cols <= kBlock) from four int8 panels (panel[t] at its
// group 0) and A quantized: kI8Rows rows at a time, each pass streaming the whole depth.
template <typename T>
void I8Block(int64_t m, int64_t groups, const uint8_t* const* panel,
             const internal::QuantizedRows& a, const float* bias, int64_t cols, T* c, int64_t ldc) {
  alignas(64) float sums[internal::kI8Rows * kBlock];
  for (int64_t r0 = 0; r0 < m; r0 += internal::kI8Rows) {
    const int64_t rows = std::min(internal::kI8Rows, m - r0);
    const internal::QuantizedRows at{a.levels + r0 * a.ld_levels, a.ld_levels,
                                     a.scale + r0 * a.ld_groups, a.offset + r0 * a.ld_groups,
                                     a.ld_groups};
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    if (internal::HasAvx512Vnni()) {
      internal::PackedI8RowsAvx512Vnni(rows, panel, groups, at, sums);
      StoreBlock(rows, cols, sums, bias, c + r0 * ldc, ldc);
      continue;
    }
#endif
    static_assert(internal::kI8Rows == 2, "a tile of one or two rows");
    if (rows == 1) {
      I8Rows<1>(panel, groups, at, sums);
    } else {
      I8Rows<2>(panel, groups, at, sums);
    }
    StoreBlock(rows, cols, sums, bias, c + r0 * ldc, ldc);
  }
}

void PackedLinear(PackedFormat format, DType dtype, int64_t m, int64_t k, int64_t n, const void* a,
                  int64_t lda, const void* packed, const float* bias, void* c, int64_t ldc) {
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kBF16, "packed_linear: dtype ",
              DTypeName(dtype), " is not supported (f32 or bf16)");
  if (m == 0 || n == 0) return;
  const internal::FlushSubnormals flush;
  const int64_t kp = internal::PaddedDepth(k);
  const int64_t panels = (n + kPackedPanel - 1) / kPackedPanel;
  const int64_t panel_bytes = internal::PanelBytes(format, kp);
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  const auto* base = static_cast<const uint8_t*>(packed);
  // Block b's panels (those past W's last repeat it; their columns are dropped).
  auto block_panels = [&](int64_t b, const uint8_t*(&at)[kBlockPanels]) {
    for (int64_t t = 0; t < kBlockPanels; ++t) {
      at[t] = base + std::min(b * kBlockPanels + t, panels - 1) * panel_bytes;
    }
  };
  // Blocks are independent (each column's sums are one block's): a fine cut.
  const int64_t block_work = kp * kBlock * std::max<int64_t>(m, 8) / 8;
  if (format == PackedFormat::kI8) {
    const internal::QuantizedRows rows = internal::QuantizeRows(dtype, m, k, a, lda);
    ParallelForWorkFine(blocks, block_work, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const uint8_t* at[kBlockPanels];
        block_panels(b, at);
        const int64_t j0 = b * kBlock, cols = std::min(kBlock, n - j0);
        const float* block_bias = bias != nullptr ? bias + j0 : nullptr;
        if (dtype == DType::kF32) {
          I8Block(m, kp / kPackedGroup, at, rows, block_bias, cols, At<float>(c, j0), ldc);
        } else {
          I8Block(m, kp / kPackedGroup, at, rows, block_bias, cols, At<BFloat16>(c, j0), ldc);
        }
      }
    });
    return;
  }
  // A as f32 [m, kp], its depth past k zero (the packed weights' padding meets zeros).
  thread_local std::vector<float> padded;
  padded.assign(static_cast<size_t>(m * kp), 0.0f);
  for (int64_t i = 0; i < m; ++i) {
    float* row = padded.data() + i * kp;
    if (dtype == DType::kF32) {
      std::memcpy(row, At<float>(a, i * lda), static_cast<size_t>(k) * sizeof(float));
    } else {
      const BFloat16* in = At<BFloat16>(a, i * lda);
      for (int64_t p = 0; p < k; ++p) row[p] = in[p].ToFloat();
    }
  }
  const float* const a_padded = padded.data();  // thread_local: the workers' would be empty
  ParallelForWorkFine(blocks, block_work, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const uint8_t* at[kBlockPanels];
      block_panels(b, at);
      const int64_t j0 = b * kBlock, cols = std::min(kBlock, n - j0);
      const float* block_bias = bias != nullptr ? bias + j0 : nullptr;
      auto run = [&](const auto& source) {
        if (dtype == DType::kF32) {
          Block(m, kp, a_padded, source, block_bias, cols, At<float>(c, j0), ldc);
        } else {
          Block(m, kp, a_padded, source, block_bias, cols, At<BFloat16>(c, j0), ldc);
        }
      };
      if (format == PackedFormat::kF32) {
        WideSource<float> source{{}, kPackedPanel};
        for (int64_t t = 0; t < kBlockPanels; ++t)
          source.panel[t] = reinterpret_cast<const float*>(at[t]);
        run(source);
      } else {
        WideSource<BFloat16> source{{}, kPackedPanel};
        for (int64_t t = 0; t < kBlockPanels; ++t)
          source.panel[t] = reinterpret_cast<const BFloat16*>(at[t]);
        run(source);
      }
    }
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(PackedLinear);

void PackedLinear(PackedFormat format, DType dtype, int64_t m, int64_t k, int64_t n, const void* a,
                  int64_t lda, const void* packed, const float* bias, void* c, int64_t ldc) {
  HWY_DYNAMIC_DISPATCH(PackedLinear)(format, dtype, m, k, n, a, lda, packed, bias, c, ldc);
}

const char* PackedFormatName(PackedFormat format) {
  switch (format) {
    case PackedFormat::kF32:
      return "f32";
    case PackedFormat::kBF16:
      return "bf16";
    case PackedFormat::kI8:
      return "int8";
  }
  return "?";
}

int64_t PackedBytes(PackedFormat format, int64_t n, int64_t k) {
  EMBER_CHECK(n >= 1 && k >= 1, "packed_linear: a weight of ", n, " x ", k,
              " (expected at least 1 x 1)");
  return (n + kPackedPanel - 1) / kPackedPanel *
         internal::PanelBytes(format, internal::PaddedDepth(k));
}

namespace {

// The smallest bf16 at least s (s >= 0, finite): a scale that keeps |W| / s <= 127.
BFloat16 Bf16AtLeast(float s) {
  BFloat16 b = BFloat16::FromFloat(s);
  if (b.ToFloat() < s) ++b.bits;  // the next bf16 up (s is positive)
  return b;
}

}  // namespace

void PackWeights(PackedFormat format, int64_t n, int64_t k, const float* w, int64_t ldw,
                 void* packed) {
  const int64_t kp = internal::PaddedDepth(k), panels = (n + kPackedPanel - 1) / kPackedPanel;
  const int64_t panel_bytes = internal::PanelBytes(format, kp);
  // W[row][p], 0 past the matrix.
  auto weight = [&](int64_t row, int64_t p) { return row < n && p < k ? w[row * ldw + p] : 0.0f; };
  if (format == PackedFormat::kI8) {
    for (int64_t row = 0; row < n; ++row) {
      for (int64_t p = 0; p < k; ++p) {
        EMBER_CHECK(std::isfinite(w[row * ldw + p]), "packed_linear: int8 needs finite weights; W[",
                    row, "][", p, "] = ", w[row * ldw + p]);
      }
    }
  }
  ParallelForWork(panels, kp * kPackedPanel, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      uint8_t* panel = static_cast<uint8_t*>(packed) + t * panel_bytes;
      for (int64_t p = 0; p < kp; ++p) {
        for (int64_t j = 0; j < kPackedPanel; ++j) {
          const float x = weight(t * kPackedPanel + j, p);
          if (format == PackedFormat::kF32) {
            reinterpret_cast<float*>(panel)[p * kPackedPanel + j] = x;
          } else if (format == PackedFormat::kBF16) {
            reinterpret_cast<BFloat16*>(panel)[p * kPackedPanel + j] = BFloat16::FromFloat(x);
          }
        }
      }
      if (format != PackedFormat::kI8) continue;
      for (int64_t g = 0; g < kp / kPackedGroup; ++g) {
        uint8_t* group = panel + g * internal::kI8GroupBytes;
        auto* scales = reinterpret_cast<BFloat16*>(group);
        uint8_t* levels = group + internal::kI8ScaleBytes;  // quads of depth (packed_i8.h)
        for (int64_t j = 0; j < kPackedPanel; ++j) {
          float largest = 0;
          for (int64_t i = 0; i < kPackedGroup; ++i) {
            largest =
                std::max(largest, std::fabs(weight(t * kPackedPanel + j, g * kPackedGroup + i)));
          }
          scales[j] = Bf16AtLeast(largest / 127.0f);
          const float s = scales[j].ToFloat();
          for (int64_t i = 0; i < kPackedGroup; ++i) {
            const float x = weight(t * kPackedPanel + j, g * kPackedGroup + i);
            const float level = s > 0 ? std::nearbyint(x / s) : 0.0f;
            levels[i / 4 * 64 + j * 4 + i % 4] = static_cast<uint8_t>(
                static_cast<int>(std::clamp(level, -127.0f, 127.0f)) + internal::kI8Offset);
          }
        }
      }
    }
  });
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
