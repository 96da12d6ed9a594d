#!/usr/bin/env bash
# Builds every libFuzzer target (the *_fuzzer binaries, base/fuzzer.bzl) with clang under
# ASan and UBSan (--config=fuzz) and runs each over its seed corpus, then for a few
# seconds of new inputs, with libFuzzer's 2 GB memory limits: a crash, a leak, a
# failed check or an allocation past the limit fails the run.
#
#   tools/ci/fuzz.sh                 # every target, 5 s each
#   tools/ci/fuzz.sh 600 //data:idx_fuzzer    # one target for 10 minutes
#
# New inputs go to a temporary folder, not to the committed seed corpora. The last
# line of each target's log gives the executions and the coverage (libFuzzer's
# "Done N runs" and "cov:").
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-5}"
shift || true
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(bazel query 'attr(name, "_fuzzer$", kind(cc_binary, //...))' 2>/dev/null)
fi
bazel build --config=fuzz "${targets[@]}" || exit 1
new="$(mktemp -d)"
failed=0
for target in "${targets[@]}"; do
  package="${target#//}"
  package="${package%%:*}"
  name="${target##*:}"
  mkdir -p "$new/$name"
  corpus=()
  [ -d "$package/testdata/fuzz/$name" ] && corpus=("$PWD/$package/testdata/fuzz/$name")
  log="$new/$name.log"
  if bazel run --config=fuzz "$target" -- -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$new/" "$new/$name" "${corpus[@]}" >"$log" 2>&1; then
    printf 'PASS  %-28s %s\n' "$name" "$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$') runs, $(grep -o 'cov: [0-9]*' "$log" | tail -1)"
  else
    failed=$((failed + 1))
    printf 'FAIL  %-28s (log follows)\n' "$name"
    grep -v '^#[0-9]' "$log" | tail -n 40 | sed 's/^/      /'
  fi
done
rm -rf "$new"
[ "$failed" -eq 0 ]
