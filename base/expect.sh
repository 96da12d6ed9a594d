# Sourced by the shell tests: `expect NAME WANT GOT` prints ok/FAIL and counts
# failures; `expect_done` exits non-zero if any failed; test_mpirun (below) runs ranks.
failures=0

expect() {
  if [ "$2" != "$3" ]; then
    echo "FAIL $1: want [$2], got [$3]"
    failures=$((failures + 1))
  else
    echo "ok   $1"
  fi
}

expect_done() {
  [ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
}

# mpirun as the shell tests run it: as root (CI's containers), more ranks than cores,
# ASan's leak check off for MPI's own allocations (under --config=asan), and each test's
# shared-memory and session files in its own folder. Bazel's sandbox gives every test
# its own process ids, so two tests' ranks can have the same pids, and with them the
# same file names in /dev/shm: a rank then crashed in MPI_Barrier.
test_mpirun=(mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS=detect_leaks=0
  --mca btl_vader_backing_directory "${TEST_TMPDIR:-/tmp}" --mca orte_tmpdir_base "${TEST_TMPDIR:-/tmp}")
