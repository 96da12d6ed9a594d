#ifndef CONSUMER_MOVING_AVERAGE_H_
#define CONSUMER_MOVING_AVERAGE_H_

#include <cstdint>

#include "tensor/tensor.h"

// Means of every window of `width` consecutive elements of a 1-d f32 tensor, read
// through strided views of the input (no copy of the windows).
ember::Tensor MovingAverage(const ember::Tensor& series, int64_t width);

#endif  // CONSUMER_MOVING_AVERAGE_H_
