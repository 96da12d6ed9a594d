#ifndef EMBER_KERNELS_CUDA_INTERNAL_TESTING_H_
#define EMBER_KERNELS_CUDA_INTERNAL_TESTING_H_

// For kernels/cuda tests: skipping where there is no GPU, and device buffers that
// come from and go back to host vectors.

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda::internal {

// In a test body or SetUp: skips the test, saying why, unless cuda:0 exists.
#define EMBER_SKIP_WITHOUT_CUDA()                     \
  do {                                                \
    if (::ember::kernels::cuda::DeviceCount() == 0) { \
      try {                                           \
        ::ember::kernels::cuda::CheckDevice(0);       \
      } catch (const std::exception& e) {             \
        GTEST_SKIP() << e.what();                     \
      }                                               \
    }                                                 \
  } while (0)

// nbytes of cuda:0 memory from the caching allocator, given back when it goes.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int64_t nbytes) : nbytes_(nbytes), data_(Allocate(0, nbytes)) {}
  template <typename T>
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size() * sizeof(T)) {
    CopyBytes(data_, 0, host.data(), kHost, nbytes_);
  }
  ~DeviceBuffer() { Deallocate(0, data_, nbytes_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  // The buffer's bytes as n elements of T (waits for the work queued before).
  template <typename T>
  std::vector<T> ToHost() const {
    std::vector<T> host(nbytes_ / sizeof(T));
    CopyBytes(host.data(), kHost, data_, 0, host.size() * sizeof(T));
    return host;
  }

 private:
  int64_t nbytes_;
  void* data_;
};

}  // namespace ember::kernels::cuda::internal

#endif  // EMBER_KERNELS_CUDA_INTERNAL_TESTING_H_
