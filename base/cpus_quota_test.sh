#!/usr/bin/env bash
# AvailableCpus on the real system: under taskset -c 0 it is 1, and inside a new cgroup
# allowed one CPU's time (cgroup v1's cpu.cfs_quota_us or v2's cpu.max) it is 1 too,
# whatever the machine's count. The cgroup half needs root and a writable cgroup file
# system, and says SKIP without them.
set -uo pipefail
source base/expect.sh
probe=base/cpus_probe
expect "taskset -c 0" "1" "$(taskset -c 0 "$probe")"
name="ember_cpus_test_$$_$RANDOM"
if mkdir "/sys/fs/cgroup/cpu/$name" 2>/dev/null; then  # v1: the cpu controller's mount
  dir="/sys/fs/cgroup/cpu/$name"
  echo 100000 >"$dir/cpu.cfs_period_us" && echo 100000 >"$dir/cpu.cfs_quota_us"
elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null && mkdir "/sys/fs/cgroup/$name" 2>/dev/null; then
  dir="/sys/fs/cgroup/$name"  # v2
  echo "100000 100000" >"$dir/cpu.max"
else
  echo "SKIP (the cgroup half): cannot make a cgroup here (needs root and a writable /sys/fs/cgroup)"
  expect_done
  exit 0
fi
echo "probe without a quota: $("$probe") CPUs"
got="$(sh -c "echo \$\$ >'$dir/cgroup.procs' && exec '$probe'")"
rmdir "$dir"
expect "one CPU's quota" "1" "$got"
expect_done
