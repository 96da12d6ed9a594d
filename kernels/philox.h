#ifndef EMBER_KERNELS_PHILOX_H_
#define EMBER_KERNELS_PHILOX_H_

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC
// 2011), the counter-based generator of tensor/random.h, as one function that the
// host and CUDA kernels share (nvcc compiles it for both), so that a seed gives the
// same numbers on every device.
//
// The stream of a seed: word w is word w % 4 of the block for counter w / 4 (a 64-bit
// count in the counter's low two words) under the key (seed's low, high 32 bits).

#include <cstdint>

#if defined(__CUDACC__)
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif

namespace ember::kernels {

struct PhiloxBlock {
  uint32_t word[4];
};

// The four words for `counter` under `key`: ten rounds of two multiply-xor steps,
// bumping the key by the Weyl constants between rounds.
EMBER_HOST_DEVICE inline PhiloxBlock Philox(PhiloxBlock counter, uint32_t key0, uint32_t key1) {
  constexpr uint32_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;    // round multipliers
  constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;  // key schedule
  uint32_t* c = counter.word;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kMul1) * c[2];
    const uint32_t c1 = c[1], c3 = c[3];
    c[0] = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ key0;
    c[1] = static_cast<uint32_t>(p1);
    c[2] = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ key1;
    c[3] = static_cast<uint32_t>(p0);
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return counter;
}

// The stream of `seed`, read at any word index; a block is computed once for the
// reads that stay in it (consecutive reads: one Philox call per four words).
class PhiloxStream {
 public:
  EMBER_HOST_DEVICE explicit PhiloxStream(uint64_t seed) : seed_(seed) {}

  EMBER_HOST_DEVICE uint32_t Word(uint64_t index) {
    const uint64_t block = index / 4;
    if (!ready_ || block != block_) {
      words_ = Philox({{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0}},
                      static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32));
      block_ = block;
      ready_ = true;
    }
    return words_.word[index % 4];
  }

  // Uniform in [0, 1) with `bits` random bits (1 to 53), k 2^-bits, from word `index`:
  // the top `bits` of one word for bits <= 32, else of two words (high first). Exact
  // in any float type with at least `bits` mantissa bits.
  EMBER_HOST_DEVICE double Uniform(uint64_t index, int bits) {
    if (bits <= 32) {
      return static_cast<double>(Word(index) >> (32 - bits)) * (1.0 / (uint64_t{1} << bits));
    }
    const uint64_t high = Word(index);
    const uint64_t word = (high << 32) | Word(index + 1);
    return static_cast<double>(word >> (64 - bits)) * (1.0 / (uint64_t{1} << bits));
  }

 private:
  uint64_t seed_;
  uint64_t block_ = 0;
  bool ready_ = false;
  PhiloxBlock words_{};
};

// Words one uniform of `bits` takes.
EMBER_HOST_DEVICE inline int PhiloxWordsPer(int bits) { return bits <= 32 ? 1 : 2; }

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_PHILOX_H_
