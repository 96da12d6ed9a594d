#!/usr/bin/env bash
# Where GPT-2 124M's training step (16 x 1024; train's default dtype on a GPU, bf16, or
# what the flags after `steps` say, e.g. --dtype=f32 --tf32) spends the GPU's time, kernel
# by kernel: runs on the GPU machine over what tools/gpu/pack.sh packed,
#
#   tar -xJf .gpu.tar.xz && tools/gpu/profile.sh [steps [train flags...]]
#
# With Nsight Systems (nsys) it traces `steps` (default 6) steps and prints the kernels'
# summary (total time, calls, mean, by name), the CUDA API's (launches, copies,
# synchronizations: where the host waits) and the device memory copies. Without it,
# Nsight Compute (ncu) times every kernel of 3 steps, serialized (gpu__time_duration),
# and tools/gpu/kernel_times.py sums them by name. Each step's wall time is in train's
# log beside it: kernel time well under the step's means the GPU waits on the host.
set -uo pipefail
cd "$(dirname "$0")/../.."
steps="${1:-6}"
shift || true
OUT="${OUT:-/tmp/ember-gpu}"
mkdir -p "$OUT"
libs=("$PWD/.gpu/lib" /usr/local/cuda/lib64)
for d in $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(nvidia.__path__[0], p, "lib") for p in os.listdir(nvidia.__path__[0])))' 2>/dev/null); do
  libs+=("$d")
done
export LD_LIBRARY_PATH="$(IFS=:; echo "${libs[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$PATH:$(ls -d /usr/local/cuda*/bin /opt/nvidia/nsight-*/*/bin /opt/nvidia/nsight-*/bin 2>/dev/null | tr '\n' ':')"
train=(.gpu/bin/models_gpt2_train --device=cuda --model=gpt2 --train_data=runs/data/brown_gpt2_train.bin
  --val_data=runs/data/brown_gpt2_train.bin --batch_size=16 --seq_len=1024 --warmup_steps=1 --dropout=0
  --val_every=100000 --val_batches=1 --sample_tokens=0 --out_dir=/tmp/profile_run --save_checkpoint=/dev/null "$@")
echo "nsys: $(command -v nsys || echo none); ncu: $(command -v ncu || echo none)"
if command -v nsys >/dev/null; then
  nsys profile --trace=cuda --sample=none --cpuctxsw=none --force-overwrite=true -o "$OUT/step" \
    "${train[@]}" --steps="$steps" 2>&1 | tr '\r' '\n' | grep -E '^(step|train)' | tail -4
  nsys stats --force-export=true --report cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum \
    --format csv --output "$OUT/stats" "$OUT/step.nsys-rep" >/dev/null 2>&1
  for f in "$OUT"/stats_*.csv; do
    echo "== $(basename "$f")"
    head -40 "$f" | cut -c1-220
  done
  rm -f "$OUT/step.sqlite"
elif command -v ncu >/dev/null; then
  ncu --metrics gpu__time_duration.sum --csv --page raw "${train[@]}" --steps=3 >"$OUT/ncu.csv" 2>"$OUT/ncu.err"
  echo "ncu rc=$?"
  python3 tools/gpu/kernel_times.py "$OUT/ncu.csv" 3
fi
