#ifndef EMBER_KERNELS_CPU_INTERNAL_DISPATCH_H_
#define EMBER_KERNELS_CPU_INTERNAL_DISPATCH_H_

// The one scaffold of a CPU kernel file. A kernel file `kernels/cpu/<op>.cc`:
//
//   1. re-includes itself once per SIMD target (hwy/foreach_target.h) and, inside
//      HWY_NAMESPACE, defines its loops as templates on T (float or double) and one
//      entry point per public function, with the public signature, that checks the
//      dtype and splits the work:
//
//        void LayerNormForward(DType dtype, int64_t rows, int64_t c, const void* x, ...) {
//          DispatchFloat("layer_norm", dtype, [&](auto type) {
//            using T = decltype(type);
//            ParallelForWork(rows, 2 * c, [&](int64_t begin, int64_t end) {
//              ForwardRows(end - begin, c, At<T>(x, begin * c), ...);
//            });
//          });
//        }
//
//   2. after `#if HWY_ONCE`, exports each entry point and defines the public function
//      as the call of the best target the CPU has (chosen once, on the first call):
//
//        HWY_EXPORT(LayerNormForward);
//        void LayerNormForward(DType dtype, int64_t rows, ...) {
//          HWY_DYNAMIC_DISPATCH(LayerNormForward)(dtype, rows, ...);
//        }
//
// So the dtype switch and the thread split run inside the target's code, one
// dynamic dispatch per call (not per chunk), and no file needs macros to stamp out
// f32 and f64 variants. A kernel without SIMD code (embedding, sampling) uses the
// same three helpers without step 2.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>

#include "base/error.h"
#include "core/dtype.h"
#include "kernels/cpu/internal/fp_mode.h"
#include "kernels/cpu/thread_pool.h"

// In namespace cpu itself (as ParallelFor), so that kernel code in
// cpu::HWY_NAMESPACE finds them unqualified.
namespace ember::kernels::cpu {

// The pool's grain, in units of work: about one elementwise operation on one element
// streamed from memory (0.28 ns on one core here: thread_pool_benchmark's loop), so
// a chunk is at least ~9 us. Below that, it is cheaper to run on the calling thread
// than to hand to another (waking a worker and waiting for it costs microseconds).
inline constexpr int64_t kMinChunkWork = 32768;

// ParallelFor over n items that cost `work_per_item` units each (see kMinChunkWork):
// a row of c elements passed over twice costs 2 c; a GEMM tile costs its
// multiply-adds / 8 (they run from registers at ~20 G/s a core, about 8 in a unit's
// time). Each chunk gets at least kMinChunkWork of work, so small loops stay on the
// calling thread.
inline void ParallelForWork(int64_t n, int64_t work_per_item,
                            const std::function<void(int64_t, int64_t)>& fn) {
  ParallelFor(n, std::max<int64_t>(1, kMinChunkWork / std::max<int64_t>(work_per_item, 1)), fn);
}

// Chunks a thread for ParallelForWorkFine.
inline constexpr int64_t kFineChunksPerThread = 4;

// ParallelForWork for a loop whose results do not depend on the cut (each item computed
// whole by the call that holds it): up to kFineChunksPerThread chunks a thread, claimed
// as threads come free, so that one that streams memory more slowly than the other (or
// shares its core with another process) takes fewer instead of holding the rest up
// (four: as fast as eight, on decoding's products in packed_linear_benchmark).
inline void ParallelForWorkFine(int64_t n, int64_t work_per_item,
                                const std::function<void(int64_t, int64_t)>& fn) {
  ParallelFor(n, std::max<int64_t>(1, kMinChunkWork / std::max<int64_t>(work_per_item, 1)), fn,
              kFineChunksPerThread);
}

// Calls fn(T()) with T = float or double for dtype f32 or f64, and returns what it
// returns. The floating-point kernels compute in f32 or f64 (tensor ops convert f16,
// and bf16 for the kernels that take only these, to f32 first); any other dtype is a
// caller's mistake, reported naming op.
// fn runs with subnormals flushed to zero (internal/fp_mode.h says why), its chunks on
// the pool's workers too; the caller's mode is back on return.
template <typename Fn>
decltype(auto) DispatchFloat(const char* op, DType dtype, Fn&& fn) {
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64, op, ": dtype ", DTypeName(dtype),
              " is not supported (f32 or f64)");
  const internal::FlushSubnormals flush;
  if (dtype == DType::kF32) return fn(float());
  return fn(double());
}

// DispatchFloat for the kernels that also read and write bf16 (computing in f32,
// internal/bf16-inl.h): fn(BFloat16()) for dtype bf16.
template <typename Fn>
decltype(auto) DispatchFloatOrBf16(const char* op, DType dtype, Fn&& fn) {
  if (dtype == DType::kBF16) {
    const internal::FlushSubnormals flush;
    return fn(BFloat16());
  }
  return DispatchFloat(op, dtype, std::forward<Fn>(fn));
}

// A kernel argument as T*, offset by `offset_elements`; null stays null (optional
// arguments such as a bias).
template <typename T>
const T* At(const void* p, int64_t offset_elements = 0) {
  return p ? static_cast<const T*>(p) + offset_elements : nullptr;
}
template <typename T>
T* At(void* p, int64_t offset_elements = 0) {
  return p ? static_cast<T*>(p) + offset_elements : nullptr;
}

}  // namespace ember::kernels::cpu

#endif  // EMBER_KERNELS_CPU_INTERNAL_DISPATCH_H_
