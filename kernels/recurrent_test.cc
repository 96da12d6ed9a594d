// The fused LSTM and GRU cell steps: one table of cases on both backends
// (kernels/cuda/internal/backends.h) and every CPU SIMD target, against
// kernels/reference/recurrent.h's equations and their chain-rule gradients; the CUDA
// half skips, saying why, without a GPU.

#include "kernels/recurrent.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/reference/recurrent.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

using cuda::internal::ForEachPathAndFloat;

EMBER_BACKEND_TEST_SUITE(RecurrentTest);

// Batch and hidden sizes: one unit, widths below, at and above a vector, a batch of
// many rows, and large pre-activations (saturated gates: the sigmoid must not overflow).
struct Case {
  int64_t batch, hidden;
  double scale;  // the gate inputs are uniform in [-scale, scale)
};
const Case kCases[] = {{1, 1, 2}, {3, 7, 2}, {2, 16, 2}, {5, 37, 3}, {33, 64, 2}, {2, 9, 60}};

// |got - want| within a few ulps of T, relative to the larger of |want| and 1 (every
// value is a product of a few numbers of size <= 1 and an activation).
template <typename T>
void ExpectClose(const std::vector<T>& got, const std::vector<long double>& want,
                 const char* what) {
  const double tolerance = 64 * std::numeric_limits<T>::epsilon();
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    const double scale = std::max<double>(1.0, std::fabs(static_cast<double>(want[k])));
    ASSERT_NEAR(got[k], static_cast<double>(want[k]), tolerance * scale) << what << " " << k;
  }
}

TYPED_TEST(RecurrentTest, LstmMatchesTheReference) {
  using B = TypeParam;
  ForEachPathAndFloat<B>([&](const std::string& path, auto type) {
    using T = decltype(type);
    std::mt19937 rng(21);
    for (const Case& c : kCases) {
      SCOPED_TRACE(path + " " + std::string(DTypeName(DTypeOf<T>::value)) + " batch " +
                   std::to_string(c.batch) + " hidden " + std::to_string(c.hidden));
      const int64_t n = c.batch * c.hidden, H = c.hidden;
      const auto gx = RandomVector<T>(4 * n, -c.scale, c.scale, rng);
      const auto gh = RandomVector<T>(4 * n, -c.scale, c.scale, rng);
      const auto cp = RandomVector<T>(n, -2, 2, rng);
      const auto dh = RandomVector<T>(n, -1, 1, rng);
      const auto dc = RandomVector<T>(n, -1, 1, rng);
      const typename B::Buffer bgx(gx), bgh(gh), bc(cp), bdh(dh), bdc(dc), h_out(n * sizeof(T)),
          c_out(n * sizeof(T)), ws(4 * n * sizeof(T)), dgates(4 * n * sizeof(T)),
          dc_prev(n * sizeof(T));
      B::LstmCellForward(DTypeOf<T>::value, c.batch, H, bgx.data(), bgh.data(), bc.data(),
                         h_out.data(), c_out.data(), ws.data());
      std::vector<long double> want_h(n), want_c(n), want_da(4 * n), want_dc(n), want_da0(4 * n),
          want_dc0(n);
      for (int64_t b = 0; b < c.batch; ++b) {
        for (int64_t j = 0; j < H; ++j) {
          const int64_t k = b * H + j, row = b * 4 * H + j;
          long double a[4];
          for (int q = 0; q < 4; ++q) {
            a[q] = static_cast<long double>(gx[row + q * H]) + gh[row + q * H];
          }
          const reference::LstmUnit u = reference::Lstm(a[0], a[1], a[2], a[3], cp[k]);
          want_h[k] = u.h;
          want_c[k] = u.c;
          for (bool with_dc : {true, false}) {
            const reference::LstmGrad g =
                reference::LstmBackward(a[0], a[1], a[2], a[3], cp[k], dh[k], with_dc ? dc[k] : 0);
            auto& da = with_dc ? want_da : want_da0;
            da[row] = g.da_i;
            da[row + H] = g.da_f;
            da[row + 2 * H] = g.da_g;
            da[row + 3 * H] = g.da_o;
            (with_dc ? want_dc : want_dc0)[k] = g.dc;
          }
        }
      }
      ExpectClose(h_out.template ToHost<T>(), want_h, "h'");
      ExpectClose(c_out.template ToHost<T>(), want_c, "c'");
      B::LstmCellBackward(DTypeOf<T>::value, c.batch, H, bdh.data(), bdc.data(), bc.data(),
                          c_out.data(), ws.data(), dgates.data(), dc_prev.data());
      ExpectClose(dgates.template ToHost<T>(), want_da, "dgates");
      ExpectClose(dc_prev.template ToHost<T>(), want_dc, "dc");
      B::LstmCellBackward(DTypeOf<T>::value, c.batch, H, bdh.data(), nullptr, bc.data(),
                          c_out.data(), ws.data(), dgates.data(), dc_prev.data());
      ExpectClose(dgates.template ToHost<T>(), want_da0, "dgates without dc'");
      ExpectClose(dc_prev.template ToHost<T>(), want_dc0, "dc without dc'");
    }
  });
}

