#ifndef EMBER_KERNELS_CUDA_INTERNAL_BACKENDS_H_
#define EMBER_KERNELS_CUDA_INTERNAL_BACKENDS_H_

// The two kernel backends as types, so that one table of test cases runs on both:
//
//   template <class B> class SoftmaxTest : public BackendTest<B> {};
//   TYPED_TEST_SUITE(SoftmaxTest, Backends, BackendNames);
//   TYPED_TEST(SoftmaxTest, MatchesTheReference) {
//     using B = TypeParam;
//     const typename B::Buffer x(host_x), y(bytes);   // memory of that backend
//     B::Softmax(DType::kF32, rows, n, x.data(), y.data());
//     ... y.template ToHost<float>() against kernels/reference ...
//   }
//
// CpuBackend runs everywhere (so each table is checked on every machine); CudaBackend
// skips, saying why, where there is no GPU or no CUDA support in the build.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/copy.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/kernels.h"
#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda::internal {

// Every kernel the two backends share (kernels.h and copy.h).
#define EMBER_FOR_EACH_KERNEL(X)                                                            \
  X(CopyCast) X(Fill) X(AdamWStep) X(Add) X(Sub) X(Mul) X(Div) X(Maximum) X(Minimum) X(Pow)  \
  X(Eq) X(Ne) X(Lt) X(Le) X(Gt) X(Ge) X(Where) X(Conv2dForward) X(Conv2dBackward)           \
  X(EmbeddingForward) X(EmbeddingBackward) X(LayerNormForward) X(LayerNormBackward) X(Gemm) \
  X(GemmBatched) X(MaxPool2dForward) X(MaxPool2dBackward) X(SumRows) X(MaxRows) X(MinRows)  \
  X(ArgMaxRows) X(VarRows) X(SumSquares) X(SumColumns) X(TopKRows) X(MultinomialRows) X(UniformFill)       \
  X(Softmax) X(LogSoftmax) X(SoftmaxBackward) X(LogSoftmaxBackward) X(CrossEntropyForward)  \
  X(CrossEntropyBackward) X(Neg) X(Abs) X(Exp) X(Log) X(Sqrt) X(Rsqrt) X(Reciprocal)        \
  X(Square) X(Tanh) X(Sigmoid) X(Relu) X(GeluTanh) X(GeluErf) X(PowScalar) X(ReluBackward)  \
  X(GeluTanhBackward) X(GeluErfBackward) X(TanhBackward) X(SigmoidBackward)

struct CpuBackend {
  static constexpr char kName[] = "Cpu";
  static std::string Unavailable() { return ""; }

  // nbytes of host memory (64-byte aligned, as tensors' are).
  class Buffer {
   public:
    explicit Buffer(int64_t nbytes)
        : nbytes_(nbytes), data_(nbytes > 0 ? std::aligned_alloc(64, (nbytes + 63) / 64 * 64) : nullptr) {}
    template <typename T>
    explicit Buffer(const std::vector<T>& host) : Buffer(host.size() * sizeof(T)) {
      if (nbytes_ > 0) std::memcpy(data_, host.data(), nbytes_);
    }
    ~Buffer() { std::free(data_); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    void* data() const { return data_; }
    template <typename T>
    T* as() const {
      return static_cast<T*>(data_);
    }
    template <typename T>
    std::vector<T> ToHost() const {
      std::vector<T> host(nbytes_ / sizeof(T));
      if (!host.empty()) std::memcpy(host.data(), data_, host.size() * sizeof(T));
      return host;
    }

   private:
    int64_t nbytes_;
    void* data_;
  };

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

  // nbytes of cuda:0 memory from the caching allocator.
  class Buffer {
   public:
    explicit Buffer(int64_t nbytes) : nbytes_(nbytes), data_(Allocate(0, nbytes)) {}
    template <typename T>
    explicit Buffer(const std::vector<T>& host) : Buffer(host.size() * sizeof(T)) {
      CopyBytes(data_, 0, host.data(), kHost, nbytes_);
    }
    ~Buffer() { Deallocate(0, data_, nbytes_); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    void* data() const { return data_; }
    template <typename T>
    T* as() const {
      return static_cast<T*>(data_);
    }
    // The bytes as elements of T, once the work queued before has finished.
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

#define EMBER_BACKEND_KERNEL(name) static constexpr auto* name = &::ember::kernels::cuda::name;
  EMBER_FOR_EACH_KERNEL(EMBER_BACKEND_KERNEL)
#undef EMBER_BACKEND_KERNEL
};

using Backends = ::testing::Types<CpuBackend, CudaBackend>;

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

#endif  // EMBER_KERNELS_CUDA_INTERNAL_BACKENDS_H_
