#!/usr/bin/env bash
# Stopping a training run: SIGINT mid-run finishes the step, writes a checkpoint and
# exits 130, and --resume=latest ends at the same weights as a run never stopped (bit
# for bit); SIGTERM exits 143; a second SIGINT exits at once; SIGKILL while checkpoints
# are being written, again and again, always leaves the newest complete one loadable.
set -uo pipefail
source base/expect.sh
train=models/gpt2/train
eval=models/gpt2/eval
export BUILD_WORKSPACE_DIRECTORY="$PWD"
T="$TEST_TMPDIR"
python3 - "$T" <<'PY'
import struct, sys
for name, n in (("train", 6000), ("val", 1000)):
    tokens = [(464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13)[(i * 7) % 10] for i in range(n)]
    with open(f"{sys.argv[1]}/{name}.bin", "wb") as f:
        f.write(struct.pack("<256i", 20240520, 1, n, *([0] * 253)))
        f.write(struct.pack("<%dH" % n, *tokens))
PY
common=(--model=tiny --train_data="$T/train.bin" --val_data="$T/val.bin" --batch_size=4 --seq_len=16
  --warmup_steps=2 --val_every=1000 --val_batches=1 --sample_tokens=0 --lr=3e-3)

# wait_rows FILE N: until FILE has at least N lines (at most 60 s).
wait_rows() {
  for _ in $(seq 600); do
    [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
    sleep 0.1
  done
  return 1
}
# loads CHECKPOINT: whether eval reads it.
loads() { $eval --checkpoint="$1" --tokens="$T/val.bin" --seq_len=16 --max_windows=1 >/dev/null 2>&1 && echo yes || echo no; }

# Long enough that the signal comes mid-run.
$train "${common[@]}" --steps=24 --out_dir="$T/whole" 2>"$T/whole.err"
expect "the uninterrupted run" "0" "$?"

# SIGINT once six steps are logged (after the header and step 0's row); then resume.
$train "${common[@]}" --steps=24 --out_dir="$T/cut" 2>"$T/cut.err" &
pid=$!
wait_rows "$T/cut/metrics.csv" 8
kill -INT "$pid"
wait "$pid"
expect "SIGINT: exit 130" "130" "$?"
expect "SIGINT: says where it stopped" "1" "$(grep -c 'stopped by signal 2 after step .*continue with --resume=latest' "$T/cut.err")"
expect "SIGINT: one checkpoint, before the end" "1" "$(ls "$T/cut/checkpoints" | grep -c '^step_0000[0-2][0-9].safetensors$')"
$train "${common[@]}" --steps=24 --out_dir="$T/cut" --resume=latest 2>"$T/resume.err"
expect "resume: exit 0" "0" "$?"
expect "resume: from the step it stopped at" "1" "$(grep -c 'resuming at step' "$T/resume.err")"
python3 models/common/compare_checkpoints.py "$T/whole/checkpoint.safetensors" "$T/cut/checkpoint.safetensors" \
  --tolerance 0 >"$T/compare.out" 2>&1
expect "stopped and resumed = never stopped (every tensor, bit for bit)" "0" "$?"

# SIGTERM: 143.
$train "${common[@]}" --steps=400 --out_dir="$T/term" 2>/dev/null &
pid=$!
wait_rows "$T/term/metrics.csv" 4
kill -TERM "$pid"
wait "$pid"
expect "SIGTERM: exit 143" "143" "$?"
expect "SIGTERM: its checkpoint loads" "yes" "$(loads "$(ls -t "$T"/term/checkpoints/*.safetensors | head -1)")"

# Two SIGINTs: out at once; the checkpoints written before still load.
$train "${common[@]}" --steps=400 --checkpoint_every=2 --out_dir="$T/twice" 2>/dev/null &
pid=$!
wait_rows "$T/twice/metrics.csv" 7
kill -INT "$pid"
kill -INT "$pid"
wait "$pid"
expect "two SIGINTs: exit 130" "130" "$?"
for f in "$T"/twice/checkpoints/*.safetensors; do expect "two SIGINTs: $(basename "$f") loads" "yes" "$(loads "$f")"; done

# SIGKILL at random moments of a run that writes a checkpoint every step, resumed after
# each kill: the newest complete checkpoint always loads, and at most --keep_checkpoints
# are kept.
$train "${common[@]}" --steps=3 --out_dir="$T/kill" 2>/dev/null  # a first checkpoint.safetensors
for i in $(seq 8); do
  $train "${common[@]}" --steps=100000 --checkpoint_every=1 --keep_checkpoints=2 --out_dir="$T/kill" \
    --resume=latest 2>/dev/null &
  pid=$!
  sleep "0.$((RANDOM % 9 + 4))"
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  newest="$(ls -t "$T"/kill/checkpoints/*.safetensors "$T/kill/checkpoint.safetensors" 2>/dev/null | head -1)"
  expect "SIGKILL $i: the newest checkpoint loads" "yes" "$(loads "$newest")"
done
expect "at most 2 kept" "yes" "$([ "$(ls "$T"/kill/checkpoints/*.safetensors | wc -l)" -le 2 ] && echo yes)"

expect_done
