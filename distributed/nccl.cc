// Collectives on CUDA tensors through NCCL (built with --config=cuda and MPI): one
// communicator per rank on that rank's device, made as llm.c's zero.cuh makes it (rank
// 0 draws NCCL's unique id, MPI sends it to every rank, each joins with ncclCommInitRank).
// Every call is queued on the device's default stream, where ember's kernels run, so it
// is ordered with them and the host does not wait.

#include <nccl.h>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "distributed/internal/transport.h"
#include "kernels/cuda/runtime.h"

namespace ember::distributed::internal {
namespace {

void Check(ncclResult_t rc, const char* call) {
  EMBER_CHECK(rc == ncclSuccess, call, " failed: ", ncclGetErrorString(rc));
}

ncclDataType_t NcclType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return ncclFloat32;
    case DType::kF64:
      return ncclFloat64;
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kF16:
      return ncclFloat16;
    case DType::kI32:
      return ncclInt32;
    case DType::kI64:
      return ncclInt64;
    case DType::kU8:
      return ncclUint8;
    default:
      EMBER_THROW("NCCL collectives do not take ", DTypeName(dtype), " tensors");
  }
}

class NcclCommunicator final : public DeviceCommunicator {
 public:
  NcclCommunicator(int rank, int size, int device, const std::function<void(void*, size_t)>& share)
      : device_(device) {
    kernels::cuda::UseDevice(device_);
    ncclUniqueId id;
    if (rank == 0) Check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    share(&id, sizeof(id));
    Check(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
  }
  ~NcclCommunicator() override { ncclCommDestroy(comm_); }

  void AllReduceSum(const Tensor& t) override {
    kernels::cuda::UseDevice(device_);
    Check(ncclAllReduce(t.raw_data(), t.raw_data(), t.numel(), NcclType(t.dtype()), ncclSum, comm_,
                        nullptr),
          "ncclAllReduce");
  }
  void ReduceScatterSum(const Tensor& input, const Tensor& output) override {
    kernels::cuda::UseDevice(device_);
    Check(ncclReduceScatter(input.raw_data(), output.raw_data(), output.numel(),
                            NcclType(output.dtype()), ncclSum, comm_, nullptr),
          "ncclReduceScatter");
  }
  void AllGather(const Tensor& input, const Tensor& output) override {
    kernels::cuda::UseDevice(device_);
    Check(ncclAllGather(input.raw_data(), output.raw_data(), input.numel() * input.itemsize(),
                        ncclUint8, comm_, nullptr),
          "ncclAllGather");
  }
  void Broadcast(const Tensor& t, int root) override {
    kernels::cuda::UseDevice(device_);
    Check(ncclBroadcast(t.raw_data(), t.raw_data(), t.numel() * t.itemsize(), ncclUint8, root,
                        comm_, nullptr),
          "ncclBroadcast");
  }

 private:
  int device_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

std::unique_ptr<DeviceCommunicator> NewNcclCommunicator(
    int rank, int size, int device_index, const std::function<void(void*, size_t)>& share) {
  return std::make_unique<NcclCommunicator>(rank, size, device_index, share);
}

}  // namespace ember::distributed::internal
