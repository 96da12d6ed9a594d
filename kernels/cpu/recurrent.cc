// The fused LSTM and GRU cell steps (see recurrent.h) in Highway SIMD, compiled once per
// target. Rows (batch entries) are split among the pool's threads; within a row each
// equation is one Map over H elements (the row's few H-wide arrays stay in L1 between
// them).

#include "kernels/recurrent.h"

#include <cstring>

#include "kernels/cpu/internal/dispatch.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/recurrent.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
#include "kernels/cpu/internal/exp-inl.h"
#include "kernels/cpu/internal/map-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using internal::HWY_NAMESPACE::Map;
using internal::HWY_NAMESPACE::StableSigmoid;

// s (1 - s): the logistic function's derivative from its value.
template <class D, class V>
HWY_INLINE V SigmoidSlope(D d, V s) {
  return hn::Mul(s, hn::Sub(hn::Set(d, 1), s));
}
// 1 - t^2: tanh's derivative from its value.
template <class D, class V>
HWY_INLINE V TanhSlope(D d, V t) {
  return hn::NegMulAdd(t, t, hn::Set(d, 1));
}

// fn(first row, end row) over the batch's rows, each costing about `per_row` units.
template <typename Fn>
void ForRows(int64_t batch, int64_t per_row, const Fn& fn) {
  ParallelForWork(batch, per_row, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) fn(r);
  });
}

void LstmCellForward(DType dtype, int64_t batch, int64_t hidden, const void* gates_x,
                     const void* gates_h, const void* c, void* h_out, void* c_out,
                     void* workspace) {
  DispatchFloat("lstm_cell", dtype, [&](auto type) {
    using T = decltype(type);
    const int64_t H = hidden;
    ForRows(batch, 40 * H, [&](int64_t r) {
      const T* gx = At<T>(gates_x, r * 4 * H);
      const T* gh = At<T>(gates_h, r * 4 * H);
      T* ws = At<T>(workspace, r * 4 * H);  // i, f, g, o
      auto sigmoid_sum = [](auto d, auto a, auto b) { return StableSigmoid(d, hn::Add(a, b)); };
      Map(H, ws, sigmoid_sum, gx, gh);
      Map(H, ws + H, sigmoid_sum, gx + H, gh + H);
      Map(
          H, ws + 2 * H, [](auto d, auto a, auto b) { return hn::Tanh(d, hn::Add(a, b)); },
          gx + 2 * H, gh + 2 * H);
      Map(H, ws + 3 * H, sigmoid_sum, gx + 3 * H, gh + 3 * H);
      T* cn = At<T>(c_out, r * H);
      Map(
          H, cn,
          [](auto, auto f, auto cp, auto i, auto g) { return hn::MulAdd(f, cp, hn::Mul(i, g)); },
          ws + H, At<T>(c, r * H), ws, ws + 2 * H);
      Map(
          H, At<T>(h_out, r * H),
          [](auto d, auto o, auto cv) { return hn::Mul(o, hn::Tanh(d, cv)); }, ws + 3 * H, cn);
    });
  });
}

void LstmCellBackward(DType dtype, int64_t batch, int64_t hidden, const void* dh, const void* dc,
                      const void* c, const void* c_out, const void* workspace, void* dgates,
                      void* dc_prev) {
  DispatchFloat("lstm_cell_backward", dtype, [&](auto type) {
    using T = decltype(type);
    const int64_t H = hidden;
    ForRows(batch, 40 * H, [&](int64_t r) {
      const T* ws = At<T>(workspace, r * 4 * H);
      const T *i = ws, *f = ws + H, *g = ws + 2 * H, *o = ws + 3 * H;
      const T* gh = At<T>(dh, r * H);
      const T* cp = At<T>(c, r * H);
      const T* cn = At<T>(c_out, r * H);
      T* da = At<T>(dgates, r * 4 * H);
      T* dct = At<T>(dc_prev, r * H);  // dc* first, then dc* f
      // dc* = dc' + dh' o (1 - t^2)
      auto through_h = [](auto d, auto dhv, auto ov, auto cv) {
        return hn::Mul(hn::Mul(dhv, ov), TanhSlope(d, hn::Tanh(d, cv)));
      };
      if (dc != nullptr) {
        Map(
            H, dct,
            [&](auto d, auto dhv, auto ov, auto cv, auto dcv) {
              return hn::Add(dcv, through_h(d, dhv, ov, cv));
            },
            gh, o, cn, At<T>(dc, r * H));
      } else {
        Map(H, dct, through_h, gh, o, cn);
      }
      Map(
          H, da,
          [](auto d, auto dv, auto gv, auto iv) {
            return hn::Mul(hn::Mul(dv, gv), SigmoidSlope(d, iv));
          },
          dct, g, i);
      Map(
          H, da + H,
          [](auto d, auto dv, auto cv, auto fv) {
            return hn::Mul(hn::Mul(dv, cv), SigmoidSlope(d, fv));
          },
          dct, cp, f);
      Map(
          H, da + 2 * H,
          [](auto d, auto dv, auto iv, auto gv) {
            return hn::Mul(hn::Mul(dv, iv), TanhSlope(d, gv));
          },
          dct, i, g);
      Map(
          H, da + 3 * H,
          [](auto d, auto dhv, auto cv, auto ov) {
            return hn::Mul(hn::Mul(dhv, hn::Tanh(d, cv)), SigmoidSlope(d, ov));
          },
          gh, cn, o);
      Map(
          H, dct, [](auto, auto dv, auto fv) { return hn::Mul(dv, fv); }, dct, f);
    });
  });
}

