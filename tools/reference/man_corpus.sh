#!/usr/bin/env bash
# Writes a ~20 MB mixed-language UTF-8 text of this machine's manual pages, rendered as
# a terminal shows them (`man -l`, 80 columns, no formatting bytes): English pages
# up to 12 MB, then each translation folder under /usr/share/man (de, fr, ja, ru, ...)
# up to 0.5 MB, each in sorted file order so the same machine gives the same file.
#
#   tools/reference/man_corpus.sh /tmp/man.txt
set -euo pipefail
out="${1:?usage: man_corpus.sh OUT}"
: >"$out"

# add LIMIT_BYTES FILES...: appends rendered pages until the text grew by LIMIT_BYTES.
add() {
  local limit=$(($(stat -c %s "$out") + $1))
  shift
  for page in "$@"; do
    [ "$(stat -c %s "$out")" -ge "$limit" ] && break
    # (timeout: groff hangs on a few translated pages)
    MANWIDTH=80 MAN_KEEP_FORMATTING=0 timeout 10 man -E UTF-8 -l "$page" 2>/dev/null | col -bx >>"$out" || true
  done
}

add $((12 << 20)) $(find /usr/share/man/man[1-8] -type f -name '*.gz' | sort)
for lang in /usr/share/man/*/; do
  case "$(basename "$lang")" in man*) continue ;; esac
  add $((1 << 19)) $(find "$lang" -type f -name '*.gz' | sort)
done
ls -l "$out"
