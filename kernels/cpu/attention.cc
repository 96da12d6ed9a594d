// Causal attention (see attention.h): each head's blocks of query rows through the
// blocked GEMM (matmul.h; serial inside a head's chunk; bf16 operands on the bf16 GEMM)
// and Highway row loops, compiled once per SIMD target.

#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/cpu/internal/dispatch.h"
#include "kernels/matmul.h"
#include "kernels/philox.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/attention.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/cpu/internal/exp-inl.h"
#include "kernels/cpu/internal/map-inl.h"
#include "kernels/cpu/internal/softmax-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using internal::Compute;
using internal::HWY_NAMESPACE::Accumulate;
using internal::HWY_NAMESPACE::ExpNonPositive;
using internal::HWY_NAMESPACE::Map;
using internal::HWY_NAMESPACE::NarrowRow;
using internal::HWY_NAMESPACE::RowMax;
using internal::HWY_NAMESPACE::SumExp;

// Query rows per block, a multiple of the GEMM's 6-row sliver. A block computes scores
// up to its last row's last visible key: at T = 128 the three blocks see 48, 96 and
// 128 keys, 67% of the square (one block of 128 rows would be 100%, blocks of 6 rows
// 52% but GEMMs too thin to run at speed).
constexpr int64_t kBlockRows = 48;

// One head's matrices (see attention.h for the shapes), and where its dropout mask
// starts in the stream (head b: offset + b tq tk).
template <typename T>
struct Head {
  int64_t tq, tk, d;
  const T *q, *k, *v;
  uint64_t mask_offset = 0;
};

// Query i's mask over its first `visible` keys (attention.h's M), into mask.
template <typename C>
void DropoutMask(const AttentionDropout& dropout, uint64_t row_offset, int64_t visible,
                 std::vector<C>& mask) {
  mask.resize(static_cast<size_t>(visible));
  const C keep = dropout.p >= 1 ? C(0) : C(1 / (1 - dropout.p));
  PhiloxStream stream(dropout.seed);
  for (int64_t j = 0; j < visible; ++j) {
    mask[j] = stream.Uniform(row_offset + static_cast<uint64_t>(j), 24) >= dropout.p ? keep : C(0);
  }
}

// C [m, n] (+)= A B with the sums in C's type Compute<T>: the dtype's GEMM, or for bf16
// operands GemmBf16F32 (f32 C, never rounded).
template <typename T>
void GemmWide(int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, Compute<T>* c, int64_t ldc,
              bool accumulate) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    GemmBf16F32(m, k, n, a, b, c, ldc, accumulate);
  } else {
    Gemm(kDTypeOf<T>, m, k, n, a, b, c, ldc, accumulate);
  }
}

// The `count` values at x as an operand of T: for bf16 rounded once into `narrow`; f32
// and f64 as they are.
template <typename T>
const T* AsOperand(const Compute<T>* x, int64_t count, std::vector<T>& narrow) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    narrow.resize(static_cast<size_t>(count));
    NarrowRow(count, x, narrow.data());
    return narrow.data();
  } else {
    return x;
  }
}

// Scores and probabilities in C = Compute<T>; bf16 products take bf16 operands (P and dS
// rounded once, as flash attention does) and sum in f32.
template <typename T, typename C = Compute<T>>
void ForwardHead(const Head<T>& h, T* y, C* lse, const AttentionDropout& dropout) {
  const C scale = C(1) / std::sqrt(C(h.d));
  const int64_t past = h.tk - h.tq;
  thread_local std::vector<C> scores;  // [kBlockRows, tk]: S, then P, in place
  thread_local std::vector<T> narrow;  // P as bf16
  thread_local std::vector<C> mask;
  scores.resize(static_cast<size_t>(kBlockRows * h.tk));
  C* s = scores.data();
  for (int64_t i0 = 0; i0 < h.tq; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, h.tq - i0), keys = i0 + rows + past;
    // S = Q[i0:i0+rows] K[0:keys]^T (B = K^T: row stride 1, column stride d).
    GemmWide<T>(rows, h.d, keys, {h.q + i0 * h.d, h.d, 1}, {h.k, 1, h.d}, s, keys, false);
    for (int64_t r = 0; r < rows; ++r) {
      C* row = s + r * keys;
      const int64_t visible = i0 + r + past + 1;
      Map(
          visible, row, [scale](auto d, auto x) { return hn::Mul(x, hn::Set(d, scale)); }, row);
      const C m = RowMax(row, visible);
      const C sum = SumExp(row, visible, m, row);
      const C inverse = C(1) / sum;
      Map(
          visible, row, [inverse](auto d, auto e) { return hn::Mul(e, hn::Set(d, inverse)); }, row);
      std::fill(row + visible, row + keys, C(0));
      lse[i0 + r] = m + std::log(sum);
      if (dropout.p > 0) {  // P * M
        DropoutMask(dropout, h.mask_offset + static_cast<uint64_t>((i0 + r) * h.tk), visible, mask);
        for (int64_t j = 0; j < visible; ++j) row[j] *= mask[j];
      }
    }
    // Y[i0:i0+rows] = P V[0:keys].
    const T* p = AsOperand<T>(s, rows * keys, narrow);
    Gemm(kDTypeOf<T>, rows, keys, h.d, {p, keys, 1}, {h.v, h.d, 1}, y + i0 * h.d, h.d, false);
  }
}