TYPED_TEST(RecurrentTest, GruMatchesTheReference) {
  using B = TypeParam;
  ForEachPathAndFloat<B>([&](const std::string& path, auto type) {
    using T = decltype(type);
    std::mt19937 rng(22);
    for (const Case& c : kCases) {
      SCOPED_TRACE(path + " " + std::string(DTypeName(DTypeOf<T>::value)) + " batch " +
                   std::to_string(c.batch) + " hidden " + std::to_string(c.hidden));
      const int64_t n = c.batch * c.hidden, H = c.hidden;
      const auto gx = RandomVector<T>(3 * n, -c.scale, c.scale, rng);
      const auto gh = RandomVector<T>(3 * n, -c.scale, c.scale, rng);
      const auto h = RandomVector<T>(n, -1, 1, rng);
      const auto dh = RandomVector<T>(n, -1, 1, rng);
      const typename B::Buffer bgx(gx), bgh(gh), bh(h), bdh(dh), h_out(n * sizeof(T)),
          ws(4 * n * sizeof(T)), dx(3 * n * sizeof(T)), dhg(3 * n * sizeof(T)),
          dh_prev(n * sizeof(T));
      B::GruCellForward(DTypeOf<T>::value, c.batch, H, bgx.data(), bgh.data(), bh.data(),
                        h_out.data(), ws.data());
      B::GruCellBackward(DTypeOf<T>::value, c.batch, H, bdh.data(), bh.data(), ws.data(), dx.data(),
                         dhg.data(), dh_prev.data());
      std::vector<long double> want_h(n), want_dx(3 * n), want_dhg(3 * n), want_dh(n);
      for (int64_t b = 0; b < c.batch; ++b) {
        for (int64_t j = 0; j < H; ++j) {
          const int64_t k = b * H + j, row = b * 3 * H + j;
          const long double xr = gx[row], xz = gx[row + H], xn = gx[row + 2 * H];
          const long double hr = gh[row], hz = gh[row + H], hn = gh[row + 2 * H];
          want_h[k] = reference::Gru(xr, xz, xn, hr, hz, hn, h[k]);
          const reference::GruGrad g = reference::GruBackward(xr, xz, xn, hr, hz, hn, h[k], dh[k]);
          want_dx[row] = want_dhg[row] = g.dx_r;
          want_dx[row + H] = want_dhg[row + H] = g.dx_z;
          want_dx[row + 2 * H] = g.dx_n;
          want_dhg[row + 2 * H] = g.dh_n;
          want_dh[k] = g.dh;
        }
      }
      ExpectClose(h_out.template ToHost<T>(), want_h, "h'");
      ExpectClose(dx.template ToHost<T>(), want_dx, "dgates_x");
      ExpectClose(dhg.template ToHost<T>(), want_dhg, "dgates_h");
      ExpectClose(dh_prev.template ToHost<T>(), want_dh, "dh");
    }
  });
}

}  // namespace
}  // namespace ember::kernels
