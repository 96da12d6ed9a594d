#!/usr/bin/env bash
# ember's tokenizer against tiktoken (its npm build: OpenAI's Rust core as WASM, run by
# node) on the same file in the same run: encode_ordinary of the whole file, median of
# three, single thread for both, then ember on every core.
#
#   tools/reference/bench_tokenizer.sh [FILE] [ENCODING]
#
# FILE defaults to a ~20 MB text of this machine's manual pages (man_corpus.sh);
# ENCODING to gpt2. Needs ./setup.sh (the vocabularies) and npm (fetches tiktoken once
# into ~/.cache/ember/tiktoken-node).
set -euo pipefail
cd "$(dirname "$0")/../.."
file="${1:-/tmp/ember-man-corpus.txt}"
encoding="${2:-gpt2}"
[ -f "$file" ] || tools/reference/man_corpus.sh "$file" >/dev/null
node_dir="$HOME/.cache/ember/tiktoken-node"
if [ ! -d "$node_dir/node_modules/tiktoken" ]; then
  mkdir -p "$node_dir" && (cd "$node_dir" && npm install --silent --no-save tiktoken@1.0.22 >/dev/null)
fi
bazel build -c opt //tools/tokenize 2>/dev/null
tool=(bazel-bin/tools/tokenize/tokenize count --vocab_dir=downloads/tokenizer --encoding="$encoding"
  --input="$file" --ordinary --timing --repeat=3)
"${tool[@]}" --threads=1 >/dev/null
NODE_PATH="$node_dir/node_modules" node tools/reference/bench_tiktoken.js "$file" "$encoding" 3
"${tool[@]}" --threads=0 >/dev/null