void GruCellForward(DType dtype, int64_t batch, int64_t hidden, const void* gates_x,
                    const void* gates_h, const void* h, void* h_out, void* workspace) {
  DispatchFloat("gru_cell", dtype, [&](auto type) {
    using T = decltype(type);
    const int64_t H = hidden;
    ForRows(batch, 30 * H, [&](int64_t r) {
      const T* gx = At<T>(gates_x, r * 3 * H);
      const T* gh = At<T>(gates_h, r * 3 * H);
      T* ws = At<T>(workspace, r * 4 * H);  // r, z, n, h_n
      auto sigmoid_sum = [](auto d, auto a, auto b) { return StableSigmoid(d, hn::Add(a, b)); };
      Map(H, ws, sigmoid_sum, gx, gh);
      Map(H, ws + H, sigmoid_sum, gx + H, gh + H);
      std::memcpy(ws + 3 * H, gh + 2 * H, H * sizeof(T));
      Map(
          H, ws + 2 * H,
          [](auto d, auto xn, auto rv, auto hn_) { return hn::Tanh(d, hn::MulAdd(rv, hn_, xn)); },
          gx + 2 * H, ws, gh + 2 * H);
      // h' = (1 - z) n + z h = n + z (h - n)
      Map(
          H, At<T>(h_out, r * H),
          [](auto, auto nv, auto zv, auto hv) { return hn::MulAdd(zv, hn::Sub(hv, nv), nv); },
          ws + 2 * H, ws + H, At<T>(h, r * H));
    });
  });
}

void GruCellBackward(DType dtype, int64_t batch, int64_t hidden, const void* dh, const void* h,
                     const void* workspace, void* dgates_x, void* dgates_h, void* dh_prev) {
  DispatchFloat("gru_cell_backward", dtype, [&](auto type) {
    using T = decltype(type);
    const int64_t H = hidden;
    ForRows(batch, 30 * H, [&](int64_t r) {
      const T* ws = At<T>(workspace, r * 4 * H);
      const T *rv = ws, *z = ws + H, *n = ws + 2 * H, *hn_ = ws + 3 * H;
      const T* g = At<T>(dh, r * H);
      const T* hp = At<T>(h, r * H);
      T* dx = At<T>(dgates_x, r * 3 * H);
      T* dhg = At<T>(dgates_h, r * 3 * H);
      Map(
          H, dx + 2 * H,
          [](auto d, auto gv, auto zv, auto nv) {
            return hn::Mul(hn::Mul(gv, hn::Sub(hn::Set(d, 1), zv)), TanhSlope(d, nv));
          },
          g, z, n);
      Map(
          H, dhg + 2 * H, [](auto, auto dn, auto r_) { return hn::Mul(dn, r_); }, dx + 2 * H, rv);
      Map(
          H, dx,
          [](auto d, auto dn, auto hnv, auto r_) {
            return hn::Mul(hn::Mul(dn, hnv), SigmoidSlope(d, r_));
          },
          dx + 2 * H, hn_, rv);
      Map(
          H, dx + H,
          [](auto d, auto gv, auto hv, auto nv, auto zv) {
            return hn::Mul(hn::Mul(gv, hn::Sub(hv, nv)), SigmoidSlope(d, zv));
          },
          g, hp, n, z);
      std::memcpy(dhg, dx, 2 * H * sizeof(T));
      Map(
          H, At<T>(dh_prev, r * H), [](auto, auto gv, auto zv) { return hn::Mul(gv, zv); }, g, z);
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(LstmCellForward);
HWY_EXPORT(LstmCellBackward);
HWY_EXPORT(GruCellForward);
HWY_EXPORT(GruCellBackward);

void LstmCellForward(DType dtype, int64_t batch, int64_t hidden, const void* gates_x,
                     const void* gates_h, const void* c, void* h_out, void* c_out,
                     void* workspace) {
  HWY_DYNAMIC_DISPATCH(LstmCellForward)
  (dtype, batch, hidden, gates_x, gates_h, c, h_out, c_out, workspace);
}

void LstmCellBackward(DType dtype, int64_t batch, int64_t hidden, const void* dh, const void* dc,
                      const void* c, const void* c_out, const void* workspace, void* dgates,
                      void* dc_prev) {
  HWY_DYNAMIC_DISPATCH(LstmCellBackward)
  (dtype, batch, hidden, dh, dc, c, c_out, workspace, dgates, dc_prev);
}

void GruCellForward(DType dtype, int64_t batch, int64_t hidden, const void* gates_x,
                    const void* gates_h, const void* h, void* h_out, void* workspace) {
  HWY_DYNAMIC_DISPATCH(GruCellForward)(dtype, batch, hidden, gates_x, gates_h, h, h_out, workspace);
}

void GruCellBackward(DType dtype, int64_t batch, int64_t hidden, const void* dh, const void* h,
                     const void* workspace, void* dgates_x, void* dgates_h, void* dh_prev) {
  HWY_DYNAMIC_DISPATCH(GruCellBackward)
  (dtype, batch, hidden, dh, h, workspace, dgates_x, dgates_h, dh_prev);
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
