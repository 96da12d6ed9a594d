#!/usr/bin/env bash
# ember and an independent Python reader/writer (json + struct, no safetensors
# package) exchange safetensors files: each reads the other's file, and all four
# readings print the same tensors, bit for bit.
set -euo pipefail
ember="$1"
python="$2"
dir="${TEST_TMPDIR:-$(mktemp -d)}"

"$ember" write "$dir/ember.safetensors"
python3 "$python" write "$dir/python.safetensors"

"$ember" dump "$dir/ember.safetensors" >"$dir/ember_by_ember.txt"
python3 "$python" dump "$dir/ember.safetensors" >"$dir/ember_by_python.txt"
"$ember" dump "$dir/python.safetensors" >"$dir/python_by_ember.txt"
python3 "$python" dump "$dir/python.safetensors" >"$dir/python_by_python.txt"

cat "$dir/ember_by_ember.txt"
test "$(wc -l <"$dir/ember_by_ember.txt")" -eq 12  # 2 metadata + 10 tensors
for reading in ember_by_python python_by_ember python_by_python; do
  if ! diff -u "$dir/ember_by_ember.txt" "$dir/$reading.txt"; then
    echo "FAIL: $reading differs from ember's reading of its own file" >&2
    exit 1
  fi
done
echo "PASS: four readings agree"
