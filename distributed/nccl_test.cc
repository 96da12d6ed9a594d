// NCCL's communicator over one rank, on the first GPU: set up without MPI (rank 0's
// unique id needs no sending), then each collective on CUDA tensors, whose sum over one
// rank leaves every value as it was, bf16 and f32, with the device's other work in
// between. Without a GPU, or in a build without NCCL, it skips saying why; several
// ranks over NCCL need several GPUs, which no machine here has (docs/distributed.md).

#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "distributed/internal/transport.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/cuda.h"
#include "tensor/ops/binary.h"

namespace ember::distributed::internal {
namespace {

TEST(NcclTest, OneRanksCommunicatorRunsEveryCollective) {
  if (!cuda::IsAvailable()) GTEST_SKIP() << "no CUDA device here (NCCL needs a GPU)";
  std::unique_ptr<DeviceCommunicator> nccl;
  try {
    nccl = NewNcclCommunicator(/*rank=*/0, /*size=*/1, /*device_index=*/0, [](void*, size_t) {});
  } catch (const Error& e) {
    GTEST_SKIP() << e.what();
  }
  for (const DType dtype : {DType::kF32, DType::kBF16}) {
    const Tensor values = Arange(0, 4096).To(dtype);
    const std::vector<double> want = values.ToVector<double>();
    const Tensor t = values.To(Device::Cuda());
    nccl->AllReduceSum(t);
    const Tensor doubled = ops::Add(t, t);  // a kernel queued behind the collective
    EXPECT_EQ(t.To(Device::Cpu()).ToVector<double>(), want) << DTypeName(dtype);
    EXPECT_EQ(doubled.To(Device::Cpu()).ToVector<double>()[4095], 2 * want[4095]);
    const Tensor gathered = Empty({4096}, dtype, Device::Cuda());
    nccl->AllGather(t, gathered);
    EXPECT_EQ(gathered.To(Device::Cpu()).ToVector<double>(), want) << DTypeName(dtype);
    const Tensor scattered = Empty({4096}, dtype, Device::Cuda());
    nccl->ReduceScatterSum(t, scattered);
    EXPECT_EQ(scattered.To(Device::Cpu()).ToVector<double>(), want) << DTypeName(dtype);
    nccl->Broadcast(t, 0);
    EXPECT_EQ(t.To(Device::Cpu()).ToVector<double>(), want) << DTypeName(dtype);
  }
}

}  // namespace
}  // namespace ember::distributed::internal
