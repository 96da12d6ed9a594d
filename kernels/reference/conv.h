#ifndef EMBER_KERNELS_REFERENCE_CONV_H_
#define EMBER_KERNELS_REFERENCE_CONV_H_

// float64 references for kernels/conv.h: the convolution's sums written directly
// over every output position and window tap (no im2col).

#include <cmath>
#include <cstdint>
#include <vector>

namespace ember::kernels::reference {

struct Conv2dShape {
  int64_t n, c, o, h, w, kh, kw, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t oh() const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
};

// Calls fn(n, o, c, oy, ox, i, j, input index) for every tap that reads the input.
template <typename Fn>
void ForEachTap(const Conv2dShape& s, Fn&& fn) {
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.o; ++o)
      for (int64_t oy = 0; oy < s.oh(); ++oy)
        for (int64_t ox = 0; ox < s.ow(); ++ox)
          for (int64_t c = 0; c < s.c; ++c)
            for (int64_t i = 0; i < s.kh; ++i)
              for (int64_t j = 0; j < s.kw; ++j) {
                const int64_t iy = oy * s.sh - s.ph + i * s.dh, ix = ox * s.sw - s.pw + j * s.dw;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                fn(n, o, c, oy, ox, i, j, ((n * s.c + c) * s.h + iy) * s.w + ix);
              }
}

// y [n, o, oh, ow] from x [n, c, h, w], w [o, c, kh, kw], b [o] (empty: none).
inline std::vector<double> Conv2d(const Conv2dShape& s, const std::vector<double>& x,
                                  const std::vector<double>& w, const std::vector<double>& b) {
  std::vector<double> y(s.n * s.o * s.oh() * s.ow(), 0.0);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.o; ++o)
      for (int64_t k = 0; k < s.oh() * s.ow(); ++k)
        y[(n * s.o + o) * s.oh() * s.ow() + k] = b.empty() ? 0 : b[o];
  ForEachTap(s, [&](int64_t n, int64_t o, int64_t c, int64_t oy, int64_t ox, int64_t i, int64_t j,
                    int64_t at) {
    y[((n * s.o + o) * s.oh() + oy) * s.ow() + ox] +=
        w[((o * s.c + c) * s.kh + i) * s.kw + j] * x[at];
  });
  return y;
}

struct Conv2dGrads {
  std::vector<double> dx, dw, db;
};

// Each tap's product w * x sends dy to both factors' gradients.
inline Conv2dGrads Conv2dBackward(const Conv2dShape& s, const std::vector<double>& x,
                                  const std::vector<double>& w, const std::vector<double>& dy) {
  Conv2dGrads g{std::vector<double>(x.size(), 0.0), std::vector<double>(w.size(), 0.0),
                std::vector<double>(s.o, 0.0)};
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t o = 0; o < s.o; ++o)
      for (int64_t k = 0; k < s.oh() * s.ow(); ++k)
        g.db[o] += dy[(n * s.o + o) * s.oh() * s.ow() + k];
  ForEachTap(s, [&](int64_t n, int64_t o, int64_t c, int64_t oy, int64_t ox, int64_t i, int64_t j,
                    int64_t at) {
    const double d = dy[((n * s.o + o) * s.oh() + oy) * s.ow() + ox];
    const int64_t wi = ((o * s.c + c) * s.kh + i) * s.kw + j;
    g.dw[wi] += d * x[at];
    g.dx[at] += d * w[wi];
  });
  return g;
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_CONV_H_
