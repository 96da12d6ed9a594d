#include "nn/init.h"

#include <cmath>
#include <string>
#include <utility>

#include "autograd/engine.h"
#include "base/error.h"
#include "nn/module.h"
#include "tensor/creation.h"

namespace ember::nn {
namespace {

std::pair<double, double> Fans(const Tensor& t, const char* op) {
  EMBER_CHECK(t.dim() >= 2, op, ": fans need a weight of at least 2 dimensions, got shape ",
              ShapeToString(t.shape()));
  const double receptive = static_cast<double>(t.numel() / (t.size(0) * t.size(1)));
  return {t.size(1) * receptive, t.size(0) * receptive};
}

double KaimingStd(const Tensor& t, double a, FanMode mode, const char* op) {
  const auto [fan_in, fan_out] = Fans(t, op);
  return std::sqrt(2.0 / (1 + a * a)) / std::sqrt(mode == FanMode::kFanIn ? fan_in : fan_out);
}

// Writes `values` into t without recording (t is usually a parameter).
void Overwrite(const Tensor& t, const Tensor& values) {
  autograd::NoGradGuard no_grad;
  t.CopyFrom(values);
}

}  // namespace

void InitUniform(const Tensor& t, double low, double high, Generator& gen) {
  Overwrite(t, Uniform(t.shape(), low, high, gen, t.dtype()));
}

void InitNormal(const Tensor& t, double mean, double std, Generator& gen) {
  Overwrite(t, Normal(t.shape(), mean, std, gen, t.dtype()));
}

void InitZeros(const Tensor& t) { t.Fill(0); }
void InitOnes(const Tensor& t) { t.Fill(1); }

void InitXavierUniform(const Tensor& t, double gain, Generator& gen) {
  const auto [fan_in, fan_out] = Fans(t, "xavier_uniform");
  const double bound = gain * std::sqrt(6.0 / (fan_in + fan_out));
  InitUniform(t, -bound, bound, gen);
}

void InitXavierNormal(const Tensor& t, double gain, Generator& gen) {
  const auto [fan_in, fan_out] = Fans(t, "xavier_normal");
  InitNormal(t, 0, gain * std::sqrt(2.0 / (fan_in + fan_out)), gen);
}

void InitKaimingUniform(const Tensor& t, double a, FanMode mode, Generator& gen) {
  const double bound = std::sqrt(3.0) * KaimingStd(t, a, mode, "kaiming_uniform");
  InitUniform(t, -bound, bound, gen);
}

void InitKaimingNormal(const Tensor& t, double a, FanMode mode, Generator& gen) {
  InitNormal(t, 0, KaimingStd(t, a, mode, "kaiming_normal"), gen);
}

}  // namespace ember::nn
