#ifndef EMBER_KERNELS_CUDA_INTERNAL_BACKENDS_H_
#define EMBER_KERNELS_CUDA_INTERNAL_BACKENDS_H_

// The two kernel backends as types, so that one table of test cases runs on both:
//
//   EMBER_BACKEND_TEST_SUITE(SoftmaxTest);
//   TYPED_TEST(SoftmaxTest, MatchesTheReference) {
//     using B = TypeParam;
//     const typename B::Buffer x(host_x), y(bytes);   // memory of that backend
//     B::Softmax(DType::kF32, rows, n, x.data(), y.data());
//     ... y.template ToHost<float>() against kernels/reference ...
//   }
//
// CpuBackend runs everywhere (so each table is checked on every machine); CudaBackend
// skips, saying why, where there is no GPU or no CUDA support in the build (whose CUDA
// kernels are null pointers, kernels/twins.h).

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/adamw.h"
#include "kernels/attention.h"
#include "kernels/binary.h"
#include "kernels/conv.h"
#include "kernels/copy.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/runtime.h"
#include "kernels/embedding.h"
#include "kernels/layernorm.h"
#include "kernels/matmul.h"
#include "kernels/pool.h"
#include "kernels/random.h"
#include "kernels/recurrent.h"
#include "kernels/reduce.h"
#include "kernels/sampling.h"
#include "kernels/scan.h"
#include "kernels/softmax.h"
#include "kernels/sort.h"
#include "kernels/testing.h"
#include "kernels/twins.h"
#include "kernels/unary.h"

