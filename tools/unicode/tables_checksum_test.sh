#!/usr/bin/env bash
# tokenizer/unicode_tables.h must be the file tools/unicode/generate.sh wrote (its
# SHA-256 as recorded then): edit the generator and rerun it, never the table.
set -euo pipefail
if ! sha256sum --check tools/unicode/unicode_tables.sha256; then
  echo "tokenizer/unicode_tables.h is not the generated table: run tools/unicode/generate.sh" >&2
  exit 1
fi
