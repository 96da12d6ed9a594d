#!/usr/bin/env bash
# Data-parallel training of the tiny GPT-2 under mpirun on 2 ranks (loopback), with
# --batch_size=2 per rank, plain and with --zero=1, in both data orders:
# - the weights after 3 steps equal one process's with --batch_size=2 --grad_accum=2 to
#   1e-6 (the same arithmetic: each half's mean gradient, halved, summed);
# - and one process's with --batch_size=4 to 1e-4 relative per tensor (L2; measured
#   2e-6 to 2e-5), the attention's c_attn.bias to 1e-5 absolute. A batch of 4 rounds
#   differently from two of 2 (the GEMMs sum 64 rows in another order), and AdamW
#   divides by sqrt(v) + eps, so parameters whose gradients are tiny move that rounding
#   up to the step's size: the zero-initialised biases most (c_attn.bias's key third has
#   a gradient that is zero in exact arithmetic, pure noise scaled by lr / eps = 3e5).
#   A data-parallel mistake (wrong rows, a sum for a mean) moves them by 1e-2 or more;
# - a ZeRO checkpoint from 2 ranks resumes on 1 process as the plain run does;
# - bad input fails on every rank, saying why.
set -uo pipefail
source base/expect.sh
train=models/gpt2/train
compare=(python3 models/common/compare_checkpoints.py)
mpirun=("${test_mpirun[@]}" -np 2)
dir="$TEST_TMPDIR"
python3 - "$dir/train.bin" "$dir/val.bin" <<'PY'
import struct, sys
for path, n in ((sys.argv[1], 4000), (sys.argv[2], 1000)):
    tokens = [(i * 7919 + i // 13) % 50257 for i in range(n)]
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", 20240520, 1, n, *([0] * 253)))
        f.write(struct.pack("<%dH" % n, *tokens))
PY
common=(--model=tiny --train_data="$dir/train.bin" --val_data="$dir/val.bin" --seq_len=16 --steps=3
  --warmup_steps=1 --lr=3e-3 --val_every=100 --val_batches=2 --sample_tokens=0 --dist_timeout=120s)

# check NAME A B [compare_checkpoints flags]: the two checkpoints agree.
check() {
  local name="$1" a="$2" b="$3"
  shift 3
  "${compare[@]}" "$a/checkpoint.safetensors" "$b/checkpoint.safetensors" "$@" >"$dir/cmp.log"
  local status=$?
  expect "$name: $(tail -1 "$dir/cmp.log")" "0" "$status"
  [ "$status" -eq 0 ] || cat "$dir/cmp.log"
}
for order in sequential random; do
  $train "${common[@]}" --data_order=$order --batch_size=4 --out_dir="$dir/one_$order" 2>"$dir/one_$order.log"
  expect "one process ($order)" "0" "$?"
  $train "${common[@]}" --data_order=$order --batch_size=2 --grad_accum=2 --out_dir="$dir/accum_$order" 2>/dev/null
  expect "one process, 2 micro-batches ($order)" "0" "$?"
  "${mpirun[@]}" $train "${common[@]}" --data_order=$order --batch_size=2 --out_dir="$dir/two_$order" \
    >"$dir/two_$order.log" 2>&1
  expect "2 ranks ($order)" "0" "$?"
  expect "2 ranks: rank 0 alone prints ($order)" "1" "$(grep -c '^train: .* on 2 ranks x cpu' "$dir/two_$order.log")"
  "${mpirun[@]}" $train "${common[@]}" --data_order=$order --batch_size=2 --zero=1 --out_dir="$dir/zero_$order" \
    >"$dir/zero_$order.log" 2>&1
  expect "2 ranks, ZeRO-1 ($order)" "0" "$?"
  for run in two zero; do
    check "$run = 1 process x 2 x 2 micro-batches ($order)" "$dir/${run}_$order" "$dir/accum_$order" --tolerance=1e-6
    check "$run = 1 process x 4 ($order)" "$dir/${run}_$order" "$dir/one_$order" --tolerance=1e-4 \
      --absolute=c_attn.bias
  done
done
check "ZeRO's optimizer state = the plain one's" "$dir/zero_random" "$dir/two_random" --prefix=optimizer. \
  --tolerance=1e-6
expect "the all-reduce's overlap is reported" "1" \
  "$(grep -c '^train: gradient all-reduce .* s per step, .*% of it hidden behind backward' "$dir/two_random.log")"
# The same losses in the CSV (rank 0 prints the mean over ranks).
expect "one CSV, the same losses" "$(cut -d, -f2 "$dir/one_sequential/metrics.csv" | cut -c1-6)" \
  "$(cut -d, -f2 "$dir/two_sequential/metrics.csv" | cut -c1-6)"

# Resume: ZeRO's 2-rank checkpoint on 1 process, and the plain 1-process one, 2 steps more.
$train "${common[@]}" --data_order=sequential --batch_size=4 --steps=5 --out_dir="$dir/resumed_one" \
  --resume="$dir/one_sequential/checkpoint.safetensors" 2>/dev/null
$train "${common[@]}" --data_order=sequential --batch_size=4 --steps=5 --out_dir="$dir/resumed_zero" \
  --resume="$dir/zero_sequential/checkpoint.safetensors" 2>/dev/null
check "saved on 2 ranks with ZeRO, resumed on 1" "$dir/resumed_zero" "$dir/resumed_one" --tolerance=1e-4 \
  --absolute=c_attn.bias

# Bad input: every rank says what is wrong, and the run ends.
"${mpirun[@]}" $train "${common[@]}" --batch_size=4 --steps=5 --resume="$dir/two_random/checkpoint.safetensors" \
  --out_dir="$dir/bad" >"$dir/bad.log" 2>&1
expect "a mismatched world size fails" "yes" "$([ $? -ne 0 ] && echo yes)"
expect "a mismatched world size is explained" "1" "$(grep -c -m1 'was saved by 2 rank(s) x batch_size 2 = 4 sequences per micro-batch, and this run has 2 x 4 = 8: resume with ranks x --batch_size = 4' "$dir/bad.log")"
"${mpirun[@]}" $train "${common[@]}" --batch_size=2 --resume="$dir/train.bin" --out_dir="$dir/bad" >"$dir/bad2.log" 2>&1
expect "a file that is no checkpoint fails" "yes" "$([ $? -ne 0 ] && echo yes)"
expect "... saying so" "1" "$(grep -c -m1 "^train: .*train.bin" "$dir/bad2.log")"
expect_done
