#ifndef EMBER_DISTRIBUTED_INTERNAL_TRANSPORT_H_
#define EMBER_DISTRIBUTED_INTERNAL_TRANSPORT_H_

// What process_group.cc needs from the engines, each in a file that BUILD picks once:
// mpi.cc (built with MPI) or no_mpi.cc, and nccl.cc (with MPI and --config=cuda) or
// no_nccl.cc.

#include <cstddef>
#include <functional>
#include <memory>

#include "distributed/process_group.h"
#include "tensor/tensor.h"

namespace ember::distributed::internal {

// The world size that mpirun gave this process (OMPI_COMM_WORLD_SIZE), or 0 when
// mpirun did not start it.
int LauncherWorldSize();

// The MPI world (mpi.cc); called once, when LauncherWorldSize() > 0. no_mpi.cc throws,
// saying that this build has no MPI.
std::unique_ptr<ProcessGroup> NewMpiWorld();

// The collectives on CUDA tensors: an NCCL communicator over every rank, on one device.
// Each call is queued on the device's stream (ordered with its kernels) and returns.
class DeviceCommunicator {
 public:
  virtual ~DeviceCommunicator() = default;
  virtual void AllReduceSum(const Tensor& t) = 0;
  virtual void ReduceScatterSum(const Tensor& input, const Tensor& output) = 0;
  virtual void AllGather(const Tensor& input, const Tensor& output) = 0;
  virtual void Broadcast(const Tensor& t, int root) = 0;
};

// NCCL's communicator for `device_index`; `share` sends rank 0's bytes to every rank
// (NCCL's unique id, through MPI). no_nccl.cc throws, saying what the build lacks.
std::unique_ptr<DeviceCommunicator> NewNcclCommunicator(
    int rank, int size, int device_index, const std::function<void(void*, size_t)>& share);

}  // namespace ember::distributed::internal

#endif  // EMBER_DISTRIBUTED_INTERNAL_TRANSPORT_H_
