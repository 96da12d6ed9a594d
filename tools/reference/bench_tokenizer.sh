#!/usr/bin/env bash
# The tokenizer speed table of docs/perf/tokenizer.md: encode_ordinary of one file by ember
# (`tokenize count --timing`, 1 thread and every core), tiktoken (its npm build: OpenAI's
# Rust core as WASM, run by node, 1 thread) and, when QUICKTOK_DIR names a quicktok
# checkout built with its own Makefile (`make lib bench-tools`), quicktok's
# bench/bench_file (1 thread; cl100k_base and o200k_base). The runs alternate, ROUNDS
# rounds of each; a cell is the median of its rounds' MB/s (each round: ember and
# quicktok the best of 5 encodes, quicktok's own rule; tiktoken the median of 3). Then decoding
# the file's ids back to its bytes, ember and tiktoken (MB/s of bytes out), and the
# worst case, a run of one letter and a run of spaces: ember on 1 MB, tiktoken (which is
# quadratic there) on 100 kB.
#
#   tools/reference/bench_tokenizer.sh [FILE] [ROUNDS]
#
# FILE defaults to a ~20 MB text of this machine's manual pages (man_corpus.sh). Needs
# ./setup.sh (the vocabularies) and npm (fetches tiktoken once into
# ~/.cache/ember/tiktoken-node).
set -euo pipefail
cd "$(dirname "$0")/../.."
file="${1:-/tmp/ember-man-corpus.txt}"
rounds="${2:-3}"
[ -f "$file" ] || tools/reference/man_corpus.sh "$file" >/dev/null
node_dir="$HOME/.cache/ember/tiktoken-node"
if [ ! -d "$node_dir/node_modules/tiktoken" ]; then
  mkdir -p "$node_dir" && (cd "$node_dir" && npm install --silent --no-save tiktoken@1.0.22 >/dev/null)
fi
bazel build -c opt //tools/tokenize 2>/dev/null
tool=$(mktemp)
ids=$(mktemp)
trap 'rm -f "$tool" "$ids" /tmp/ember-worst-*.txt' EXIT
cp -f bazel-bin/tools/tokenize/tokenize "$tool" && chmod +x "$tool"
quicktok="${QUICKTOK_DIR:-}"

mbs() { grep -o '[0-9.]* MB/s' | head -1 | cut -d' ' -f1; }
best_mbs() { grep -o 'best [0-9.]* s, [0-9.]* MB/s' | head -1 | grep -o '[0-9.]* MB/s' | cut -d' ' -f1; }
seconds() { grep -o '[0-9.]* s (median' | head -1 | cut -d' ' -f1; }
ember() { "$tool" count --vocab_dir=downloads/tokenizer --encoding="$1" --input="$2" --ordinary --timing \
  --repeat=5 --threads="$3" 2>&1 >/dev/null | best_mbs; }
tiktoken() { NODE_PATH="$node_dir/node_modules" node tools/reference/bench_tiktoken.js "$2" "$1" 3; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2fx", a / b; else print "-"}'; }

echo "$(date -u +%F), $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, $(basename "$file") ($(stat -c %s "$file") bytes)"
echo
echo "| encoding | ember, 1 thread | ember, $(nproc) threads | quicktok, 1 thread | tiktoken (WASM), 1 thread | ember / quicktok | ember / tiktoken |"
echo "|---|---:|---:|---:|---:|---:|---:|"
decode_rows=""
for encoding in gpt2 cl100k_base o200k_base; do
  "$tool" encode --vocab_dir=downloads/tokenizer --encoding="$encoding" --input="$file" --ordinary > "$ids"
  e1="" e2="" q="" t="" d="" td=""
  for _ in $(seq "$rounds"); do
    e1+=" $(ember "$encoding" "$file" 1)"
    if [ -n "$quicktok" ] && [ "$encoding" != gpt2 ]; then
      q+=" $("$quicktok/build/bench_file" "$file" "$encoding" "$quicktok/data" | mbs)"
    fi
    out=$(tiktoken "$encoding" "$file")
    t+=" $(echo "$out" | head -1 | mbs)" td+=" $(echo "$out" | sed -n 2p | mbs)"
    e2+=" $(ember "$encoding" "$file" 0)"
    d+=" $("$tool" decode --vocab_dir=downloads/tokenizer --encoding="$encoding" --input="$ids" --timing --repeat=5 \
      2>&1 >/dev/null | mbs)"
  done
  e1=$(echo "$e1" | median) e2=$(echo "$e2" | median) t=$(echo "$t" | median)
  d=$(echo "$d" | median) td=$(echo "$td" | median)
  q=$( [ -n "$q" ] && echo "$q" | median || echo 0)
  echo "| $encoding | $e1 | $e2 | $( [ "$q" = 0 ] && echo - || echo "$q") | $t | $(ratio "$e1" "$q") | $(ratio "$e1" "$t") |"
  decode_rows+="| $encoding | $d | $td | $(ratio "$d" "$td") |"$'\n'
done

echo
echo "| decode | ember, 1 thread | tiktoken (WASM), 1 thread | ember / tiktoken |"
echo "|---|---:|---:|---:|"
printf '%s' "$decode_rows"

echo
echo "| worst case (cl100k_base) | ember, 1 MB | tiktoken, 100 kB | tiktoken's time on 10x less text / ember's |"
echo "|---|---:|---:|---:|"
for unit in a " "; do
  python3 -c "import sys; open(sys.argv[1], 'w').write(sys.argv[2] * 1000000)" /tmp/ember-worst-1m.txt "$unit"
  python3 -c "import sys; open(sys.argv[1], 'w').write(sys.argv[2] * 100000)" /tmp/ember-worst-100k.txt "$unit"
  es=$("$tool" count --vocab_dir=downloads/tokenizer --encoding=cl100k_base --input=/tmp/ember-worst-1m.txt \
    --ordinary --timing --repeat=3 --threads=1 2>&1 >/dev/null | seconds)
  ts=$(NODE_PATH="$node_dir/node_modules" node tools/reference/bench_tiktoken.js /tmp/ember-worst-100k.txt \
    cl100k_base 1 2>/dev/null | head -1 | seconds || true)
  echo "| a run of \"$unit\" | $es s | ${ts:-fails} s | $(ratio "${ts:-0}" "$es") |"
done
