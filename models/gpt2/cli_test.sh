#!/usr/bin/env bash
# generate, eval and chat end to end: on a tiny model the train binary makes, and on
# the llm.c fixture (tools/reference/gpt2_export.py) whose loss PyTorch computed.
set -uo pipefail
source base/expect.sh
export BUILD_WORKSPACE_DIRECTORY="$PWD"  # the GPT-2 vocabulary
bin=models/gpt2
out="$TEST_TMPDIR/run"
mkdir -p "$out"
python3 models/gpt2/testdata/phrase_shards.py "$out"
python3 - "$out" <<'PY'
import sys
sys.path.insert(0, "models/gpt2/testdata")
from phrase_shards import shard
ref = dict(l.split(" ", 1) for l in open("models/gpt2/testdata/tiny_logits.txt").read().splitlines())
shard(sys.argv[1] + "/ref.bin", [int(v) for v in ref["ids"].split()])
open(sys.argv[1] + "/ref_loss.txt", "w").write("%.4f\n" % float(ref["loss"]))
PY
$bin/train --model=tiny --train_data="$out/train.bin" --val_data="$out/val.bin" --batch_size=4 --seq_len=16 --steps=6 \
  --warmup_steps=1 --val_every=6 --val_batches=2 --out_dir="$out" --sample_tokens=0 2>"$out/train.err"
expect "train" "0" "$?"
val="$(grep -o 'step 6: val loss [0-9.]*' "$out/train.err" | awk '{print $5}')"
ckpt="$out/checkpoint.safetensors"

# eval: the trainer's validation windows are eval's first 8 windows of 16.
$bin/eval --checkpoint="$ckpt" --tokens="$out/val.bin" --seq_len=16 --max_windows=8 --batch_size=3 \
  --metrics_out="$out/eval.json" >"$out/eval.out" 2>/dev/null
expect "eval exit" "0" "$?"
expect "eval = the trainer's val loss" "$val" "$(python3 -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["loss"])' "$out/eval.json")"
expect "eval counts" "8 128" "$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["windows"], m["tokens"])' "$out/eval.json")"
# Bits per byte: the loss in bits over the bytes of the 128 targets (tokens 1 to 128 of
# val.bin; "The" is 3 bytes, " quick" 6, ...).
expect "eval bits per byte" "ok" "$(python3 - "$out/eval.json" <<'PY'
import json, math, sys
m = json.load(open(sys.argv[1]))
length = dict(zip((464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13), (3, 6, 6, 4, 6, 5, 4, 5, 4, 1)))
phrase = (464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13)
text_bytes = sum(length[phrase[(i * 3) % 10]] for i in range(1, 129))
want = m["loss"] * 128 / math.log(2) / text_bytes
print("ok" if m["bytes"] == text_bytes and abs(m["bpb"] - want) < 1e-9 * want else (m, text_bytes, want))
PY
)"
expect "eval --vocab=none" "loss perplexity seconds tokens windows" \
  "$($bin/eval --checkpoint="$ckpt" --tokens="$out/val.bin" --seq_len=16 --max_windows=2 --vocab=none \
     --metrics_out="$out/eval2.json" >/dev/null 2>&1; python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1])))))' "$out/eval2.json")"
# eval on llm.c's file: one window of 12 over the 13 reference ids, PyTorch's loss.
expect "eval of llm.c weights = PyTorch" "$(cat "$out/ref_loss.txt")" \
  "$($bin/eval --checkpoint=models/gpt2/testdata/tiny_llmc.bin --tokens="$out/ref.bin" --seq_len=12 2>/dev/null | awk '{printf "%.4f", $2}')"
expect "eval needs tokens" "eval: --tokens=FILE is required" "$($bin/eval --checkpoint="$ckpt" 2>&1)"
expect "eval window" "eval: --seq_len=40: expected 1 to the model's block_size 32" \
  "$($bin/eval --checkpoint="$ckpt" --tokens="$out/val.bin" --seq_len=40 2>&1)"

# generate: the same text with and without the key/value cache.
gen=(--checkpoint="$ckpt" --prompt="The quick" --max_tokens=20 --temperature=1 --top_k=0 --stop_at_eot=false)
$bin/generate "${gen[@]}" >"$out/cached.txt" 2>"$out/gen.err"
expect "generate exit" "0" "$?"
$bin/generate "${gen[@]}" --kv_cache=false >"$out/uncached.txt" 2>/dev/null
expect "cache changes nothing" "" "$(diff "$out/cached.txt" "$out/uncached.txt")"
expect "prompt first" "The quick" "$(head -c 9 "$out/cached.txt")"
expect "speed line" "1" "$(grep -c '^generate: 20 tokens in' "$out/gen.err")"
expect "not GPT-2's vocabulary" "generate: models/gpt2/testdata/tiny_llmc.bin has a vocabulary of 96 tokens, not GPT-2's 50257, and names no other" \
  "$($bin/generate --checkpoint=models/gpt2/testdata/tiny_llmc.bin 2>&1)"

# chat: two turns, then EOF.
printf 'Hello there\nHow are you?\n' | $bin/chat --checkpoint="$ckpt" --max_reply_tokens=8 >"$out/chat.out" 2>/dev/null
expect "chat exit" "0" "$?"
expect "chat turns" "2" "$(grep -c '^User: Bot:' "$out/chat.out")"
expect_done
