// A build without NCCL (no --config=cuda, or no MPI to share NCCL's id through).

#include "base/error.h"
#include "distributed/internal/transport.h"

namespace ember::distributed::internal {

std::unique_ptr<DeviceCommunicator> NewNcclCommunicator(int, int, int,
                                                        const std::function<void(void*, size_t)>&) {
  EMBER_THROW(
      "collectives on CUDA tensors need NCCL, and this build of ember has none (build with "
      "--config=cuda, "
      "with MPI installed)");
}

}  // namespace ember::distributed::internal
