// Convolution (see conv.h) in Highway, compiled once per SIMD target:
// the convolution is the blocked GEMM of internal/gemm-inl.h with the image unrolled
// straight into its packed panels (no separate im2col buffer).

#include "kernels/conv.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/internal/dispatch.h"
#include "kernels/cpu/internal/window.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on
#include "kernels/cpu/internal/gemm-inl.h"
#include "kernels/cpu/internal/map-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
namespace gemm = internal::HWY_NAMESPACE;
using internal::IndexRange;
using internal::InsideRange;

// Parts the backward's sum over images is cut into: fixed, so that the order of the
// sum (and the bits of dw, db) do not depend on the thread count.
constexpr int64_t kBackwardParts = 16;

// The unrolled image ("im2col"): columns [c kh kw, oh ow], whose row t = (ch kh + i) kw
// + j holds, for each output position q = oy ow + ox, the input that q multiplies by
// w[:, ch, i, j] (0 in the padding). A Tap is what a row needs to know of t: its plane,
// kernel row i, the input column x0 of ox = 0, the output columns whose input lies
// inside the row, and its shift and mask (below). Unrolling holds the taps and the
// output size, computed once per call (out_h and out_w divide, which costs tens of
// cycles a row).
//
// Stride 1 and "same" width (every layer of the CNN): output position q of a tap reads
// input q + shift of its plane, so an unrolled row is the plane shifted, except where
// the window hangs over an edge and would read a neighbouring row or plane instead of
// padding. inside[mask + q] is 1 where q's input lies inside the plane, else 0 (a mask
// per kernel tap (i, j), shared by the channels), so a row is a load and a select per
// vector.
struct Tap {
  int64_t plane, i, x0;
  IndexRange valid;
  int64_t shift, mask;
};
template <typename T>
struct Unrolling {
  Window2d g;
  int64_t oh, ow, image, total;  // entries of an image [c, H, W], and of x
  bool same_width;               // stride 1 and ow == W
  std::vector<Tap> taps;
  std::vector<T> inside;  // same width: [kh kw, oh ow]
};
template <typename T>
Unrolling<T> UnrollingOf(int64_t n, int64_t c, const Window2d& g) {
  const int64_t area = g.height * g.width;
  Unrolling<T> u{g, g.out_h(), g.out_w(), c * area, n * c * area, false, {}, {}};
  u.same_width = g.stride_h == 1 && g.stride_w == 1 && u.ow == g.width;
  const int64_t l = u.oh * u.ow;
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const int64_t x0 = j * g.dilation_w - g.pad_w;
        u.taps.push_back({ch * area, i, x0, InsideRange(x0, u.ow, g.stride_w, g.width),
                          (i * g.dilation_h - g.pad_h) * g.width + x0, (i * g.kernel_w + j) * l});
      }
    }
  }
  if (u.same_width) {
    u.inside.resize(g.kernel_h * g.kernel_w * l);
    T* inside = u.inside.data();
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const IndexRange cols = InsideRange(j * g.dilation_w - g.pad_w, u.ow, 1, g.width);
        for (int64_t oy = 0; oy < u.oh; ++oy) {
          const int64_t iy = oy - g.pad_h + i * g.dilation_h;
          for (int64_t ox = 0; ox < u.ow; ++ox) {
            *inside++ = iy >= 0 && iy < g.height && ox >= cols.begin && ox < cols.end ? T(1) : T(0);
          }
        }
      }
    }
  }
  return u;
}

// The positions q in [q0, q1) whose entry base + q lies in [0, size): where a shifted
// row may load (or add) whole vectors; its mask zeroes what lies outside the plane.
IndexRange Addressable(int64_t base, int64_t size, int64_t q0, int64_t q1) {
  const int64_t begin = std::clamp(-base, q0, q1);
  return {begin, std::clamp(size - base, begin, q1)};
}

