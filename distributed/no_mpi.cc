// A build without MPI (third_party's HAS_MPI is false): every process is a world of one.

#include "base/error.h"
#include "distributed/internal/transport.h"

namespace ember::distributed::internal {

std::unique_ptr<ProcessGroup> NewMpiWorld() {
  EMBER_THROW("mpirun started this process as one of ", LauncherWorldSize(),
              ", but this build of ember has no MPI: install libopenmpi-dev (./setup.sh does) and "
              "build again");
}

}  // namespace ember::distributed::internal
