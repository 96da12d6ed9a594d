// Devices in tensor/ops: operands on two devices are refused naming both, meta tensors
// are refused, and in a build without CUDA every way of computing on a CUDA tensor ends in the
// message that says how to get CUDA support, never in a crash. CUDA tensors cannot be allocated in
// such a build, so the tests make them over host memory with an allocator that calls
// itself cuda:0 (nothing reads that memory: the checks fire first).

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/cuda/runtime.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/layernorm.h"
#include "tensor/ops/matmul.h"
#include "tensor/ops/unary.h"

namespace ember::ops {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class FakeCudaAllocator final : public Allocator {
 public:
  void* Allocate(int64_t nbytes) override { return GetCpuAllocator().Allocate(nbytes); }
  void Deallocate(void* data, int64_t nbytes) override {
    GetCpuAllocator().Deallocate(data, nbytes);
  }
  Device device() const override { return Device::Cuda(0); }
};

Tensor CudaTensor(IntSpan shape) {
  static FakeCudaAllocator allocator;
  return Tensor(Storage(NumElements(shape) * 4, allocator), 0, shape, ContiguousStrides(shape),
                DType::kF32);
}

// What computing on cuda:0 says where there is none: a build without CUDA says how to
// get it; a CUDA build on a machine without a GPU says so.
#ifdef EMBER_CUDA
constexpr char kNoCuda[] = "cuda:0: no CUDA device here";
#else
constexpr char kNoCuda[] =
    "cuda:0: this build of ember has no CUDA support (build with --config=cuda)";
#endif

TEST(DeviceTest, MixedDevicesAreRefusedNamingBoth) {
  const Tensor cpu = Ones({2, 3}), cuda = CudaTensor({2, 3});
  EXPECT_THAT([&] { Add(cpu, cuda); },
              ThrowsMessage<Error>(
                  HasSubstr("add: expected all tensors on one device, got cpu and cuda:0")));
  EXPECT_THAT([&] { Matmul(cuda, cpu.Transpose(0, 1)); },
              ThrowsMessage<Error>(
                  HasSubstr("matmul: expected all tensors on one device, got cuda:0 and cpu")));
  EXPECT_THAT([&] { LayerNorm(cpu, CudaTensor({3}), Tensor(), 1e-5); },
              ThrowsMessage<Error>(HasSubstr("layer_norm: expected all tensors on one device")));
  EXPECT_THAT([&] { cpu.CopyFrom(cuda); },
              ThrowsMessage<Error>(
                  HasSubstr("copy: expected both tensors on one device, got cuda:0 and cpu")));
}

TEST(DeviceTest, CudaTensorsWithoutCudaSayHowToGetIt) {
  if (kernels::cuda::DeviceCount() > 0) GTEST_SKIP() << "this machine has a GPU";
  const Tensor x = CudaTensor({2, 3});
  EXPECT_THAT([&] { Add(x, x); }, ThrowsMessage<Error>(HasSubstr(kNoCuda)));
  EXPECT_THAT([&] { Exp(x); }, ThrowsMessage<Error>(HasSubstr(kNoCuda)));
  // In place, nothing to allocate: the device switch itself refuses.
  EXPECT_THAT([&] { x.Fill(1.0); }, ThrowsMessage<Error>(HasSubstr(kNoCuda)));
  EXPECT_THAT([&] { x.at<double>({0, 0}); }, ThrowsMessage<Error>(HasSubstr(kNoCuda)));
}

// Meta tensors (shapes without memory): every op that would compute refuses, saying so.
TEST(DeviceTest, OpsOnMetaTensorsSayThereIsNoData) {
  const Tensor a = Empty({2, 3}, DType::kF32, Device::Meta());
  EXPECT_THAT([&] { Add(a, a); },
              ThrowsMessage<Error>(HasSubstr("a meta tensor has a shape but no data")));
  EXPECT_THAT([&] { Matmul(a, a.Transpose(0, 1)); },
              ThrowsMessage<Error>(HasSubstr("a meta tensor has a shape")));
  EXPECT_THAT([&] { Add(a, Zeros({2, 3})); }, ThrowsMessage<Error>(HasSubstr("meta and cpu")));
}

}  // namespace
}  // namespace ember::ops
