// PackedLinear (see packed_linear.h): packed weights streamed through a register tile of
// a few rows of A by 64 output columns; compiled once per SIMD target.

#include "kernels/packed_linear.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/internal/dispatch.h"

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

constexpr int64_t kI8GroupBytes = kPackedPanel * 2 + kPackedGroup * kPackedPanel;  // 544

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

// The weights of a tile's 64 columns, a group of depth at a time: Group(g) then Load(i,
// w) gives depth 32 g + i as kVecs f32 vectors. The block's panels are at panel[t]
// (panels past W's last repeat it; their columns are dropped).
// f32 or bf16 weights: each depth's 16 of a panel side by side, depth_stride elements
// from one depth to the next (kPackedPanel packed; kBlock in a chunk widened to f32).
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

// int8: each weight s q, the group's 16 scales of a panel widened once.
struct I8Source {
  const uint8_t* panel[kBlockPanels];
  struct Group {
    const int8_t* q[kBlockPanels];
    VF scale[kVecs];
    HWY_INLINE void Load(int64_t i, VF* w) const {
      const DF df;
      const hn::RebindToSigned<DF> di;
      const hn::Rebind<int8_t, DF> d8;
#pragma GCC unroll 4
      for (int64_t t = 0; t < kBlockPanels; ++t) {
#pragma GCC unroll 16
        for (int64_t u = 0; u < kPanelVecs; ++u) {
          if (u == 0 && i % 4 == 0) hwy::Prefetch(q[t] + i * kPackedPanel + kAheadBytes);
          const auto q8 = hn::LoadU(d8, q[t] + i * kPackedPanel + u * kLanes);
          w[t * kPanelVecs + u] =
              hn::Mul(hn::ConvertTo(df, hn::PromoteTo(di, q8)), scale[t * kPanelVecs + u]);
        }
      }
    }
  };
  HWY_INLINE Group At(int64_t g) const {
    const DF df;
    Group group;
    for (int64_t t = 0; t < kBlockPanels; ++t) {
      const uint8_t* at = panel[t] + g * internal::kI8GroupBytes;
      const auto* scales = reinterpret_cast<const BFloat16*>(at);
      for (int64_t u = 0; u < kPanelVecs; ++u) {
        group.scale[t * kPanelVecs + u] = bf16::LoadWide(df, scales + u * kLanes);
      }
      group.q[t] = reinterpret_cast<const int8_t*>(at + 2 * kPackedPanel);
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

void PackedLinear(PackedFormat format, DType dtype, int64_t m, int64_t k, int64_t n, const void* a,
                  int64_t lda, const void* packed, const float* bias, void* c, int64_t ldc) {
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kBF16, "packed_linear: dtype ",
              DTypeName(dtype), " is not supported (f32 or bf16)");
  if (m == 0 || n == 0) return;
  const internal::FlushSubnormals flush;
  // A as f32 [m, kp], its depth past k zero (the packed weights' padding meets zeros).
  const int64_t kp = internal::PaddedDepth(k);
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
  const int64_t panels = (n + kPackedPanel - 1) / kPackedPanel;
  const int64_t panel_bytes = internal::PanelBytes(format, kp);
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  const auto* base = static_cast<const uint8_t*>(packed);
  // Blocks are independent (each column's sums are one block's): a fine cut.
  ParallelForWorkFine(
      blocks, kp * kBlock * std::max<int64_t>(m, 8) / 8, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          const uint8_t* at[kBlockPanels];
          for (int64_t t = 0; t < kBlockPanels; ++t) {
            at[t] = base + std::min(b * kBlockPanels + t, panels - 1) * panel_bytes;
          }
          const int64_t j0 = b * kBlock, cols = std::min(kBlock, n - j0);
          const float* block_bias = bias != nullptr ? bias + j0 : nullptr;
          auto run = [&](const auto& source) {
            if (dtype == DType::kF32) {
              Block(m, kp, a_padded, source, block_bias, cols, At<float>(c, j0), ldc);
            } else {
              Block(m, kp, a_padded, source, block_bias, cols, At<BFloat16>(c, j0), ldc);
            }
          };
          switch (format) {
            case PackedFormat::kF32: {
              WideSource<float> source{{}, kPackedPanel};
              for (int64_t t = 0; t < kBlockPanels; ++t)
                source.panel[t] = reinterpret_cast<const float*>(at[t]);
              run(source);
              break;
            }
            case PackedFormat::kBF16: {
              WideSource<BFloat16> source{{}, kPackedPanel};
              for (int64_t t = 0; t < kBlockPanels; ++t)
                source.panel[t] = reinterpret_cast<const BFloat16*>(at[t]);
              run(source);
              break;
            }
            case PackedFormat::kI8: {
              I8Source source;
              for (int64_t t = 0; t < kBlockPanels; ++t) source.panel[t] = at[t];
              run(source);
              break;
            }
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
        auto* q = reinterpret_cast<int8_t*>(group + 2 * kPackedPanel);
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
            q[i * kPackedPanel + j] = static_cast<int8_t>(std::clamp(level, -127.0f, 127.0f));
          }
        }
      }
    }
  });
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