namespace ember::kernels::cuda::internal {

// Every kernel the two backends share: the families' lists.
// clang-format off
#define EMBER_FOR_EACH_KERNEL(X)                                                                 \
  EMBER_ADAMW_KERNELS(X) EMBER_ATTENTION_KERNELS(X) EMBER_BINARY_KERNELS(X)                      \
  EMBER_CONV_KERNELS(X) EMBER_COPY_KERNELS(X) EMBER_EMBEDDING_KERNELS(X)                         \
  EMBER_LAYERNORM_KERNELS(X) EMBER_MATMUL_KERNELS(X) EMBER_POOL_KERNELS(X)                       \
  EMBER_RANDOM_KERNELS(X) EMBER_RECURRENT_KERNELS(X) EMBER_REDUCE_KERNELS(X)                     \
  EMBER_SAMPLING_KERNELS(X) EMBER_SCAN_KERNELS(X) EMBER_SOFTMAX_KERNELS(X)                       \
  EMBER_SORT_KERNELS(X) EMBER_UNARY_KERNELS(X)
// clang-format on

// nbytes of one backend's memory, filled from and read back into host vectors.
// Memory says how: Allocate(nbytes), Free(data, nbytes), and Copy(dst, dst_on_host,
// src, src_on_host, nbytes).
template <typename Memory>
class Buffer {
 public:
  explicit Buffer(int64_t nbytes) : nbytes_(nbytes), data_(Memory::Allocate(nbytes)) {}
  template <typename T>
  explicit Buffer(const std::vector<T>& host) : Buffer(host.size() * sizeof(T)) {
    Memory::Copy(data_, false, host.data(), true, nbytes_);
  }
  ~Buffer() { Memory::Free(data_, nbytes_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  // The bytes as elements of T (on a GPU, once the work queued before has finished).
  template <typename T>
  std::vector<T> ToHost() const {
    std::vector<T> host(nbytes_ / sizeof(T));
    Memory::Copy(host.data(), true, data_, false, host.size() * sizeof(T));
    return host;
  }

 private:
  int64_t nbytes_;
  void* data_;
};

// Host memory, 64-byte aligned as tensors' is.
struct HostMemory {
  static void* Allocate(int64_t nbytes) {
    return nbytes > 0 ? std::aligned_alloc(64, (nbytes + 63) / 64 * 64) : nullptr;
  }
  static void Free(void* data, int64_t) { std::free(data); }
  static void Copy(void* dst, bool, const void* src, bool, int64_t nbytes) {
    if (nbytes > 0) std::memcpy(dst, src, nbytes);
  }
};

// cuda:0 memory from the caching allocator.
struct CudaMemory {
  static void* Allocate(int64_t nbytes) { return cuda::Allocate(0, nbytes); }
  static void Free(void* data, int64_t nbytes) { Deallocate(0, data, nbytes); }
  static void Copy(void* dst, bool dst_on_host, const void* src, bool src_on_host, int64_t nbytes) {
    CopyBytes(dst, dst_on_host ? kHost : 0, src, src_on_host ? kHost : 0, nbytes);
  }
};

struct CpuBackend {
  static constexpr char kName[] = "Cpu";
  static std::string Unavailable() { return ""; }
  using Buffer = internal::Buffer<HostMemory>;
#define EMBER_BACKEND_KERNEL(name) static constexpr auto* name = &::ember::kernels::cpu::name;
  EMBER_FOR_EACH_KERNEL(EMBER_BACKEND_KERNEL)
#undef EMBER_BACKEND_KERNEL
};

struct CudaBackend {
  static constexpr char kName[] = "Cuda";
  // Why cuda:0 cannot be used here (no GPU, no driver, a build without CUDA), or "".
  static std::string Unavailable() {
    try {
      CheckDevice(0);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  using Buffer = internal::Buffer<CudaMemory>;
#define EMBER_BACKEND_KERNEL(name) static constexpr auto* name = EMBER_CUDA_KERNEL(name);
  EMBER_FOR_EACH_KERNEL(EMBER_BACKEND_KERNEL)
#undef EMBER_BACKEND_KERNEL
};

using Backends = ::testing::Types<CpuBackend, CudaBackend>;

// Runs body(path) on every code path of backend B: on the CPU once per SIMD target this
// binary was compiled for and this CPU supports (named as Highway names it), on CUDA
// once.
template <typename B, typename Body>
void ForEachPath(const Body& body) {
  if constexpr (std::is_same_v<B, CpuBackend>) {
    ForEachTarget(body);
  } else {
    body(std::string(B::kName));
  }
}

// Runs body(path, T()) on every path of backend B for each floating type T the kernels
// compute in (float, then double).
template <typename B, typename Body>
void ForEachPathAndFloat(const Body& body) {
  ForEachPath<B>([&](const std::string& path) {
    body(path, float());
    body(path, double());
  });
}

// ForEachPathAndFloat, and bf16 (BFloat16()) last: for the families whose kernels also
// read and write bf16.
template <typename B, typename Body>
void ForEachPathAndFloatOrBf16(const Body& body) {
  ForEachPath<B>([&](const std::string& path) {
    body(path, float());
    body(path, double());
    body(path, BFloat16());
  });
}

struct BackendNames {
  template <typename B>
  static std::string GetName(int) {
    return B::kName;
  }
};

// A test fixture that skips, saying why, on a backend that cannot run here.
template <typename B>
class BackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = B::Unavailable(); !why.empty()) GTEST_SKIP() << why;
  }
};

}  // namespace ember::kernels::cuda::internal

// Declares the typed test suite `suite` over both backends: each TYPED_TEST(suite, ...)
// then runs on the CPU and on CUDA (skipping, saying why, where it cannot), with
// TypeParam the backend.
#define EMBER_BACKEND_TEST_SUITE(suite)                                     \
  template <typename B>                                                     \
  class suite : public ::ember::kernels::cuda::internal::BackendTest<B> {}; \
  TYPED_TEST_SUITE(suite, ::ember::kernels::cuda::internal::Backends,       \
                   ::ember::kernels::cuda::internal::BackendNames)

#endif  // EMBER_KERNELS_CUDA_INTERNAL_BACKENDS_H_
