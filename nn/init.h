#ifndef EMBER_NN_INIT_H_
#define EMBER_NN_INIT_H_

// Initialisers (torch.nn.init): each overwrites a tensor in place from `gen`. Fans
// follow PyTorch: for a weight [out, in, *kernel], fan_in = in * prod(kernel) and
// fan_out = out * prod(kernel).

#include <cstdint>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::nn {

class Module;

enum class FanMode { kFanIn, kFanOut };

void InitUniform(const Tensor& t, double low, double high, Generator& gen = DefaultGenerator());
void InitNormal(const Tensor& t, double mean, double std, Generator& gen = DefaultGenerator());
void InitZeros(const Tensor& t);
void InitOnes(const Tensor& t);
// U(-b, b), b = gain sqrt(6 / (fan_in + fan_out)).
void InitXavierUniform(const Tensor& t, double gain = 1, Generator& gen = DefaultGenerator());
// N(0, s^2), s = gain sqrt(2 / (fan_in + fan_out)).
void InitXavierNormal(const Tensor& t, double gain = 1, Generator& gen = DefaultGenerator());
// For a leaky ReLU of negative slope a (0: ReLU): gain = sqrt(2 / (1 + a^2)),
// U(-b, b) with b = gain sqrt(3 / fan), or N(0, (gain / sqrt(fan))^2).
void InitKaimingUniform(const Tensor& t, double a = 0, FanMode mode = FanMode::kFanIn,
                        Generator& gen = DefaultGenerator());
void InitKaimingNormal(const Tensor& t, double a = 0, FanMode mode = FanMode::kFanIn,
                       Generator& gen = DefaultGenerator());
}  // namespace ember::nn

#endif  // EMBER_NN_INIT_H_
