#ifndef EMBER_KERNELS_CPU_INTERNAL_FOR_EACH_TARGET_H_
#define EMBER_KERNELS_CPU_INTERNAL_FOR_EACH_TARGET_H_

// For kernel tests: run a check on every SIMD target, not only the best one.

#include <functional>
#include <string>

#include "hwy/highway.h"
#include "hwy/targets.h"

namespace ember::kernels::cpu::internal {

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

}  // namespace ember::kernels::cpu::internal

#endif  // EMBER_KERNELS_CPU_INTERNAL_FOR_EACH_TARGET_H_