// Writes entries [q0, q1) of the unrolled row `tap` of image s of x to out[0, q1 - q0).
template <typename T>
void UnrolledRow(const Unrolling<T>& u, const T* x, int64_t s, const Tap& tap, int64_t q0,
                 int64_t q1, T* out) {
  const Window2d& g = u.g;
  const int64_t ow = u.ow, i = tap.i, x0 = tap.x0;
  const IndexRange valid = tap.valid;
  if (u.same_width) {
    const hn::ScalableTag<T> d;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    const int64_t base = s * u.image + tap.plane + tap.shift;  // the entry of x position 0 reads
    const T* inside = u.inside.data() + tap.mask;
    const IndexRange loads = Addressable(base, u.total, q0, q1);  // whole vectors stay in x
    auto one = [&](int64_t q) { out[q - q0] = inside[q] != T(0) ? x[base + q] : T(0); };
    int64_t q = q0;
    for (; q < loads.begin; ++q) one(q);
    for (; q + lanes <= loads.end; q += lanes) {
      const auto keep = hn::Ne(hn::LoadU(d, inside + q), hn::Zero(d));
      hn::StoreU(hn::IfThenElseZero(keep, hn::LoadU(d, x + (base + q))), d, out + q - q0);
    }
    for (; q < q1; ++q) one(q);
    return;
  }
  const T* plane = x + s * u.image + tap.plane;
  // Output row by output row (one division, at the start: they cost tens of cycles).
  for (int64_t q = q0, oy = q0 / ow, ox0 = q0 % ow; q < q1; ++oy, ox0 = 0) {
    const int64_t ox1 = std::min(ow, ox0 + q1 - q);
    T* dst = out + (q - q0) - ox0;  // dst[ox] is position (oy, ox)
    q += ox1 - ox0;
    const int64_t iy = oy * g.stride_h - g.pad_h + i * g.dilation_h;
    // Plain loops: rows are a few dozen entries, too short for library calls.
    if (iy < 0 || iy >= g.height) {
      for (int64_t ox = ox0; ox < ox1; ++ox) dst[ox] = T(0);
      continue;
    }
    const T* row = plane + iy * g.width + x0;
    const int64_t b = std::clamp(valid.begin, ox0, ox1), e = std::clamp(valid.end, b, ox1);
    for (int64_t ox = ox0; ox < b; ++ox) dst[ox] = T(0);
    for (int64_t ox = b; ox < e; ++ox) dst[ox] = row[ox * g.stride_w];
    for (int64_t ox = e; ox < ox1; ++ox) dst[ox] = T(0);
  }
}

// im2col's adjoint: image [c, H, W] += each column entry at the position it came from.
// A same-width row adds as a shifted row of vectors, its mask zeroing the entries whose
// input lies outside the plane, over the positions whose target lies in this image (the
// next image's is another thread's).
template <typename T>
void Col2Im(const Unrolling<T>& u, const T* columns, T* image) {
  const Window2d& g = u.g;
  const std::vector<Tap>& taps = u.taps;
  const int64_t oh = u.oh, ow = u.ow;
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t t = 0; t < static_cast<int64_t>(taps.size()); ++t) {
    const T* in = columns + t * oh * ow;
    const int64_t i = taps[t].i, x0 = taps[t].x0;
    const IndexRange valid = taps[t].valid;
    if (u.same_width) {
      const int64_t base = taps[t].plane + taps[t].shift;  // the entry position 0 adds to
      const T* inside = u.inside.data() + taps[t].mask;
      const IndexRange adds = Addressable(base, u.image, 0, oh * ow);
      int64_t q = adds.begin;
      for (; q + lanes <= adds.end; q += lanes) {
        const auto keep = hn::Ne(hn::LoadU(d, inside + q), hn::Zero(d));
        T* to = image + (base + q);
        hn::StoreU(hn::Add(hn::LoadU(d, to), hn::IfThenElseZero(keep, hn::LoadU(d, in + q))), d,
                   to);
      }
      for (; q < adds.end; ++q) {
        if (inside[q] != T(0)) image[base + q] += in[q];
      }
      continue;
    }
    T* plane = image + taps[t].plane;
    for (int64_t oy = 0; oy < oh; ++oy) {
      const int64_t iy = oy * g.stride_h - g.pad_h + i * g.dilation_h;
      if (iy < 0 || iy >= g.height) continue;
      T* row = plane + iy * g.width;
      const T* from = in + oy * ow;
      for (int64_t ox = valid.begin; ox < valid.end; ++ox) row[x0 + ox * g.stride_w] += from[ox];
    }
  }
}

