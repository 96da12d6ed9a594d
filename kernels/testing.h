#ifndef EMBER_KERNELS_TESTING_H_
#define EMBER_KERNELS_TESTING_H_

// For the kernels' tests, of either backend: run a check on every CPU SIMD target, not
// only the best one, and draw random inputs.

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "hwy/highway.h"
#include "hwy/targets.h"

namespace ember::kernels {

// Runs body(target name) once per SIMD target that this binary was compiled for and
// this CPU supports, with Highway's dispatch forced to that target; then restores
// normal dispatch.
inline void ForEachTarget(const std::function<void(const std::string&)>& body) {
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    body(hwy::TargetName(target));
  }
  hwy::SetSupportedTargetsForTest(0);
}

// n values uniform in [lo, hi), drawn in double and rounded to T (as Convert does).
template <typename T>
std::vector<T> RandomVector(int64_t n, double lo, double hi, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = Convert<T>(dist(rng));
  return v;
}

// bf16's unit roundoff: a result rounded once to bf16 is within this of the exact one,
// relative.
inline constexpr double kBf16Roundoff = 0x1p-8;

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_TESTING_H_
