#ifndef EMBER_KERNELS_CPU_INTERNAL_PACKED_I8_H_
#define EMBER_KERNELS_CPU_INTERNAL_PACKED_I8_H_

// PackedLinear's int8 format (kernels/packed_linear.h) as packed_linear.cc lays it out,
// and its product on AVX512-VNNI (vpdpbusd: in each i32 lane, acc += the sum of four
// u8 x s8 products, 64 multiply-adds an instruction) for packed_linear.cc's AVX-512
// target on a CPU that has the instruction. Highway 1.0.3 has no 8-bit dot product:
// intrinsics behind a target attribute, in packed_i8.cc.
//
// A group of a panel: the 16 scales s_j (bf16), then the levels in quads of depth:
// quad d (depths 4d .. 4d + 3) is 64 bytes, column j's four at 4 j, each q + 128 (u8).
// A quad of a panel is then one 64-byte line and one vpdpbusd operand.
//
// A's rows come quantized (QuantizeRows in packed_linear.cc): per row and group, the
// levels r_p (s8, the row's depth padded with zeros), the scale a_g (f32) and the
// offset 128 sum_p r_p, which takes the weights' +128 back out of the integer sum:
//   sum_p (q_pj + 128) r_p - 128 sum_p r_p = sum_p q_pj r_p, exact in i32.

#include <cstdint>

namespace ember::kernels::cpu::internal {

constexpr int64_t kI8Panel = 16;  // kPackedPanel
constexpr int64_t kI8Group = 32;  // kPackedGroup
constexpr int64_t kI8ScaleBytes = 2 * kI8Panel;
constexpr int64_t kI8GroupBytes = kI8ScaleBytes + kI8Group * kI8Panel;  // 544
constexpr int64_t kI8Offset = 128;  // added to each stored level
// Rows of A a register tile holds: their i32 group sums and f32 totals for 64 columns.
constexpr int64_t kI8Rows = 2;

// A's rows quantized as above: row i's levels at levels + i * ld_levels, its groups'
// scales and offsets at scale + i * ld_groups, offset + i * ld_groups.
struct QuantizedRows {
  const int8_t* levels;
  int64_t ld_levels;
  const float* scale;
  const int32_t* offset;
  int64_t ld_groups;
};

// Whether this CPU executes AVX512-VNNI (cpuid; the OS's AVX-512 state is the caller's
// target's premise).
bool HasAvx512Vnni();

// sums [rows][64] (rows 1 to kI8Rows) = the products of A's rows [0, rows) and the 64
// columns of four panels (panel[t] at its group 0) over `groups` groups: for column
// c = 16 t + j, from a total of 0, group after group, each operation rounded to f32,
//   total += (s_gj a_ig) (i32 sum of the group's products - offset_ig).
// packed_linear.cc's portable path does the same operations in the same order (no fused
// multiply-add: the scalar target has none), so every target gives the same bits.
void PackedI8RowsAvx512Vnni(int64_t rows, const uint8_t* const* panel, int64_t groups,
                            const QuantizedRows& a, float* sums);

}  // namespace ember::kernels::cpu::internal

#endif  // EMBER_KERNELS_CPU_INTERNAL_PACKED_I8_H_
