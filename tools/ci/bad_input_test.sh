#!/usr/bin/env bash
# Every binary's bad input, as the table of docs/troubleshooting.md lists it: each
# row's command is run here, on small files made below, and must exit with the row's code
# and print the row's message as its last line on stderr. The table is the test's data,
# so the docs and the binaries cannot drift apart.
set -uo pipefail
source base/expect.sh
runfiles="$PWD"
export BUILD_WORKSPACE_DIRECTORY="$runfiles"  # the vocabularies and the names, as `bazel run` finds them
work="$TEST_TMPDIR/work"
rm -rf "$work" && mkdir -p "$work/empty" && cd "$work" || exit 1

# The files the rows name: a text file, a small GPT-2 (GPT-2's vocabulary, trained one step)
# and a makemore checkpoint, made by the binaries themselves; the makemore checkpoint cut
# short, as a copy interrupted (2,360 bytes into its data: the header's length varies with
# the metadata it records, such as the training time); llm.c's tiny test model (a
# vocabulary of 96); bytes that are not UTF-8.
printf 'hello\n' >notes.txt
printf '\xff\xfe\n' >latin1.txt
for i in 1 2 3 4 5 6 7 8 9 10; do printf 'The quick brown fox jumps over the lazy dog %d. ' $(seq 60) >"doc$i.txt"; done
"$runfiles/tools/prepare_data/prepare_data" --input="$(ls doc*.txt | paste -sd,)" --out=brief >/dev/null 2>&1
expect "fixture: token shards" "brief_train.bin brief_val.bin" "$(ls brief_*.bin | paste -sd' ')"
"$runfiles/models/gpt2/train" --model=tiny --vocab=gpt2 --train_data=brief_train.bin --val_data=brief_val.bin \
  --steps=1 --warmup_steps=0 --batch_size=2 --seq_len=16 --val_batches=1 --sample_tokens=0 --out_dir=gpt2_run \
  --save_checkpoint=tiny.safetensors >/dev/null 2>&1
expect "fixture: a GPT-2 checkpoint" "0" "$?"
"$runfiles/models/makemore/train" --steps=2 --val_every=2 --samples=0 --out_dir=makemore_run >/dev/null 2>&1
expect "fixture: a makemore checkpoint" "0" "$?"
cp makemore_run/mlp.safetensors makemore.safetensors
header_bytes=$(od -An -tu8 -N8 makemore.safetensors | tr -d ' ')  # safetensors: a u64 LE header length
head -c $((8 + header_bytes + 2360)) makemore.safetensors >torn.safetensors
cp "$runfiles/models/gpt2/testdata/tiny_llmc.bin" llmc.bin

rows=0
while IFS= read -r line; do
  # | `//package:binary` | mistake | `flags` | exit | `message` |
  IFS='|' read -r _ target mistake flags code message _ <<<"$line"
  target="$(sed 's/^ *`//; s/` *$//' <<<"$target")"
  flags="$(sed 's/^ *`//; s/` *$//' <<<"$flags")"
  code="$(tr -d ' ' <<<"$code")"
  message="$(sed 's/^ *`//; s/` *$//' <<<"$message")"
  binary="${target#//}"
  binary="$runfiles/${binary/://}"
  eval "set -- $flags"
  "$binary" "$@" </dev/null >/dev/null 2>stderr.txt
  got=$?
  expect "${target##*:} $flags: exit code" "$code" "$got"
  expect "${target##*:} $flags: message" "$message" "$(tail -n 1 stderr.txt)"
  rows=$((rows + 1))
done < <(sed -n '/^<!-- bad input: begin -->$/,/^<!-- bad input: end -->$/p' "$runfiles/docs/troubleshooting.md" | grep '^| `//')
expect "rows run (docs/troubleshooting.md)" "ok" "$([ "$rows" -ge 40 ] && echo ok || echo "only $rows")"
expect_done
