// Causal attention (see attention.h): each head's blocks of query rows through the
// blocked GEMM (matmul.h; serial inside a head's chunk) and Highway row loops, compiled
// once per SIMD target.

#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/internal/dispatch.h"
#include "kernels/matmul.h"

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
using internal::HWY_NAMESPACE::Accumulate;
using internal::HWY_NAMESPACE::ExpNonPositive;
using internal::HWY_NAMESPACE::Map;
using internal::HWY_NAMESPACE::RowMax;
using internal::HWY_NAMESPACE::SumExp;

// Query rows per block, a multiple of the GEMM's 6-row sliver. A block computes scores
// up to its last row's last visible key: at T = 128 the three blocks see 48, 96 and
// 128 keys, 67% of the square (one block of 128 rows would be 100%, blocks of 6 rows
// 52% but GEMMs too thin to run at speed).
constexpr int64_t kBlockRows = 48;

// One head's matrices (see attention.h for the shapes).
template <typename T>
struct Head {
  int64_t tq, tk, d;
  const T *q, *k, *v;
};

template <typename T>
void ForwardHead(const Head<T>& h, T* y, T* lse) {
  const T scale = T(1) / std::sqrt(T(h.d));
  const int64_t past = h.tk - h.tq;
  thread_local std::vector<T> scores;  // [kBlockRows, tk]: S, then P, in place
  scores.resize(static_cast<size_t>(kBlockRows * h.tk));
  T* s = scores.data();
  for (int64_t i0 = 0; i0 < h.tq; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, h.tq - i0), keys = i0 + rows + past;
    // S = Q[i0:i0+rows] K[0:keys]^T (B = K^T: row stride 1, column stride d).
    Gemm(kDTypeOf<T>, rows, h.d, keys, {h.q + i0 * h.d, h.d, 1}, {h.k, 1, h.d}, s, keys, false);
    for (int64_t r = 0; r < rows; ++r) {
      T* row = s + r * keys;
      const int64_t visible = i0 + r + past + 1;
      Map(
          visible, row, [scale](auto d, auto x) { return hn::Mul(x, hn::Set(d, scale)); }, row);
      const T m = RowMax(row, visible);
      const T sum = SumExp(row, visible, m, row);
      const T inverse = T(1) / sum;
      Map(
          visible, row, [inverse](auto d, auto e) { return hn::Mul(e, hn::Set(d, inverse)); }, row);
      std::fill(row + visible, row + keys, T(0));
      lse[i0 + r] = m + std::log(sum);
    }
    // Y[i0:i0+rows] = P V[0:keys].
    Gemm(kDTypeOf<T>, rows, keys, h.d, {s, keys, 1}, {h.v, h.d, 1}, y + i0 * h.d, h.d, false);
  }
}

