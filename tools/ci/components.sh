#!/usr/bin/env bash
# Runs every top-level component's tests on its own (bazel test //<component>/...),
# so that a change's blast radius shows as one PASS/FAIL line per component; then
# everything again optimised (-O3: the vectorised paths differ) and under
# AddressSanitizer and UndefinedBehaviorSanitizer together, every libFuzzer target for
# a few seconds (tools/ci/fuzz.sh), the CUDA targets built with nvcc (when a toolkit is
# installed; their tests skip without a GPU), the docs' links and names
# (tools/ci/docs.sh), the folders' one-way includes (tools/ci/layering.py), `pip install
# ./python` into a new environment (tools/ci/pip_install.sh), the formatting
# (tools/ci/format.sh), and the consumer workspace in
# examples/consumer that depends on @ember//tensor and @ember//tokenizer. Ends with one line
# "components: N passed, M failed" and exits non-zero if anything failed.
#
#   tools/ci/components.sh              # everything
#   tools/ci/components.sh tensor base  # only these components (no sanitizers, fuzzing, docs, layering, format or consumer)
set -uo pipefail
cd "$(dirname "$0")/../.."

logs="$(mktemp -d)"
passed=0
failed=0

# .bazelrc's disk cache (~/.cache/ember/bazel-disk) makes a fresh clone's build fast where
# the same sources were built before, but Bazel 4 never trims it, and CI runs on the
# machine where the sessions built: without a bound it fills the disk, and the last
# components fail to build or install. Keep the newest EMBER_DISK_CACHE_GIB (default 12;
# one cold run of everything writes about 7) by access time.
trim_disk_cache() {
  local dir="$HOME/.cache/ember/bazel-disk"
  local limit=$((${EMBER_DISK_CACHE_GIB:-12} * 1024 * 1024)) total
  [ -d "$dir" ] || return 0
  total="$(du -sk "$dir" | cut -f1)"
  [ "$total" -gt "$limit" ] || return 0
  find "$dir" -type f -printf '%A@ %k %p\n' | sort -n | while read -r _ kib path; do
    [ "$total" -le "$limit" ] && break
    rm -f "$path"
    total=$((total - kib))
  done
  echo "disk cache trimmed to ${EMBER_DISK_CACHE_GIB:-12} GiB ($dir)"
}

# free_disk: the space left where the build writes, e.g. "41G".
free_disk() { df -h --output=avail "$HOME" | tail -n 1 | tr -d ' '; }

# run NAME COMMAND...: runs the command with its output in a log, prints one line.
run() {
  local name="$1"
  shift
  local start=$SECONDS
  if "$@" >"$logs/$name.log" 2>&1; then
    passed=$((passed + 1))
    printf 'PASS  %-16s %4ds\n' "$name" $((SECONDS - start))
  else
    failed=$((failed + 1))
    printf 'FAIL  %-16s %4ds  (log follows)\n' "$name" $((SECONDS - start))
    tail -n 60 "$logs/$name.log" | sed 's/^/      /'
    echo "      (disk: $(free_disk) free)"
  fi
}

trim_disk_cache
echo "disk: $(free_disk) free"

if [ $# -gt 0 ]; then
  components=("$@")
else
  components=()
  for dir in */; do
    dir="${dir%/}"
    case "$dir" in third_party | examples | downloads | docs | bazel-*) continue ;; esac
    [ -n "$(find "$dir" -name BUILD -print -quit)" ] && components+=("$dir")
  done
fi

for c in "${components[@]}"; do
  run "$c" bazel test "//$c/..."
done

if [ $# -eq 0 ]; then
  run opt bazel test --config=opt //...
  run asan+ubsan bazel test --config=asan --config=ubsan //...
  run fuzz tools/ci/fuzz.sh 5
  if [ -x "${CUDA_PATH:-/usr/local/cuda}/bin/nvcc" ]; then
    run cuda bazel test --config=cuda //kernels/... //tensor/...
  else
    echo "SKIP  cuda              (no CUDA toolkit at ${CUDA_PATH:-/usr/local/cuda})"
  fi
  run pip tools/ci/pip_install.sh
  run docs tools/ci/docs.sh
  run layering python3 tools/ci/layering.py
  run format tools/ci/format.sh
  run consumer bash -c 'cd examples/consumer && bazel test //... && bazel run //:hello'
fi

echo "components: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