// y[s] [o, l] = b + w [o, ck] . unrolled(x[s]) [ck, l], one image per task: the weights
// packed once for all images, each image unrolled row by row (one tap at a time) into
// the GEMM's packed panels of B.
template <typename T>
void ConvolveImages(int64_t n, int64_t c, int64_t o, const Window2d& g, const T* x, const T* w,
                    const T* b, T* y) {
  const int64_t ck = c * g.kernel_h * g.kernel_w, l = g.out_h() * g.out_w(),
                nr = gemm::PanelWidth<T>();
  const Unrolling<T> unrolling = UnrollingOf<T>(n, c, g);
  const hwy::AlignedFreeUniquePtr<T[]> packed_w = hwy::AllocateAligned<T>(gemm::PaddedRows(o) * ck);
  gemm::PackAllA(w, ck, 1, o, ck, packed_w.get());
  ParallelForWork(
      n, o * ck * l / 8, [&](int64_t begin, int64_t end) {  // an image's multiply-adds / 8
        std::vector<T> row(gemm::BlockColumns<T>());
        for (int64_t s = begin; s < end; ++s) {
          gemm::GemmBlocked(
              o, ck, l, gemm::PrepackedA(packed_w.get(), o),
              [&](int64_t pc, int64_t kc, int64_t jc, int64_t nc, T* packed) {
                for (int64_t p = 0; p < kc; ++p) {
                  UnrolledRow(unrolling, x, s, unrolling.taps[pc + p], jc, jc + nc, row.data());
                  gemm::PackBRow(row.data(), 1, p, kc, nc, nr, packed);
                }
              },
              y + s * o * l, l, /*accumulate=*/false, b);
        }
      });
}

