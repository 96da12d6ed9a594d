#ifndef EMBER_TENSOR_RANDOM_H_
#define EMBER_TENSOR_RANDOM_H_

#include <array>
#include <cstdint>

#include "tensor/tensor.h"

namespace ember {

// Random numbers from Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy
// as 1, 2, 3", SC 2011), the counter-based generator PyTorch and cuRAND use on GPUs.
// The seed is Philox's 64-bit key; each 128-bit counter value gives four 32-bit
// words, used in order. Everything below is integer arithmetic plus, for normals,
// log/sqrt/cos/sin in double, so a seed gives the same numbers on every machine.
// A Generator is not thread-safe; give each thread its own.
class Generator {
 public:
  explicit Generator(uint64_t seed = 0) { ManualSeed(seed); }

  // Restarts the stream of `seed` from its beginning.
  void ManualSeed(uint64_t seed);
  uint64_t seed() const { return seed_; }
  // How many 32-bit words have been drawn since seeding; with the seed, the whole
  // state (checkpoints save both to resume a run bit-for-bit).
  uint64_t offset() const { return offset_; }
  void set_offset(uint64_t offset);

  uint32_t NextUint32();
  uint64_t NextUint64();  // two words, high first
  // Uniform in [0, 1) with `bits` random bits (at most 53): k * 2^-bits.
  double NextUniform(int bits);
  // Uniform in [0, range) without bias (rejection sampling); range > 0.
  uint64_t NextBelow(uint64_t range);

  // One Philox4x32-10 block: the four words for `counter` under `key`.
  static std::array<uint32_t, 4> Philox(std::array<uint32_t, 4> counter,
                                        std::array<uint32_t, 2> key);

 private:
  uint64_t seed_ = 0;
  uint64_t offset_ = 0;
  std::array<uint32_t, 4> block_{};  // the block holding word offset_, once block_ready_
  bool block_ready_ = false;
};

// The process's generator, for calls that pass none. ManualSeed reseeds it.
Generator& DefaultGenerator();
void ManualSeed(uint64_t seed);

// Elements are drawn in row-major order, one after another from `gen`.
// U[0, 1) with the dtype's mantissa precision (24 bits for f32, 53 for f64, 8 for
// bf16, 11 for f16), so that 1.0 never appears; floating dtypes only.
// On `device` (the same numbers on every device: each is drawn from its place in the
// stream, on the device itself).
Tensor Rand(IntSpan shape, Generator& gen = DefaultGenerator(), DType dtype = DType::kF32,
            Device device = Device::Cpu());
// low + (high - low) * U[0, 1).
Tensor Uniform(IntSpan shape, double low, double high, Generator& gen = DefaultGenerator(),
               DType dtype = DType::kF32);
// N(0, 1) by the Box-Muller transform on pairs of 53-bit uniforms.
Tensor Randn(IntSpan shape, Generator& gen = DefaultGenerator(), DType dtype = DType::kF32);
Tensor Normal(IntSpan shape, double mean, double std, Generator& gen = DefaultGenerator(),
              DType dtype = DType::kF32);
// Elements [begin, end) (row-major) of what Uniform or Normal of `numel` elements would
// draw from gen, as a 1-d tensor, leaving gen where drawing all of them would: a shard
// of a random tensor with the same numbers as the whole tensor's slice, without making
// the whole (each element's value depends only on its place in the stream).
Tensor UniformRange(int64_t numel, int64_t begin, int64_t end, double low, double high,
                    Generator& gen, DType dtype = DType::kF32);
Tensor NormalRange(int64_t numel, int64_t begin, int64_t end, double mean, double std,
                   Generator& gen, DType dtype = DType::kF32);
// Integers uniform in [low, high), without bias.
Tensor RandInt(int64_t low, int64_t high, IntSpan shape, Generator& gen = DefaultGenerator(),
               DType dtype = DType::kI64);
// A uniformly random permutation of 0 .. n-1 (torch.randperm), by Fisher and Yates'
// shuffle: for i = n-1 down to 1, swap element i with element j = NextBelow(i + 1).
Tensor RandPerm(int64_t n, Generator& gen = DefaultGenerator(), DType dtype = DType::kI64);

}  // namespace ember

#endif  // EMBER_TENSOR_RANDOM_H_
