#ifndef EMBER_BASE_CPUS_H_
#define EMBER_BASE_CPUS_H_

// How many CPUs this process can keep busy: what every default thread count starts
// from (the kernels' thread pool, the tokenizer's batch encoding, ranks sharing a
// machine under mpirun).

#include <optional>
#include <string>

namespace ember {

// The CPUs of this process's affinity mask (taskset, cpusets), capped by the CPU
// quota of its cgroup and of every cgroup above it (a container's --cpus, a systemd
// CPUQuota=), rounded up; at least 1. std::thread::hardware_concurrency counts every
// online CPU: in a cgroup allowed 1 CPU on a 2-CPU machine, the thread pool ran two
// threads that took turns, and Fashion-MNIST's MLP trained at 0.78-0.87x the speed of
// one thread. Read once; the answer stays for the process's life.
int AvailableCpus();

namespace internal {

// The CPU quota, in CPUs, that the cgroup file systems mounted at `cgroup_root`
// (/sys/fs/cgroup) set for a process whose /proc/self/cgroup reads `self_cgroup`: the
// smallest over its cgroup and the cgroups above it, from cgroup v2's cpu.max
// ("150000 100000" is 1.5 CPUs, "max ..." none) or v1's cpu.cfs_quota_us over
// cpu.cfs_period_us (-1: none). Inside a cgroup namespace the mount's root is the
// process's own cgroup and the path in `self_cgroup` may not exist under it; the
// walk up the path then ends there. nullopt when nothing sets a quota.
std::optional<double> CgroupCpuLimit(const std::string& cgroup_root,
                                     const std::string& self_cgroup);

// min(affinity_cpus, ceil(limit)), at least 1.
int CpusWithin(int affinity_cpus, std::optional<double> limit);

}  // namespace internal
}  // namespace ember

#endif  // EMBER_BASE_CPUS_H_
