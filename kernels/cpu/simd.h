#ifndef EMBER_KERNELS_CPU_SIMD_H_
#define EMBER_KERNELS_CPU_SIMD_H_

namespace ember::kernels::cpu {

// The SIMD target ember's kernels run ("AVX3_ZEN4", "AVX3", "AVX2", ...: Highway's
// name): the best this CPU supports, at most EMBER_SIMD when that environment variable
// names one. EMBER_SIMD=AVX2 runs an AVX-512 machine as an AVX2-only one, so that both
// kinds of machine can be measured on one; a name this build does not have is an
// error at start-up that lists the names it has.
const char* SimdTarget();

}  // namespace ember::kernels::cpu

#endif  // EMBER_KERNELS_CPU_SIMD_H_
