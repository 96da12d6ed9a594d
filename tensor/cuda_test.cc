// Tensors on a GPU: To(Device) both ways, reading and printing a CUDA tensor, Fill
// and CopyFrom there, the memory counters; and, on every machine, the errors for a
// device that is not there. The GPU cases skip, saying why, where there is none.

#include "tensor/cuda.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/tensor.h"

namespace ember {
namespace {

std::string MessageOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CudaTensorTest, AMissingDeviceIsAnErrorNamingIt) {
  const int count = cuda::DeviceCount();
  EXPECT_EQ(cuda::IsAvailable(), count > 0);
  const Tensor x = Arange(6);
  const std::string message = MessageOf([&] { x.To(Device::Cuda(count)); });
  EXPECT_EQ(message.rfind("cuda:" + std::to_string(count), 0), 0) << message;
  if (count == 0) {
    // No GPU: the message says why (no CUDA support in this build, or no device).
    EXPECT_NE(message.find("CUDA"), std::string::npos) << message;
  } else {
    EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
  }
}

TEST(CudaTensorTest, TheDeviceFlagResolvesOrSaysWhy) {
  EXPECT_EQ(*cuda::DeviceFromFlag("cpu"), Device::Cpu());
  EXPECT_EQ(*cuda::DeviceFromFlag("auto"), cuda::IsAvailable() ? Device::Cuda(0) : Device::Cpu());
  EXPECT_FALSE(cuda::DeviceFromFlag("gpu").ok());
  const absl::StatusOr<Device> missing =
      cuda::DeviceFromFlag("cuda:" + std::to_string(cuda::DeviceCount()));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("CUDA"), std::string::npos) << missing.status();
}

class CudaTensorGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::IsAvailable()) {
      GTEST_SKIP() << "no CUDA device here: "
                   << MessageOf([] { Empty({1}, DType::kF32, Device::Cuda()); });
    }
  }
};

TEST_F(CudaTensorGpuTest, ToDeviceAndBackKeepsEveryValue) {
  for (DType dtype : kAllDTypes) {
    // A transposed (non-contiguous) source, large enough for the pinned chunks.
    const Tensor x = Arange(0, 3 << 20).To(dtype).View({3, 1 << 20}).Transpose(0, 1);
    const Tensor on_gpu = x.To(Device::Cuda());
    EXPECT_EQ(on_gpu.device(), Device::Cuda(0));
    EXPECT_TRUE(on_gpu.is_contiguous());
    EXPECT_EQ(on_gpu.shape(), x.shape());
    const Tensor back = on_gpu.To(Device::Cpu());
    EXPECT_EQ(back.ToVector<double>(), x.ToVector<double>()) << DTypeName(dtype);
    EXPECT_TRUE(on_gpu.To(Device::Cuda()).is_same(on_gpu));  // already there
  }
}

TEST_F(CudaTensorGpuTest, ElementsPrintingFillAndCopyWorkOnTheGpu) {
  const Tensor x = FromVector<float>({1.5f, -2.0f, 0.25f, 4.0f}, {2, 2}).To(Device::Cuda());
  EXPECT_EQ(x.at<double>({1, 0}), 0.25);
  EXPECT_EQ(x.Select(0, 1).Select(0, 1).item<float>(), 4.0f);
  EXPECT_EQ(x.ToString(),
            "tensor([[ 1.5000, -2.0000],\n"
            "        [ 0.2500,  4.0000]], device='cuda:0', dtype=f32)");
  const Tensor y = Empty({2, 2}, DType::kF64, Device::Cuda());
  y.CopyFrom(x.Transpose(0, 1));  // strided, and cast to f64
  EXPECT_EQ(y.ToVector<double>(), (std::vector<double>{1.5, 0.25, -2.0, 4.0}));
  y.Select(1, 0).Fill(7);
  EXPECT_EQ(y.ToVector<double>(), (std::vector<double>{7, 0.25, 7, 4.0}));
  EXPECT_NE(MessageOf([&] { y.CopyFrom(Zeros({2, 2})); }).find("one device"), std::string::npos);
}

TEST_F(CudaTensorGpuTest, TheCountersFollowTensors) {
  cuda::Synchronize();
  cuda::EmptyCache();
  const int64_t live = cuda::GetMemoryStats(0).live_bytes;
  {
    const Tensor a = Empty({1000, 1000}, DType::kF32, Device::Cuda());
    EXPECT_EQ(cuda::GetMemoryStats(0).live_bytes, live + 4000000);
  }
  EXPECT_EQ(cuda::GetMemoryStats(0).live_bytes, live);
  const int64_t fresh = cuda::GetMemoryStats(0).fresh_allocation_count;
  { const Tensor b = Empty({1000, 1000}, DType::kF32, Device::Cuda()); }
  EXPECT_EQ(cuda::GetMemoryStats(0).fresh_allocation_count, fresh);  // the cached block
}

}  // namespace
}  // namespace ember
