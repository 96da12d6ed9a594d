// The int8 product of packed_i8.h on AVX512-VNNI. Only the kernel carries the target
// attribute, so that nothing here runs on a CPU without the instruction unless
// HasAvx512Vnni() said so.

#include "kernels/cpu/internal/packed_i8.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace ember::kernels::cpu::internal {
namespace {

constexpr int64_t kPanels = 4;            // panels of the 64 columns
constexpr int64_t kQuads = kI8Group / 4;  // vpdpbusd operands a group
// How far ahead of its reads a tile asks for each panel's lines: the four panels are
// four streams the hardware prefetcher alone follows too late.
constexpr int64_t kAheadBytes = 4 * kI8GroupBytes;

#define EMBER_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

// GCC 12's AVX-512 headers start conversions from an undefined vector written `__Y = __Y`,
// which -Wmaybe-uninitialized reports once inlined here (clang has no such warning).
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

template <int64_t R>
EMBER_AVX512_VNNI void Rows(const uint8_t* const* panel, int64_t groups, const QuantizedRows& a,
                            float* sums) {
  __m512 total[R][kPanels];
#pragma GCC unroll 4
  for (int64_t r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int64_t t = 0; t < kPanels; ++t) total[r][t] = _mm512_setzero_ps();
  }
  for (int64_t g = 0; g < groups; ++g) {
    const uint8_t* group[kPanels];
#pragma GCC unroll 4
    for (int64_t t = 0; t < kPanels; ++t) group[t] = panel[t] + g * kI8GroupBytes;
    __m512i part[R][kPanels];
#pragma GCC unroll 4
    for (int64_t r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int64_t t = 0; t < kPanels; ++t) part[r][t] = _mm512_setzero_si512();
    }
#pragma GCC unroll 8
    for (int64_t d = 0; d < kQuads; ++d) {
      __m512i w[kPanels];
#pragma GCC unroll 4
      for (int64_t t = 0; t < kPanels; ++t) {
        const uint8_t* quad = group[t] + kI8ScaleBytes + d * 64;
        _mm_prefetch(reinterpret_cast<const char*>(quad + kAheadBytes), _MM_HINT_T0);
        w[t] = _mm512_loadu_si512(quad);
      }
#pragma GCC unroll 4
      for (int64_t r = 0; r < R; ++r) {
        int32_t four;  // r_p for the quad's 4 depths, broadcast to every column
        std::memcpy(&four, a.levels + r * a.ld_levels + g * kI8Group + 4 * d, 4);
        const __m512i x = _mm512_set1_epi32(four);
#pragma GCC unroll 4
        for (int64_t t = 0; t < kPanels; ++t) part[r][t] = _mm512_dpbusd_epi32(part[r][t], w[t], x);
      }
    }
    __m512 s[kPanels];  // the group's scales, bf16 widened: the bits in the high half
#pragma GCC unroll 4
    for (int64_t t = 0; t < kPanels; ++t) {
      const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(group[t]));
      s[t] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
    }
#pragma GCC unroll 4
    for (int64_t r = 0; r < R; ++r) {
      const __m512 scale = _mm512_set1_ps(a.scale[r * a.ld_groups + g]);
      const __m512i offset = _mm512_set1_epi32(a.offset[r * a.ld_groups + g]);
#pragma GCC unroll 4
      for (int64_t t = 0; t < kPanels; ++t) {
        const __m512 sum = _mm512_cvtepi32_ps(_mm512_sub_epi32(part[r][t], offset));
        total[r][t] = _mm512_add_ps(total[r][t], _mm512_mul_ps(_mm512_mul_ps(s[t], scale), sum));
      }
    }
  }
#pragma GCC unroll 4
  for (int64_t r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int64_t t = 0; t < kPanels; ++t) {
      _mm512_storeu_ps(sums + r * kPanels * kI8Panel + t * kI8Panel, total[r][t]);
    }
  }
}

#pragma GCC diagnostic pop

}  // namespace

bool HasAvx512Vnni() {
  static const bool has = __builtin_cpu_supports("avx512vnni");
  return has;
}

void PackedI8RowsAvx512Vnni(int64_t rows, const uint8_t* const* panel, int64_t groups,
                            const QuantizedRows& a, float* sums) {
  static_assert(kI8Rows == 2, "a tile of one or two rows");
  if (rows == 1) {
    Rows<1>(panel, groups, a, sums);
  } else {
    Rows<2>(panel, groups, a, sums);
  }
}

}  // namespace ember::kernels::cpu::internal
