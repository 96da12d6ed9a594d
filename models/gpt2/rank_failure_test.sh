#!/usr/bin/env bash
# A rank that dies in the middle of an FSDP run, and the run resumed on fewer ranks:
# - the tiny GPT-2 trains with FSDP on 4 ranks, a checkpoint every 2 steps; once one
#   exists, rank 1 is killed with SIGKILL. mpirun ends the run (non-zero, within 30 s;
#   measured about 2 s), its message naming rank 1 and the signal;
# - the newest periodic checkpoint loads (written whole or not at all: atomic renames),
#   and the run resumes from it on 2 ranks with twice the batch per rank: 3 more steps
#   end with the weights and AdamW state of the same checkpoint resumed in one process
#   (1e-5, c_attn.bias 1e-4 absolute, as sharded_test).
set -uo pipefail
source base/expect.sh
train=models/gpt2/train
compare=(python3 models/common/compare_checkpoints.py)
dir="$TEST_TMPDIR"
python3 - "$dir/train.bin" "$dir/val.bin" <<'PY'
import struct, sys
for path, n in ((sys.argv[1], 4000), (sys.argv[2], 1000)):
    tokens = [(i * 7919 + i // 13) % 50257 for i in range(n)]
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", 20240520, 1, n, *([0] * 253)))
        f.write(struct.pack("<%dH" % n, *tokens))
PY
common=(--model=tiny --train_data="$dir/train.bin" --val_data="$dir/val.bin" --seq_len=16
  --warmup_steps=1 --lr=3e-3 --val_every=1000 --val_batches=2 --sample_tokens=0 --dist_timeout=60s
  --data_order=sequential --steps=2000)

# The run to kill: long enough (2000 steps) never to finish first.
"${test_mpirun[@]}" -np 4 $train "${common[@]}" --batch_size=1 --fsdp --checkpoint_every=2 \
  --keep_checkpoints=2 --out_dir="$dir/killed" >"$dir/killed.log" 2>&1 &
run=$!
for _ in $(seq 1200); do
  ls "$dir/killed/checkpoints/" 2>/dev/null | grep -q '^step_.*\.safetensors$' && break
  sleep 0.1
done
# Rank 1: the train process whose environment says so.
victim=""
for pid in $(pgrep -f "out_dir=$dir/killed"); do
  if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
    victim=$pid
  fi
done
expect "rank 1 found" "yes" "$([ -n "$victim" ] && echo yes)"
start=$SECONDS
kill -9 "$victim"
wait "$run"
status=$?
seconds=$((SECONDS - start))
expect "the run fails" "yes" "$([ "$status" -ne 0 ] && echo yes)"
expect "within 30 s (took ${seconds} s)" "yes" "$([ "$seconds" -lt 30 ] && echo yes)"
expect "mpirun names rank 1 and the signal" "1" "$(grep -c -m1 'rank 1 .*signal 9' "$dir/killed.log")"
latest=$(ls "$dir/killed/checkpoints/" | grep '^step_.*\.safetensors$' | sort | tail -1)
step=$((10#$(echo "$latest" | tr -dc 0-9)))
expect "a periodic checkpoint is left" "yes" "$([ "$step" -ge 2 ] && echo yes)"

# Resumed on 2 ranks x 2 and in one process x 4: the same global batch, 3 steps more.
resume=("${common[@]}" --steps=$((step + 3)) --resume="$dir/killed/checkpoints/$latest")
"${test_mpirun[@]}" -np 2 $train "${resume[@]}" --batch_size=2 --fsdp --out_dir="$dir/two" \
  >"$dir/two.log" 2>&1
expect "resumed on 2 ranks" "0" "$?"
expect "... from step $step" "1" "$(grep -c "resuming at step $step" "$dir/two.log")"
$train "${resume[@]}" --batch_size=4 --out_dir="$dir/one" >"$dir/one.log" 2>&1
expect "resumed in one process" "0" "$?"
"${compare[@]}" "$dir/two/checkpoint.safetensors" "$dir/one/checkpoint.safetensors" --tolerance=1e-5 \
  --absolute=c_attn.bias --absolute_tolerance=1e-4 >"$dir/cmp.log"
expect "2 ranks = 1 process: $(tail -1 "$dir/cmp.log")" "0" "$?"
expect_done
