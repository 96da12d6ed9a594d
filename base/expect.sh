# Sourced by the shell tests: `expect NAME WANT GOT` prints ok/FAIL and counts
# failures; `expect_done` exits non-zero if any failed.
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
