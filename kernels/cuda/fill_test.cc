// kernels/cuda Fill against kernels/cpu Fill on the same layouts. Skips, saying why,
// on a machine without a CUDA device.

#include "kernels/cuda/copy.h"

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/copy.h"

namespace ember::kernels::cuda {
namespace {

class CudaFillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess || count == 0) {
      GTEST_SKIP() << "no CUDA device here ("
                   << (error != cudaSuccess ? cudaGetErrorString(error) : "0 devices") << ")";
    }
  }
};

TEST_F(CudaFillTest, MatchesTheCpuKernelOnStridedLayouts) {
  struct Case {
    Shape shape;
    Strides strides;
    int64_t span;  // elements the buffer needs
  };
  const std::vector<Case> cases = {{{1000}, {1}, 1000},          {{3, 4}, {8, 2}, 24},
                                   {{2, 1, 5}, {10, 99, 2}, 20}, {{}, {}, 1},
                                   {{4, 0}, {1, 1}, 4},          {{2, 3, 4}, {1, 2, 6}, 24}};
  for (DType dtype : kAllDTypes) {
    for (const Case& c : cases) {
      const int64_t nbytes = c.span * ItemSize(dtype);
      std::vector<unsigned char> expected(nbytes, 0x5a), actual(nbytes);
      cpu::Fill(c.shape, dtype, expected.data(), c.strides, 2.75);
      void* device = nullptr;
      ASSERT_EQ(cudaMalloc(&device, nbytes), cudaSuccess);
      ASSERT_EQ(cudaMemset(device, 0x5a, nbytes), cudaSuccess);
      Fill(c.shape, dtype, device, c.strides, 2.75);
      ASSERT_EQ(cudaMemcpy(actual.data(), device, nbytes, cudaMemcpyDeviceToHost), cudaSuccess);
      cudaFree(device);
      EXPECT_EQ(actual, expected) << DTypeName(dtype) << " " << ShapeToString(c.shape);
    }
  }
}

}  // namespace
}  // namespace ember::kernels::cuda
