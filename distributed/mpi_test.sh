#!/usr/bin/env bash
# The process group under mpirun on this machine (loopback, shared memory): the
# collectives', data-parallel, ZeRO-1, FSDP, sharded-model and tensor-parallel tests on 2 and 3 ranks, the
# mesh's on 4, and runs in which one rank dies, stalls or fails,
# each of which must end within seconds with a message, never hang.
set -uo pipefail
source base/expect.sh
mpirun=("${test_mpirun[@]}")
# Bazel's files for one gtest binary: every rank would create and remove the same
# premature-exit marker (a rank that found it gone failed the test) and write the same
# XML report.
unset TEST_PREMATURE_EXIT_FILE XML_OUTPUT_FILE

for test in process_group_test data_parallel_test zero_test fsdp_test sharded_model_test \
  tensor_parallel_test; do
  for n in 2 3; do
    log="$TEST_TMPDIR/$test.$n.log"
    "${mpirun[@]}" -np "$n" "distributed/$test" >"$log" 2>&1
    expect "$test on $n ranks" "0" "$?"
    expect "$test: every rank passed ($n)" "$n" "$(grep -c '^\[  PASSED  \]' "$log")"
    [ "$failures" -eq 0 ] || { tail -n 40 "$log"; expect_done; }
  done
done

# A 2 x 2 mesh: each axis' group holds the ranks along it.
log="$TEST_TMPDIR/mesh_test.4.log"
"${mpirun[@]}" -np 4 distributed/mesh_test >"$log" 2>&1
expect "mesh_test on 4 ranks" "0" "$?"
expect "mesh_test: every rank passed (4)" "4" "$(grep -c '^\[  PASSED  \]' "$log")"
[ "$failures" -eq 0 ] || { tail -n 40 "$log"; expect_done; }

probe=distributed/collective_probe
"${mpirun[@]}" -np 2 "$probe" >"$TEST_TMPDIR/ok.log" 2>&1
expect "all ranks sum" "2" "$(grep -c 'sum 2$' "$TEST_TMPDIR/ok.log")"

# run NAME ARGS...: the probe on 2 ranks; prints its status and seconds taken.
run() {
  local name="$1" start=$SECONDS
  shift
  timeout 120 "${mpirun[@]}" -np 2 "$probe" "$@" >"$TEST_TMPDIR/$name.log" 2>&1
  echo "$? $((SECONDS - start))"
}
# A rank that dies: mpirun ends the others.
read -r status seconds <<<"$(run exit --fail_rank=1 --failure=exit)"
expect "a dead rank fails the run" "yes" "$([ "$status" -ne 0 ] && [ "$status" -ne 124 ] && echo yes)"
expect "a dead rank is reported" "1" "$(grep -c -m1 'exit code\|exited\|non-zero' "$TEST_TMPDIR/exit.log")"
# A rank that stalls: the others give up after --dist_timeout, saying what they waited for.
read -r status seconds <<<"$(run stall --fail_rank=1 --failure=stall --dist_timeout=3s)"
expect "a stalled rank fails the run" "yes" "$([ "$status" -ne 0 ] && [ "$status" -ne 124 ] && echo yes)"
expect "within the timeout" "yes" "$([ "$seconds" -lt 60 ] && echo yes)"
expect "the waiting rank says why" "1" \
  "$(grep -c 'rank 0: all-reduce of 16 f32 on cpu did not finish within 3s: another rank has died or is stuck' "$TEST_TMPDIR/stall.log")"
# A rank with an error: it says so, and the others are ended with it.
read -r status seconds <<<"$(run error --fail_rank=0 --failure=error)"
expect "an error fails the run" "yes" "$([ "$status" -ne 0 ] && [ "$status" -ne 124 ] && echo yes)"
expect "the error is printed" "1" "$(grep -c '^collective_probe: a bad input on this rank' "$TEST_TMPDIR/error.log")"
expect_done
