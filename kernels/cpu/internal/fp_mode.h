#ifndef EMBER_KERNELS_CPU_INTERNAL_FP_MODE_H_
#define EMBER_KERNELS_CPU_INTERNAL_FP_MODE_H_

// The floating-point mode ember's CPU kernels run in: subnormal numbers flushed to zero.
//
// A subnormal f32 is one below 2^-126 (1.2e-38) in magnitude, f64 below 2^-1022. On
// Intel cores a multiply or FMA that reads or produces one takes a microcode assist of
// about a hundred cycles instead of a fraction of one; AMD's Zen cores handle most
// without one. Training makes them: gradients and Adam's second moments of weights that
// barely matter decay past 2^-126. Measured on a 2-vCPU Intel Xeon (model 207,
// Emerald Rapids), GPT-2 124M (B=4, T=64, learning rate 6e-3): steps 2-9 took 0.91-1.03
// s and steps 10-14 1.9-2.6 s, all of it in the GEMM's micro-kernel; with subnormals
// flushed every step took 0.90-0.97 s and the losses were the same to the printed digit.
// So, as TensorFlow and XLA do on CPUs, every kernel call runs with SSE's FTZ (a result
// below the normal range is 0; MXCSR bit 15) and DAZ (an input below it reads as 0; bit
// 6), and restores the caller's mode on return (DispatchFloat), and the pool's workers
// run each loop in its caller's mode (thread_pool.cc). Nothing is lost that a float
// model can use: the values flushed are 2^-126 of the ones beside them.
// Elsewhere than on x86 the mode is left as it is.

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace ember::kernels::cpu::internal {

// The calling thread's floating-point control word (MXCSR on x86; 0 elsewhere), and
// setting it: what the pool hands from a loop's caller to its workers.
inline uint32_t FpMode() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr();
#else
  return 0;
#endif
}
inline void SetFpMode(uint32_t mode) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(mode);
#else
  (void)mode;
#endif
}

// FTZ | DAZ on x86.
inline constexpr uint32_t kFlushSubnormals = (1u << 15) | (1u << 6);

// Subnormals flushed to zero on this thread for the guard's life; the mode before it
// comes back after (untouched where both bits were already set, as in a pool's worker).
class FlushSubnormals {
 public:
  FlushSubnormals() : before_(FpMode()) {
    if ((before_ & kFlushSubnormals) != kFlushSubnormals) SetFpMode(before_ | kFlushSubnormals);
  }
  ~FlushSubnormals() {
    if ((before_ & kFlushSubnormals) != kFlushSubnormals) SetFpMode(before_);
  }
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;

 private:
  const uint32_t before_;
};

}  // namespace ember::kernels::cpu::internal

#endif  // EMBER_KERNELS_CPU_INTERNAL_FP_MODE_H_