template <typename T>
void BackwardHead(const Head<T>& h, const T* y, const T* lse, const T* dy, T* dq, T* dk, T* dv) {
  const T scale = T(1) / std::sqrt(T(h.d));
  const int64_t past = h.tk - h.tq;
  thread_local std::vector<T> scratch;  // P and dP (then dS), each [kBlockRows, tk]
  scratch.resize(static_cast<size_t>(2 * kBlockRows * h.tk));
  T* p = scratch.data();
  T* ds = p + kBlockRows * h.tk;
  std::fill(dk, dk + h.tk * h.d, T(0));  // accumulated over the blocks below
  std::fill(dv, dv + h.tk * h.d, T(0));
  for (int64_t i0 = 0; i0 < h.tq; i0 += kBlockRows) {
    const int64_t rows = std::min(kBlockRows, h.tq - i0), keys = i0 + rows + past;
    const T* q_block = h.q + i0 * h.d;
    const T* dy_block = dy + i0 * h.d;
    Gemm(kDTypeOf<T>, rows, h.d, keys, {q_block, h.d, 1}, {h.k, 1, h.d}, p, keys, false);    // S
    Gemm(kDTypeOf<T>, rows, h.d, keys, {dy_block, h.d, 1}, {h.v, 1, h.d}, ds, keys, false);  // dP
    for (int64_t r = 0; r < rows; ++r) {
      T* p_row = p + r * keys;
      T* ds_row = ds + r * keys;
      const int64_t visible = i0 + r + past + 1;
      const T l = lse[i0 + r];
      // P = exp(scale S - lse); the argument is <= 0 up to rounding, hence the Min.
      Map(
          visible, p_row,
          [scale, l](auto d, auto x) {
            return ExpNonPositive(
                d, hn::Min(hn::MulSub(x, hn::Set(d, scale), hn::Set(d, l)), hn::Zero(d)));
          },
          p_row);
      const T* y_row = y + (i0 + r) * h.d;
      const T dot = Accumulate(
          h.d, dy_block + r * h.d, y_row, [](auto, auto a, auto b) { return hn::Mul(a, b); },
          [](T a, T b) { return a * b; });  // D = dY . Y
      // dS / sqrt(d) = P (dP - D) / sqrt(d): the scale of both dQ and dK, applied once.
      Map(
          visible, ds_row,
          [dot, scale](auto d, auto pv, auto g) {
            return hn::Mul(hn::Mul(pv, hn::Sub(g, hn::Set(d, dot))), hn::Set(d, scale));
          },
          p_row, ds_row);
      std::fill(p_row + visible, p_row + keys, T(0));
      std::fill(ds_row + visible, ds_row + keys, T(0));
    }
    // dQ[i0:i0+rows] = dS K[0:keys];  dK[0:keys] += dS^T Q;  dV[0:keys] += P^T dY.
    Gemm(kDTypeOf<T>, rows, keys, h.d, {ds, keys, 1}, {h.k, h.d, 1}, dq + i0 * h.d, h.d, false);
    Gemm(kDTypeOf<T>, keys, rows, h.d, {ds, 1, keys}, {q_block, h.d, 1}, dk, h.d, true);
    Gemm(kDTypeOf<T>, keys, rows, h.d, {p, 1, keys}, {dy_block, h.d, 1}, dv, h.d, true);
  }
}

// A head costs about tq tk d multiply-adds a GEMM (two forward, five backward): in the
// pool's units (thread_pool.h), tq tk d / 8 each.
inline int64_t HeadWork(int64_t tq, int64_t tk, int64_t d, int64_t gemms) {
  return gemms * tq * tk * d / 8;
}

void CausalAttentionForward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                            const void* q, const void* k, const void* v, void* y, void* lse) {
  DispatchFloat("causal_attention", dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(batch, HeadWork(tq, tk, d, 2), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const Head<T> h{
            tq, tk, d, At<T>(q, b * tq * d), At<T>(k, b * tk * d), At<T>(v, b * tk * d)};
        ForwardHead(h, At<T>(y, b * tq * d), At<T>(lse, b * tq));
      }
    });
  });
}

void CausalAttentionBackward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                             const void* q, const void* k, const void* v, const void* y,
                             const void* lse, const void* dy, void* dq, void* dk, void* dv) {
  DispatchFloat("causal_attention_backward", dtype, [&](auto type) {
    using T = decltype(type);
    ParallelForWork(batch, HeadWork(tq, tk, d, 5), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const Head<T> h{
            tq, tk, d, At<T>(q, b * tq * d), At<T>(k, b * tk * d), At<T>(v, b * tk * d)};
        BackwardHead(h, At<T>(y, b * tq * d), At<T>(lse, b * tq), At<T>(dy, b * tq * d),
                     At<T>(dq, b * tq * d), At<T>(dk, b * tk * d), At<T>(dv, b * tk * d));
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
                            const void* q, const void* k, const void* v, void* y, void* lse) {
  HWY_DYNAMIC_DISPATCH(CausalAttentionForward)(dtype, batch, tq, tk, d, q, k, v, y, lse);
}

void CausalAttentionBackward(DType dtype, int64_t batch, int64_t tq, int64_t tk, int64_t d,
                             const void* q, const void* k, const void* v, const void* y,
                             const void* lse, const void* dy, void* dq, void* dk, void* dv) {
  HWY_DYNAMIC_DISPATCH(CausalAttentionBackward)
  (dtype, batch, tq, tk, d, q, k, v, y, lse, dy, dq, dk, dv);
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
