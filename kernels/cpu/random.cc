#include "kernels/random.h"

#include "base/error.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/philox.h"

namespace ember::kernels::cpu {

void UniformFill(DType dtype, int64_t n, uint64_t seed, uint64_t offset, void* out) {
  const int bits = UniformBits(dtype);
  const uint64_t words = PhiloxWordsPer(bits);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = static_cast<T*>(out);
    // One Philox block (ten rounds) per four words; a thread takes a few thousand values.
    ParallelFor(n, 4096, [&](int64_t begin, int64_t end) {
      PhiloxStream stream(seed);
      for (int64_t i = begin; i < end; ++i) {
        o[i] = Convert<T>(stream.Uniform(offset + static_cast<uint64_t>(i) * words, bits));
      }
    });
  });
}

}  // namespace ember::kernels::cpu
