#!/usr/bin/env bash
# The train binary end to end on a tiny model and a small shard: progress, CSV and
# JSON lines, metrics JSON, checkpoint, --resume continuing the step count, a sample, and errors.
set -uo pipefail
source base/expect.sh
train=models/gpt2/train
export BUILD_WORKSPACE_DIRECTORY="$PWD"  # the GPT-2 vocabulary for the sample
out="$TEST_TMPDIR/run"
# A shard in llm.c's format: a repeating phrase of GPT-2 ids.
python3 - "$TEST_TMPDIR/train.bin" "$TEST_TMPDIR/val.bin" <<'PY'
import struct, sys
for path, n in ((sys.argv[1], 6000), (sys.argv[2], 1000)):
    tokens = [(464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13)[i % 10] for i in range(n)]
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", 20240520, 1, n, *([0] * 253)))
        f.write(struct.pack("<%dH" % n, *tokens))
PY
common=(--model=tiny --train_data="$TEST_TMPDIR/train.bin" --val_data="$TEST_TMPDIR/val.bin" --batch_size=4
  --seq_len=16 --warmup_steps=2 --val_every=4 --val_batches=2 --out_dir="$out" --lr=3e-3)
$train "${common[@]}" --steps=8 --sample_tokens=10 --metrics_out="$out/m.json" >"$out.stdout" 2>"$out.stderr"
expect "exit" "0" "$?"
expect "progress" "1" "$(tr '\r' '\n' <"$out.stderr" | grep -c '^step 8/8 | loss')"
expect "val loss lines" "3" "$(grep -c 'val loss' "$out.stderr")"  # step 0, 4 and 8
expect "csv rows" "10" "$(wc -l <"$out/metrics.csv")"
expect "csv header" "step,loss,val_loss,val_bpb,lr,grad_norm,tokens_per_second,seconds" "$(head -1 "$out/metrics.csv")"
expect "a log is whole lines" "0" "$(grep -c $'\r' "$out.stderr")"
# metrics.jsonl: a line a step with the CSV's keys, val_loss null between validations;
# step 0 has the first validation only.
jsonl="$(python3 -c '
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(len(rows), ",".join(rows[0]), [r["step"] for r in rows if r["val_loss"] is not None])' "$out/metrics.jsonl")"
expect "metrics.jsonl" "9 step,loss,val_loss,val_bpb,lr,grad_norm,tokens_per_second,seconds [0, 4, 8]" "$jsonl"
expect "step 0's row" "True None" "$(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r["val_bpb"] > 0, r["loss"])' "$out/metrics.jsonl")"
keys="$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1])))))' "$out/m.json")"
expect "metrics keys" "live_memory_bytes mfu parameters peak_memory_bytes steps tokens_per_second train_loss train_seconds val_bpb val_loss" "$keys"
# MFU is a GPU's share of its bf16 peak: null on the CPU.
expect "mfu on the CPU" "None" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mfu"])' "$out/m.json")"
# Bits per byte: the validation loss in bits over the bytes of its 2 x 4 x 16 targets
# (val.bin's tokens 1 to 128: " the" is 4 bytes, ...).
expect "val_bpb" "ok" "$(python3 - "$out/m.json" <<'PY'
import json, math, sys
m = json.load(open(sys.argv[1]))
phrase = (464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13)
length = dict(zip(phrase, (3, 6, 6, 4, 6, 5, 4, 5, 4, 1)))
text_bytes = sum(length[phrase[i % 10]] for i in range(1, 129))
want = m["val_loss"] * 128 / math.log(2) / text_bytes
print("ok" if abs(m["val_bpb"] - want) < 1e-9 * want else (m["val_bpb"], want))
PY
)"
learned="$(python3 -c 'import json,sys,math; m=json.load(open(sys.argv[1])); print(m["val_loss"] < math.log(50257) - 1)' "$out/m.json")"
expect "the loss fell" "True" "$learned"
expect "sample" "1" "$(grep -c -E -- '---- sample \([0-9]+ tokens' "$out.stdout")"
expect "checkpoint" "yes" "$([ -s "$out/checkpoint.safetensors" ] && echo yes)"
cp "$out/checkpoint.safetensors" "$TEST_TMPDIR/step8.safetensors"
$train "${common[@]}" --steps=12 --resume="$out/checkpoint.safetensors" --sample_tokens=0 2>"$out.stderr2"
expect "resume continues" "1" "$(grep -c 'resuming at step 8' "$out.stderr2")"
expect "resumed csv rows" "14" "$(wc -l <"$out/metrics.csv")"
expect "resumed jsonl rows" "13" "$(wc -l <"$out/metrics.jsonl")"
# loss.svg: both curves, the resumed run's drawn whole (12 training points, validation
# at steps 0, 4, 8 and 12, read back from the CSV).
expect "loss.svg" "2 4" "$(grep -c '<polyline' "$out/loss.svg") $(grep -c '<circle' "$out/loss.svg")"
expect "loss.svg train points" "12" "$(sed -n 's/.*<polyline[^>]*points="\([^"]*\)".*/\1/p' "$out/loss.svg" | head -1 | wc -w)"
# Resuming from an older checkpoint (as after a SIGKILL) drops the rows past it first.
$train "${common[@]}" --steps=10 --resume="$TEST_TMPDIR/step8.safetensors" --sample_tokens=0 2>/dev/null
expect "rows past the checkpoint dropped" "step 0 1 2 3 4 5 6 7 8 9 10" "$(cut -d, -f1 "$out/metrics.csv" | xargs)"
expect "and from the JSON lines" "0 1 2 3 4 5 6 7 8 9 10" \
  "$(python3 -c 'import json,sys; print(*[json.loads(l)["step"] for l in open(sys.argv[1])])' "$out/metrics.jsonl")"
cp "$TEST_TMPDIR/train.bin" "$TEST_TMPDIR/train2.bin"
$train "${common[@]}" --train_data="$TEST_TMPDIR/train*.bin" --steps=2 --warmup_steps=1 --sample_tokens=0 2>"$out.stderr3"
expect "a glob of shards" "1" "$(grep -c 'training tokens (.*train\*.bin: 2 shards)' "$out.stderr3")"
expect "a glob matching nothing" "train: --train_data=/nonexistent/*.bin matches no file" \
  "$($train "${common[@]}" --train_data='/nonexistent/*.bin' 2>&1)"
expect "bad preset" 'train: unknown model preset "gpt5"; known: gpt2, gpt2-medium, gpt2-large, gpt2-xl, small, demo, tiny' \
  "$($train "${common[@]}" --model=gpt5 2>&1)"
expect "bad order" "train: --data_order=shuffled: expected random or sequential" \
  "$($train "${common[@]}" --data_order=shuffled 2>&1)"
# A device that is not there: one line naming it and why (no GPU here, or not that many).
expect "missing device" "1" "$($train "${common[@]}" --device=cuda:99 2>&1 | grep -c '^train: --device=cuda:99: cuda:99')"
expect "bad device" "train: --device=gpu: expected cpu, cuda, cuda:N or auto" \
  "$($train "${common[@]}" --device=gpu 2>&1)"
# A plan from one process: GPT-2's table on a 2 x 2 mesh splits c_fc by its outputs over
# "model"; with embed=data (FSDP) also by its inputs over "data", a quarter a rank.
plan="$($train "${common[@]}" --print_shardings --mesh=data:2,model:2 2>/dev/null)"
expect "plan: tensor parallel" "1" "$(grep -c 'h.0.mlp.c_fc.weight *\[256, 64\] (mlp, embed)  -> \[128, 64\] (model, -)$' <<<"$plan")"
plan="$($train "${common[@]}" --print_shardings --mesh=data:2,model:2 \
  --sharding_rules=qkv=model,heads=model,mlp=model,embed=data 2>/dev/null)"
expect "plan: 2-D" "1" "$(grep -c 'h.0.mlp.c_fc.weight *\[256, 64\] (mlp, embed)  -> \[128, 32\] (model, data)$' <<<"$plan")"
# (the tiny model's vocabulary, replicated, is half its bytes)
expect "plan: bytes per rank" "parameters per rank: 6.5 MB of 13.3 MB (0.493)" "$(tail -n 1 <<<"$plan")"
expect "plan: --fsdp is that table" "$plan" \
  "$($train "${common[@]}" --print_shardings --mesh=data:2,model:2 --fsdp 2>/dev/null)"
expect "rules are for planning" "train: --sharding_rules is for planning with --print_shardings; training shards GPT-2 by its own table (--mesh's model axis, and --fsdp for the data axis)" \
  "$($train "${common[@]}" --sharding_rules=mlp=model 2>&1 | tail -1)"
expect "training knows data and model" "1" \
  "$($train "${common[@]}" --mesh=pipe:1 2>&1 | grep -c 'training knows the axes data and model, not pipe')"
expect "a mesh must fit the ranks" "1" \
  "$($train "${common[@]}" --mesh=model:2 2>&1 | grep -c 'mesh model:2 has 2 ranks, but the world has 1 (mpirun -np 2)')"
# nanoGPT's headerless train.bin (uint16 ids alone) trains as llm.c's shard of the same ids.
python3 - "$TEST_TMPDIR/train.bin" "$TEST_TMPDIR/headerless.bin" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(data[1024:])
PY
$train "${common[@]}" --model=tiny --seq_len=16 --steps=2 --warmup_steps=1 --sample_tokens=0 \
  --data_order=sequential --out_dir="$TEST_TMPDIR/llmc" 2>"$TEST_TMPDIR/llmc.log"
$train "${common[@]}" --model=tiny --seq_len=16 --steps=2 --warmup_steps=1 --sample_tokens=0 \
  --data_order=sequential --train_data="$TEST_TMPDIR/headerless.bin" --out_dir="$TEST_TMPDIR/bare" \
  2>"$TEST_TMPDIR/bare.log"
expect "headerless tokens train" "0" "$?"
expect "... to llm.c's numbers" "$(grep -o 'loss [0-9.]*' "$TEST_TMPDIR/llmc.log" | tail -1)" \
  "$(grep -o 'loss [0-9.]*' "$TEST_TMPDIR/bare.log" | tail -1)"

# A network spec: tiny.json is the tiny GPT, and takes the preset's steps (losses and
# validation losses the same), then resumes from its checkpoint, which holds the spec.
spec=(--steps=3 --warmup_steps=1 --val_every=3 --sample_tokens=0)
$train "${common[@]}" "${spec[@]}" --out_dir="$TEST_TMPDIR/preset" 2>"$TEST_TMPDIR/preset.log"
$train "${common[@]}" "${spec[@]}" --model="$PWD/models/gpt2/tiny.json" \
  --out_dir="$TEST_TMPDIR/spec" 2>"$TEST_TMPDIR/spec.log"
expect "a spec trains" "0" "$?"
expect "its plan" "1" "$(grep -c "train: the model spec $PWD/models/gpt2/tiny.json on cpu.*, 3.32M parameters" "$TEST_TMPDIR/spec.log")"
expect "the spec's losses are the preset's" "$(cut -d, -f1-3 "$TEST_TMPDIR/preset/metrics.csv")" \
  "$(cut -d, -f1-3 "$TEST_TMPDIR/spec/metrics.csv")"
$train "${common[@]}" "${spec[@]}" --steps=4 --resume=latest --out_dir="$TEST_TMPDIR/spec" \
  2>"$TEST_TMPDIR/resume.log"
expect "a spec's run resumes" "1" "$(grep -c 'the model spec of the checkpoint.*resuming at step 3' "$TEST_TMPDIR/resume.log")"
expect "generate refuses it" "1" "$(models/gpt2/generate --checkpoint="$TEST_TMPDIR/spec/checkpoint.safetensors" 2>&1 | grep -c 'holds the weights of a network spec')"
expect "a spec's own sizes" "train: --model=$PWD/models/gpt2/tiny.json: a spec gives its own sizes (--n_layer, --n_head, --n_embd and --block_size change a preset's)" \
  "$($train "${common[@]}" --model="$PWD/models/gpt2/tiny.json" --n_layer=3 2>&1 | tail -1)"
expect "too long for its positions" "1" \
  "$($train "${common[@]}" --model="$PWD/models/gpt2/tiny.json" --seq_len=40 2>&1 | grep -c 'the model spec on ids \[1, 40\]: layer wpe (PositionEmbedding)')"
expect_done
