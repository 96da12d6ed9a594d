// One all-reduce on every rank, after rank --fail_rank has failed in the way --failure
// names: "exit" (it exits with status 3 without joining), "stall" (it sleeps for ever
// before joining) or "error" (it returns an error, as a bad input would). For
// mpi_test.sh: the run must end, and say why, within --dist_timeout.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/main.h"
#include "distributed/process_group.h"
#include "tensor/creation.h"

ABSL_FLAG(int, fail_rank, -1, "the rank that fails (-1: none)");
ABSL_FLAG(std::string, failure, "exit", "exit, stall or error");
ABSL_FLAG(absl::Duration, dist_timeout, absl::Minutes(10),
          "how long a collective may be waited for");

namespace ember::distributed {
namespace {

absl::Status Run() {
  SetTimeout(absl::GetFlag(FLAGS_dist_timeout));
  ProcessGroup& world = World();
  if (world.rank() == absl::GetFlag(FLAGS_fail_rank)) {
    const std::string failure = absl::GetFlag(FLAGS_failure);
    if (failure == "exit") std::_Exit(3);
    if (failure == "stall") pause();
    return absl::InvalidArgumentError("a bad input on this rank");
  }
  const Tensor t = Ones({16});
  world.AllReduce(t);
  std::printf("rank %d: sum %g\n", world.rank(), t.at<float>({0}));
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::distributed

int main(int argc, char** argv) {
  return ember::RunMain(argc, argv, "collective_probe", "an all-reduce after one rank fails",
                        &ember::distributed::Run);
}