template <typename T, typename C = Compute<T>>
void BackwardHead(const Head<T>& h, const T* y, const C* lse, const T* dy, T* dq, T* dk, T* dv,
                  const AttentionDropout& dropout) {
  constexpr bool kBf16 = std::is_same_v<T, BFloat16>;
  const C scale = C(1) / std::sqrt(C(h.d));
  const int64_t past = h.tk - h.tq;
  thread_local std::vector<C> scratch;  // P and dP (then dS), each [kBlockRows, tk]
  thread_local std::vector<T> p_narrow, ds_narrow;
  thread_local std::vector<C> mask;
  // dK and dV summed over the blocks below: in place for f32 and f64, in f32 for bf16
  // (rounded once at the end).
  thread_local std::vector<C> sums;
  scratch.resize(static_cast<size_t>(2 * kBlockRows * h.tk));
  C* p = scratch.data();
  C* ds = p + kBlockRows * h.tk;
  C *dk_sum, *dv_sum;
  if constexpr (kBf16) {
    sums.resize(static_cast<size_t>(2 * h.tk * h.d));
    dk_sum = sums.data();
    dv_sum = dk_sum + h.tk * h.d;
  } else {
    dk_sum = dk;
    dv_sum = dv;
  }
  std::fill(dk_sum, dk_sum + h.tk * h.d, C(0));
  std::fill(dv_sum, dv_sum + h.tk * h.d, C(0));
  for (int64_t i0 = 0; i0 < h.tq; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, h.tq - i0), keys = i0 + rows + past;
    const T* q_block = h.q + i0 * h.d;
    const T* dy_block = dy + i0 * h.d;
    GemmWide<T>(rows, h.d, keys, {q_block, h.d, 1}, {h.k, 1, h.d}, p, keys, false);    // S
    GemmWide<T>(rows, h.d, keys, {dy_block, h.d, 1}, {h.v, 1, h.d}, ds, keys, false);  // dP
    for (int64_t r = 0; r < rows; ++r) {
      C* p_row = p + r * keys;
      C* ds_row = ds + r * keys;
      const int64_t visible = i0 + r + past + 1;
      const C l = lse[i0 + r];
      // P = exp(scale S - lse); the argument is <= 0 up to rounding, hence the Min.
      Map(
          visible, p_row,
          [scale, l](auto d, auto x) {
            return ExpNonPositive(
                d, hn::Min(hn::MulSub(x, hn::Set(d, scale), hn::Set(d, l)), hn::Zero(d)));
          },
          p_row);
      const T* y_row = y + (i0 + r) * h.d;
      const C dot = Accumulate(
          h.d, dy_block + r * h.d, y_row, [](auto, auto a, auto b) { return hn::Mul(a, b); },
          [](C a, C b) { return a * b; });  // D = dY . Y
      if (dropout.p > 0) {                  // dP = (dY V^T) * M
        DropoutMask(dropout, h.mask_offset + static_cast<uint64_t>((i0 + r) * h.tk), visible, mask);
        for (int64_t j = 0; j < visible; ++j) ds_row[j] *= mask[j];
      }
      // dS / sqrt(d) = P (dP - D) / sqrt(d): the scale of both dQ and dK, applied once.
      Map(
          visible, ds_row,
          [dot, scale](auto d, auto pv, auto g) {
            return hn::Mul(hn::Mul(pv, hn::Sub(g, hn::Set(d, dot))), hn::Set(d, scale));
          },
          p_row, ds_row);
      if (dropout.p > 0) {  // dV's operand: P * M
        for (int64_t j = 0; j < visible; ++j) p_row[j] *= mask[j];
      }
      std::fill(p_row + visible, p_row + keys, C(0));
      std::fill(ds_row + visible, ds_row + keys, C(0));
    }
    // dQ[i0:i0+rows] = dS K[0:keys];  dK[0:keys] += dS^T Q;  dV[0:keys] += P^T dY.
    const T* ds_op = AsOperand<T>(ds, rows * keys, ds_narrow);
    const T* p_op = AsOperand<T>(p, rows * keys, p_narrow);
    Gemm(kDTypeOf<T>, rows, keys, h.d, {ds_op, keys, 1}, {h.k, h.d, 1}, dq + i0 * h.d, h.d, false);
    GemmWide<T>(keys, rows, h.d, {ds_op, 1, keys}, {q_block, h.d, 1}, dk_sum, h.d, true);
    GemmWide<T>(keys, rows, h.d, {p_op, 1, keys}, {dy_block, h.d, 1}, dv_sum, h.d, true);
  }
  if constexpr (kBf16) {
    NarrowRow(h.tk * h.d, dk_sum, dk);
    NarrowRow(h.tk * h.d, dv_sum, dv);
  }
}

