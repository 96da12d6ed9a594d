#!/usr/bin/env bash
# prepare_data end to end: the Brown corpus with GPT-2 BPE (every 10th file to the
# validation shard, each file after <|endoftext|>) and a small text with characters;
# the shards' first tokens are the ids tiktoken gives for the text.
set -uo pipefail
tool=tools/prepare_data/prepare_data
export BUILD_WORKSPACE_DIRECTORY="$PWD"  # as under bazel run: downloads/ is found there
source base/expect.sh
# The tokens of a shard, one line, from its bytes (header: 256 int32; then uint16).
tokens() { od -An -v -tu2 -j1024 "$1" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }
count() { od -An -v -td4 -j8 -N4 "$1" | tr -d ' '; }

$tool --dataset=brown --encoding=gpt2 --out="$TEST_TMPDIR/brown" 2>"$TEST_TMPDIR/log" || { cat "$TEST_TMPDIR/log"; exit 1; }
expect "brown train tokens" "1220432" "$(count "$TEST_TMPDIR/brown_train.bin")"
expect "brown val tokens" "135682" "$(count "$TEST_TMPDIR/brown_val.bin")"
expect "progress reaches 100%" "1" "$(grep -c '100%' "$TEST_TMPDIR/log")"
# The first tokens: <|endoftext|>, then "The Fulton County Grand" (tiktoken's gpt2 ids).
expect "brown starts" "50256 464 44373 3418 5675" "$(tokens "$TEST_TMPDIR/brown_train.bin" | cut -d" " -f1-5)"

printf 'hello world\nhello there\n' >"$TEST_TMPDIR/small.txt"
$tool --input="$TEST_TMPDIR/small.txt" --encoding=char --val_fraction=0.25 --out="$TEST_TMPDIR/small" 2>/dev/null
# Characters in code point order: \n=0 ' '=1 d=2 e=3 h=4 l=5 o=6 r=7 t=8 w=9; 24 chars,
# the last 6 ("there\n") for validation.
expect "char train" "4 3 5 5 6 1 9 6 7 5 2 0 4 3 5 5 6 1" "$(tokens "$TEST_TMPDIR/small_train.bin")"
expect "char val" "8 4 3 7 3 0" "$(tokens "$TEST_TMPDIR/small_val.bin")"
expect "char vocab" '["\n"," ","d","e","h","l","o","r","t","w"]' "$(cat "$TEST_TMPDIR/small_vocab.json")"

expect "cl100k refused" "prepare_data: cl100k_base has 100277 tokens; shards store 16-bit ids (at most 65536)" \
  "$($tool --input="$TEST_TMPDIR/small.txt" --encoding=cl100k_base --out="$TEST_TMPDIR/x" 2>&1)"
printf 'caf\xe9\n' >"$TEST_TMPDIR/latin1.txt"
expect "not UTF-8" "prepare_data: $TEST_TMPDIR/latin1.txt: not valid UTF-8 at byte 3" \
  "$($tool --input="$TEST_TMPDIR/latin1.txt" --out="$TEST_TMPDIR/x" 2>&1)"
expect "no input" "prepare_data: give one of --input and --dataset" "$($tool --out="$TEST_TMPDIR/x" 2>&1)"
expect_done
