#include "optim/schedule.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace ember::optim {

LrSchedule ConstantLr(double lr) {
  EMBER_CHECK(lr >= 0, "constant_lr: negative lr ", lr);
  return [lr](int64_t) { return lr; };
}

LrSchedule ExponentialLr(double lr, double gamma) {
  EMBER_CHECK(lr >= 0 && gamma > 0, "exponential_lr: need lr >= 0 and gamma > 0, got ", lr, " and ",
              gamma);
  return [lr, gamma](int64_t step) { return lr * std::pow(gamma, static_cast<double>(step)); };
}

LrSchedule LinearLr(double initial, double final, int64_t steps) {
  EMBER_CHECK(initial >= 0 && final >= 0 && steps > 0, "linear_lr: need rates >= 0 and steps > 0, ",
              "got ", initial, ", ", final, " and ", steps);
  return [=](int64_t step) {
    const double t = std::min(1.0, static_cast<double>(step) / static_cast<double>(steps));
    return initial + (final - initial) * t;
  };
}

LrSchedule WarmupCosineLr(double peak, double min_lr, int64_t warmup, int64_t total) {
  EMBER_CHECK(peak >= min_lr && min_lr >= 0 && warmup >= 0 && total > warmup,
              "warmup_cosine_lr: need peak >= min_lr >= 0 and 0 <= warmup < total, got ", peak,
              ", ", min_lr, ", ", warmup, ", ", total);
  return [=](int64_t step) {
    if (step < warmup) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
    if (step >= total) return min_lr;
    const double progress =
        static_cast<double>(step - warmup) / static_cast<double>(total - warmup);
    return min_lr + 0.5 * (1 + std::cos(M_PI * progress)) * (peak - min_lr);
  };
}

}  // namespace ember::optim
