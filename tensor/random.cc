#include "tensor/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/cuda/runtime.h"
#include "kernels/philox.h"
#include "kernels/random.h"
#include "kernels/twins.h"

namespace ember {

std::array<uint32_t, 4> Generator::Philox(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  const kernels::PhiloxBlock out = kernels::Philox({{c[0], c[1], c[2], c[3]}}, k[0], k[1]);
  return {out.word[0], out.word[1], out.word[2], out.word[3]};
}

void Generator::ManualSeed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
  block_ready_ = false;
}

void Generator::set_offset(uint64_t offset) {
  offset_ = offset;
  block_ready_ = false;
}

uint32_t Generator::NextUint32() {
  // Word w is word w % 4 of the block for counter w / 4 (a 64-bit count in the
  // counter's low two words).
  if (offset_ % 4 == 0 || !block_ready_) {
    const uint64_t block = offset_ / 4;
    block_ = Philox({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0},
                    {static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32)});
    block_ready_ = true;
  }
  return block_[offset_++ % 4];
}

uint64_t Generator::NextUint64() {
  const uint64_t high = NextUint32();
  return (high << 32) | NextUint32();
}

double Generator::NextUniform(int bits) {
  const uint64_t word = bits <= 32 ? NextUint32() >> (32 - bits) : NextUint64() >> (64 - bits);
  return std::ldexp(static_cast<double>(word), -bits);
}

uint64_t Generator::NextBelow(uint64_t range) {
  // Accept only draws below the largest multiple of range that fits in 2^64.
  const uint64_t limit = std::numeric_limits<uint64_t>::max() -
                         (std::numeric_limits<uint64_t>::max() % range + 1) % range;
  uint64_t draw;
  do {
    draw = NextUint64();
  } while (draw > limit);
  return draw % range;
}

Generator& DefaultGenerator() {
  static Generator* const generator = new Generator(0);
  return *generator;
}

void ManualSeed(uint64_t seed) { DefaultGenerator().ManualSeed(seed); }

namespace {

// Fills a new tensor with draw(), element by element in row-major order.
template <typename Draw>
Tensor Generate(IntSpan shape, DType dtype, Draw&& draw) {
  Tensor t = Empty(shape, dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = Convert<T>(draw());
  });
  return t;
}

}  // namespace

// The uniform kernel draws every element from its own place in the stream (word
// offset + i, or + 2i for f64), which is where drawing them one after another would
// take it; the generator then moves past them. The one switch on the device type.
Tensor Rand(IntSpan shape, Generator& gen, DType dtype, Device device) {
  const int bits = kernels::UniformBits(dtype);
  Tensor t = Empty(shape, dtype, device);
  switch (device.type) {
    case DeviceType::kCpu:
      kernels::cpu::UniformFill(dtype, t.numel(), gen.seed(), gen.offset(), t.raw_data());
      break;
    case DeviceType::kCuda:
      kernels::cuda::UseDevice(device.index);
      EMBER_CUDA_KERNEL(UniformFill)(dtype, t.numel(), gen.seed(), gen.offset(), t.raw_data());
      break;
    case DeviceType::kMeta:
      break;  // no values, but the stream moves on as it would for them
  }
  gen.set_offset(gen.offset() + static_cast<uint64_t>(t.numel()) * kernels::PhiloxWordsPer(bits));
  return t;
}

Tensor Uniform(IntSpan shape, double low, double high, Generator& gen, DType dtype) {
  EMBER_CHECK(low <= high, "uniform: low ", low, " is greater than high ", high);
  const int bits = kernels::UniformBits(dtype);
  return Generate(shape, dtype, [&] { return low + (high - low) * gen.NextUniform(bits); });
}

Tensor Randn(IntSpan shape, Generator& gen, DType dtype) { return Normal(shape, 0, 1, gen, dtype); }

Tensor Normal(IntSpan shape, double mean, double std, Generator& gen, DType dtype) {
  EMBER_CHECK(std >= 0, "normal: std must be non-negative, got ", std);
  kernels::UniformBits(dtype);  // checks the dtype
  // Box-Muller: u1 in (0, 1], u2 in [0, 1) give two independent N(0, 1) values
  //   r = sqrt(-2 ln u1), z0 = r cos(2 pi u2), z1 = r sin(2 pi u2).
  bool have_spare = false;
  double spare = 0;
  return Generate(shape, dtype, [&] {
    if (have_spare) {
      have_spare = false;
      return mean + std * spare;
    }
    const double u1 = 1.0 - gen.NextUniform(53), u2 = gen.NextUniform(53);
    const double r = std::sqrt(-2.0 * std::log(u1)), theta = 2.0 * M_PI * u2;
    spare = r * std::sin(theta);
    have_spare = true;
    return mean + std * r * std::cos(theta);
  });
}

namespace {
void CheckRange(const char* op, int64_t numel, int64_t begin, int64_t end) {
  EMBER_CHECK(0 <= begin && begin <= end && end <= numel, op, ": elements [", begin, ", ", end,
              ") are not a range of ", numel);
}
}  // namespace

// Uniform draws one value per element: element i's words start at i times the words per value.
Tensor UniformRange(int64_t numel, int64_t begin, int64_t end, double low, double high,
                    Generator& gen, DType dtype) {
  CheckRange("uniform_range", numel, begin, end);
  const uint64_t base = gen.offset(), words = kernels::PhiloxWordsPer(kernels::UniformBits(dtype));
  gen.set_offset(base + static_cast<uint64_t>(begin) * words);
  Tensor t = Uniform({end - begin}, low, high, gen, dtype);
  gen.set_offset(base + static_cast<uint64_t>(numel) * words);
  return t;
}

// Normal draws elements in pairs (2k, 2k + 1) from two 53-bit uniforms: a range starts
// at its first element's pair.
Tensor NormalRange(int64_t numel, int64_t begin, int64_t end, double mean, double std,
                   Generator& gen, DType dtype) {
  CheckRange("normal_range", numel, begin, end);
  const uint64_t base = gen.offset(), pair_words = 2 * kernels::PhiloxWordsPer(53);
  const int64_t first = begin / 2 * 2;
  gen.set_offset(base + static_cast<uint64_t>(begin / 2) * pair_words);
  const Tensor t = Normal({end - first}, mean, std, gen, dtype);
  gen.set_offset(base + static_cast<uint64_t>((numel + 1) / 2) * pair_words);
  return first == begin ? t : t.Narrow(0, 1, end - begin).Contiguous();
}

Tensor RandInt(int64_t low, int64_t high, IntSpan shape, Generator& gen, DType dtype) {
  EMBER_CHECK(low < high, "randint: low ", low, " must be less than high ", high);
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  return Generate(shape, dtype, [&] {
    return static_cast<int64_t>(static_cast<uint64_t>(low) + gen.NextBelow(range));
  });
}

Tensor RandPerm(int64_t n, Generator& gen, DType dtype) {
  EMBER_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    std::swap(order[i], order[gen.NextBelow(static_cast<uint64_t>(i) + 1)]);
  }
  Tensor t = Empty({n}, DType::kI64);
  std::copy(order.begin(), order.end(), t.data<int64_t>());
  return dtype == DType::kI64 ? t : t.To(dtype);
}

}  // namespace ember
