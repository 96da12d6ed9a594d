#include "kernels/cpu/simd.h"

#include <strings.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {

const char* SimdTarget() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {
namespace {

// Applies EMBER_SIMD before any kernel runs (a static initialiser; Highway chooses a
// target on the first dispatched call). Highway's targets are bits, a lower bit a
// better target, so capping at `target` disables the bits below it.
bool CapTargetFromEnvironment() {
  const char* env = std::getenv("EMBER_SIMD");
  if (env == nullptr || *env == '\0') return false;
  std::string names;
  for (int64_t targets = HWY_TARGETS; targets != 0; targets &= targets - 1) {
    const int64_t target = targets & -targets;
    if (strcasecmp(env, hwy::TargetName(target)) == 0) {
      hwy::DisableTargets(target - 1);
      return true;
    }
    names += std::string(" ") + hwy::TargetName(target);
  }
  std::fprintf(stderr, "EMBER_SIMD=%s: not a SIMD target of this build (it has:%s)\n", env,
               names.c_str());
  std::exit(1);
}
const bool capped_from_environment = CapTargetFromEnvironment();

}  // namespace

HWY_EXPORT(SimdTarget);

const char* SimdTarget() { return HWY_DYNAMIC_DISPATCH(SimdTarget)(); }

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
