#ifndef EMBER_OPTIM_SCHEDULE_H_
#define EMBER_OPTIM_SCHEDULE_H_

// Learning-rate schedules: the rate for step 0, 1, 2, ... (set it on each parameter
// group before Optimizer::Step). Arguments are checked when the schedule is made.

#include <cstdint>
#include <functional>

namespace ember::optim {

using LrSchedule = std::function<double(int64_t step)>;

LrSchedule ConstantLr(double lr);
// lr gamma^step.
LrSchedule ExponentialLr(double lr, double gamma);
// From `initial` at step 0 to `final` at step `steps`, linearly; `final` after that.
LrSchedule LinearLr(double initial, double final, int64_t steps);
// nanoGPT's: peak (step + 1) / warmup for the first `warmup` steps, then a half cosine
// from peak down to min_lr at step `total`, and min_lr after that.
LrSchedule WarmupCosineLr(double peak, double min_lr, int64_t warmup, int64_t total);

}  // namespace ember::optim

#endif  // EMBER_OPTIM_SCHEDULE_H_
