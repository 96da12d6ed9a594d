#ifndef EMBER_KERNELS_REFERENCE_POOL_H_
#define EMBER_KERNELS_REFERENCE_POOL_H_

// float64 reference for kernels/pool.h: the maximum of every window, tap by tap.

#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/reference/conv.h"

namespace ember::kernels::reference {

// Max over each window of planes [p, h, w] (the shape's n * c planes; o, kh, kw of s
// describe the window), with the index iy * w + ix of the first maximum.
inline std::vector<double> MaxPool2d(const Conv2dShape& s, const std::vector<double>& x,
                                     std::vector<int64_t>* argmax) {
  std::vector<double> y;
  argmax->clear();
  for (int64_t p = 0; p < s.n * s.c; ++p)
    for (int64_t oy = 0; oy < s.oh(); ++oy)
      for (int64_t ox = 0; ox < s.ow(); ++ox) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t at = -1;
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t j = 0; j < s.kw; ++j) {
            const int64_t iy = oy * s.sh - s.ph + i * s.dh, ix = ox * s.sw - s.pw + j * s.dw;
            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
            const double v = x[(p * s.h + iy) * s.w + ix];
            if (at < 0 || v > best) best = v, at = iy * s.w + ix;
          }
        y.push_back(best);
        argmax->push_back(at);
      }
  return y;
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_POOL_H_