// Per image s, summed over images in kBackwardParts fixed parts:
//   dw [o, ck] += dy[s] [o, l] . unrolled(x[s])^T [l, ck]  (B packed straight from the image)
//   db [o]     += sum over l of dy[s]
//   dx[s]       = col2im(w^T [ck, o] . dy[s] [o, l])       (w^T packed once)
template <typename T>
void ConvolutionGradients(int64_t n, int64_t c, int64_t o, const Window2d& g, const T* x,
                          const T* w, const T* dy, T* dx, T* dw, T* db) {
  const int64_t ck = c * g.kernel_h * g.kernel_w, l = g.out_h() * g.out_w();
  const int64_t image = c * g.height * g.width, nr = gemm::PanelWidth<T>();
  if (n == 0) {  // no images: zero gradients
    std::fill(dw, dw + o * ck, T(0));
    if (db) std::fill(db, db + o, T(0));
    return;
  }
  const int64_t parts = std::min(n, kBackwardParts);
  // Each part's first image writes its dw part (no zeroing pass over them).
  const hwy::AlignedFreeUniquePtr<T[]> dw_parts = hwy::AllocateAligned<T>(parts * o * ck);
  std::vector<T> db_parts(db ? parts * o : 0, T(0));
  const Unrolling<T> unrolling = UnrollingOf<T>(n, c, g);
  hwy::AlignedFreeUniquePtr<T[]> packed_wt;
  if (dx) {
    packed_wt = hwy::AllocateAligned<T>(gemm::PaddedRows(ck) * o);
    gemm::PackAllA(w, 1, ck, ck, o, packed_wt.get());
  }
  // A part's work: two products of o ck l multiply-adds per image (dw, dx), / 8 each.
  ParallelForWork(parts, (n / parts) * o * ck * l / 4, [&](int64_t begin, int64_t end) {
    // Unrolled rows of a lane-count group of taps, transposed into B's panels together.
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<T>()));
    std::vector<T> rows(lanes * gemm::BlockDepth<T>());
    const hwy::AlignedFreeUniquePtr<T[]> dcolumns = dx ? hwy::AllocateAligned<T>(ck * l) : nullptr;
    for (int64_t part = begin; part < end; ++part) {
      const int64_t first = part * n / parts;
      for (int64_t s = first; s < (part + 1) * n / parts; ++s) {
        const T* g_out = dy + s * o * l;  // [o, l]
        T* const packed_dy = gemm::PackBuffer<T>(1, gemm::PaddedRows(o) * l);
        gemm::PackAllA(g_out, l, 1, o, l, packed_dy);
        gemm::GemmBlocked(
            o, l, ck, gemm::PrepackedA(packed_dy, o),
            [&](int64_t pc, int64_t kc, int64_t jc, int64_t nc, T* packed) {
              // Column jc + j of B: positions [pc, pc + kc) of unrolled row jc + j.
              for (int64_t j0 = 0; j0 < nc; j0 += lanes) {
                const int64_t count = std::min(lanes, nc - j0);
                for (int64_t j = 0; j < count; ++j) {
                  UnrolledRow(unrolling, x, s, unrolling.taps[jc + j0 + j], pc, pc + kc,
                              rows.data() + j * kc);
                }
                gemm::PackBColumns(rows.data(), kc, j0, count, kc, nr, packed);
              }
              gemm::PadLastPanel(kc, nc, nr, packed);
            },
            dw_parts.get() + part * o * ck, ck, /*accumulate=*/s > first);
        for (int64_t oc = 0; db && oc < o;
             ++oc) {  // Accumulate over one array: f passes it through
          const T* r = g_out + oc * l;
          db_parts[part * o + oc] += internal::HWY_NAMESPACE::Accumulate(
              l, r, r, [](auto, auto v, auto) { return v; }, [](T v, T) { return v; });
        }
        if (dx) {
          gemm::GemmBlocked(ck, o, l, gemm::PrepackedA(packed_wt.get(), ck),
                            gemm::StridedB(g_out, l, 1), dcolumns.get(), l, /*accumulate=*/false);
          std::fill(dx + s * image, dx + (s + 1) * image, T(0));
          Col2Im(unrolling, dcolumns.get(), dx + s * image);
        }
      }
    }
  });
  // The parts summed in order.
  std::copy(dw_parts.get(), dw_parts.get() + o * ck, dw);
  for (int64_t part = 1; part < parts; ++part) {
    for (int64_t k = 0; k < o * ck; ++k) dw[k] += dw_parts[part * o * ck + k];
  }
  if (db) std::fill(db, db + o, T(0));
  for (int64_t part = 0; db && part < parts; ++part) {
    for (int64_t oc = 0; oc < o; ++oc) db[oc] += db_parts[part * o + oc];
  }
}

void Conv2dForward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                   const void* x, const void* w, const void* b, void* y) {
  DispatchFloat("conv2d", dtype, [&](auto type) {
    using T = decltype(type);
    ConvolveImages(n, c, o, window, At<T>(x), At<T>(w), At<T>(b), At<T>(y));
  });
}

void Conv2dBackward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                    const void* x, const void* w, const void* dy, void* dx, void* dw, void* db) {
  DispatchFloat("conv2d_backward", dtype, [&](auto type) {
    using T = decltype(type);
    ConvolutionGradients(n, c, o, window, At<T>(x), At<T>(w), At<T>(dy), At<T>(dx), At<T>(dw),
                         At<T>(db));
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(Conv2dForward);
HWY_EXPORT(Conv2dBackward);

void Conv2dForward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                   const void* x, const void* w, const void* b, void* y) {
  HWY_DYNAMIC_DISPATCH(Conv2dForward)(dtype, n, c, o, window, x, w, b, y);
}

void Conv2dBackward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                    const void* x, const void* w, const void* dy, void* dx, void* dw, void* db) {
  HWY_DYNAMIC_DISPATCH(Conv2dBackward)(dtype, n, c, o, window, x, w, dy, dx, dw, db);
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