// A head costs about tq tk d multiply-adds a GEMM (two forward, five backward): in the
// pool's units (thread_pool.h), tq tk d / 8 each; and about 8 units a score for its
// softmax (an exp and a few passes), which is most of a generated token's head (tq = 1:
// its products are dot products and axpys of d, the GEMM's register tiles unused).
inline int64_t HeadWork(int64_t tq, int64_t tk, int64_t d, int64_t gemms) {
  return gemms * tq * tk * d / 8 + 8 * tq * tk;
}

// Head b's matrices and mask (K's and V's heads kv_stride apart).
template <typename T>
Head<T> HeadOf(int64_t b, int64_t tq, int64_t tk, int64_t d, const void* q, const void* k,
               const void* v, int64_t kv_stride, const AttentionDropout& dropout) {
  return {tq,
          tk,
          d,
          At<T>(q, b * tq * d),
          At<T>(k, b * kv_stride),
          At<T>(v, b * kv_stride),
          dropout.offset + static_cast<uint64_t>(b * tq * tk)};
}

void CausalAttentionForward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                            const void* q, const void* k, const void* v, int64_t kv_stride, void* y,
                            void* lse, const AttentionDropout& dropout) {
  DispatchFloatOrBf16("causal_attention", dtype, [&](auto type) {
    using T = decltype(type);
    using C = Compute<T>;
    ParallelForWork(batch, HeadWork(tq, tk, d, 2), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        ForwardHead(HeadOf<T>(b, tq, tk, d, q, k, v, kv_stride, dropout), At<T>(y, b * tq * d),
                    At<C>(lse, b * tq), dropout);
      }
    });
  });
}

void CausalAttentionBackward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                             const void* q, const void* k, const void* v, const void* y,
                             const void* lse, const void* dy, void* dq, void* dk, void* dv,
                             const AttentionDropout& dropout) {
  DispatchFloatOrBf16("causal_attention_backward", dtype, [&](auto type) {
    using T = decltype(type);
    using C = Compute<T>;
    ParallelForWork(batch, HeadWork(tq, tk, d, 5), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        BackwardHead(HeadOf<T>(b, tq, tk, d, q, k, v, tk * d, dropout), At<T>(y, b * tq * d),
                     At<C>(lse, b * tq), At<T>(dy, b * tq * d), At<T>(dq, b * tq * d),
                     At<T>(dk, b * tk * d), At<T>(dv, b * tk * d), dropout);
      }
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(CausalAttentionForward);
HWY_EXPORT(CausalAttentionBackward);

void CausalAttentionForward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                            const void* q, const void* k, const void* v, int64_t kv_stride, void* y,
                            void* lse, const AttentionDropout& dropout) {
  HWY_DYNAMIC_DISPATCH(CausalAttentionForward)
  (dtype, batch, tq, tk, d, q, k, v, kv_stride, y, lse, dropout);
}

void CausalAttentionBackward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                             const void* q, const void* k, const void* v, const void* y,
                             const void* lse, const void* dy, void* dq, void* dk, void* dv,
                             const AttentionDropout& dropout) {
  HWY_DYNAMIC_DISPATCH(CausalAttentionBackward)
  (dtype, batch, tq, tk, d, q, k, v, y, lse, dy, dq, dk, dv, dropout);
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
