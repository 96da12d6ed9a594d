#!/usr/bin/env bash
# Saving and loading a sharded checkpoint, two builds of train side by side (the
# figures of docs/perf/distributed.md#distributed-checkpoints):
#
#   tools/reference/checkpoint_io.sh OLD_TRAIN NEW_TRAIN [ROUNDS]
#
# Each round, alternating the builds: gpt2-medium with FSDP on 4 ranks takes one step
# (1 x 32 tokens a rank) and saves its checkpoint (the save's time and memory, the
# file's size and md5); then that checkpoint resumes with FSDP on 2 ranks (x 2 rows) for
# one more step (the run's time and memory; the page cache dropped first where root may).
# Needs about 9 GB of disk under $WORK (default /tmp/checkpoint_io) and 16 GB of memory.
set -euo pipefail
old="$(realpath "${1:?usage: tools/reference/checkpoint_io.sh OLD_TRAIN NEW_TRAIN [ROUNDS]}")"
new="$(realpath "${2:?usage: tools/reference/checkpoint_io.sh OLD_TRAIN NEW_TRAIN [ROUNDS]}")"
rounds="${3:-2}"
work="${WORK:-/tmp/checkpoint_io}"
monitor=tools/reference/checkpoint_io_monitor.py
mpirun=(mpirun --oversubscribe)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
common=(--model=gpt2-medium --vocab=gpt2 --train_data=runs/data/brown_gpt2_train.bin
  --val_data=runs/data/brown_gpt2_val.bin --fsdp --seq_len=32 --warmup_steps=0 --val_every=0
  --sample_tokens=0)
mkdir -p "$work"
for round in $(seq "$rounds"); do
  for build in old new; do
    bin="${!build}"
    rm -rf "$work/save_$build" "$work/resume_$build"
    python3 "$monitor" "$work/save_$build" "round $round $build, save on 4 ranks" &
    "${mpirun[@]}" -np 4 "$bin" "${common[@]}" --batch_size=1 --steps=1 --out_dir="$work/save_$build" \
      >"$work/save_$build.log" 2>&1
    wait
    echo "  $(stat -c %s "$work/save_$build/checkpoint.safetensors") bytes, md5 $(md5sum <"$work/save_$build/checkpoint.safetensors" | cut -c1-12)"
    sync
    echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
    python3 "$monitor" "$work/resume_$build" "round $round $build, resume on 2 ranks" &
    start=$(date +%s.%N)
    "${mpirun[@]}" -np 2 "$bin" "${common[@]}" --batch_size=2 --steps=2 \
      --resume="$work/save_$build/checkpoint.safetensors" --save_checkpoint=/dev/null \
      --out_dir="$work/resume_$build" >"$work/resume_$build.log" 2>&1
    wait
    echo "  $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s; $(grep -o 'peak RSS [0-9]* MB' "$work/resume_$build.log" | head -1)"
    rm -rf "$work/save_$build"
  done
done
