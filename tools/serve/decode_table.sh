#!/bin/bash
# Batch-1 decoding of GPT-2 124M: `generate` with each --weights (unpacked f32, then
# packed f32, bf16, int8), 128 greedy tokens after "The", beside PyTorch 1.13 with its
# key/value cache (f32 and bf16 autocast) and the bound the memory sets (its measured read
# bandwidth over the bytes of weights a token reads), the commands alternating, ROUNDS
# rounds:
#
#   tools/serve/decode_table.sh CHECKPOINT [ROUNDS]
#
# CHECKPOINT is a GPT-2 124M checkpoint (the speed does not depend on the weights; one
# training step makes one: bazel run -c opt //models/gpt2:train -- --model=gpt2
# --train_data=runs/data/brown_gpt2_train.bin --val_data=runs/data/brown_gpt2_val.bin
# --batch_size=1 --seq_len=64 --steps=1 --val_every=0 --sample_tokens=0 --out_dir=/tmp/g124).
set -euo pipefail
cd "$(dirname "$0")/../.."
checkpoint=${1:?usage: tools/serve/decode_table.sh CHECKPOINT [ROUNDS]}
rounds=${2:-2}
[[ -f $checkpoint ]] || { echo "decode_table: no checkpoint at $checkpoint" >&2; exit 1; }
bazel build -c opt //models/gpt2:generate //kernels/cpu:packed_linear_benchmark >&2
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "flags: $(grep -o -w 'avx512_bf16\|amx_bf16' /proc/cpuinfo | sort -u | xargs)"
bandwidth() {
  bazel-bin/kernels/cpu/packed_linear_benchmark --benchmark_filter=BM_ReadBandwidth \
    --benchmark_min_time=1 2>/dev/null | grep -o 'GB/s=[0-9.]*' | cut -d= -f2
}
for round in $(seq "$rounds"); do
  echo "round $round: read bandwidth $(bandwidth) GB/s"
  for weights in none f32 bf16 int8; do
    line=$(bazel-bin/models/gpt2/generate --checkpoint="$checkpoint" --prompt=The \
      --max_tokens=128 --temperature=0 --stop_at_eot=false --weights="$weights" 2>&1 >/dev/null)
    mb=$(grep -o '([0-9.]* MB a token)' <<<"$line" | grep -o '[0-9.]*')
    rate=$(grep -o '[0-9.]* tokens/s' <<<"$line" | cut -d' ' -f1)
    echo "  ember --weights=$weights: $rate tokens/s, $mb MB of weights a token"
  done
  for bf16 in "" --bf16; do
    echo "  pytorch ${bf16:-f32}: $(OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 \
      tools/reference/gpt2_generate_torch.py --preset=gpt2 --tokens=128 --cache_only $bf16 |
      grep -o '"tokens_per_second_kv_cache": [0-9.]*' | cut -d' ' -f2) tokens/s"
  done
done
