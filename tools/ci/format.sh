#!/usr/bin/env bash
# The C++ and CUDA files that clang-format (with the repository's .clang-format) would
# change, one a line; exits 1 if there is any. --fix formats them in place instead.
#
#   tools/ci/format.sh          # check, as CI does
#   tools/ci/format.sh --fix    # format every tracked file
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v clang-format >/dev/null || { echo "format: clang-format is not installed (./setup.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' ':!:third_party/**' ':!:tokenizer/unicode_tables.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
[ ${#bad[@]} -eq 0 ] || printf '%s\n' "${bad[@]}"
echo "format: ${#files[@]} files, ${#bad[@]} to format (tools/ci/format.sh --fix)"
[ ${#bad[@]} -eq 0 ]
