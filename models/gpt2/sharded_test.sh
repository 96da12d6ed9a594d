#!/usr/bin/env bash
# Sharded training of the tiny GPT-2 under mpirun against one process with the whole
# batch (--batch_size=4), 3 steps in llm.c's order:
# - the weights and AdamW's state equal it to 1e-5 relative per tensor (L2), with FSDP on
#   2 and 4 ranks, tensor parallel on 2, and a 2 x 2 mesh of data and model with and
#   without FSDP (measured 1e-6 to 5e-6); the attention's c_attn.bias to 1e-4 absolute,
#   as in data_parallel_test (its key third's gradient is zero in exact arithmetic, so its
#   steps are rounding noise scaled by lr / eps: measured up to 1.4e-5);
# - a checkpoint saved on one mesh resumes on another, and in one process, to the same
#   numbers as the one-process run resumed;
# - FSDP's tensor memory per rank after a step (parameters, gradients, AdamW's state) is
#   at most 1/N of one process's plus the root's gathered weights (the embeddings, which
#   FSDP keeps whole through the step: 12.9 MB here), each rank reporting its own;
# - a network spec (tiny.json, the same GPT with no sharding code of its own) with FSDP
#   on 2 and 4 ranks equals its one-process run (measured 1.1e-6 and 1.4e-6), and one
#   on a model axis fails on every rank, saying it has no tensor-parallel layers;
# - bad meshes fail on every rank, saying why.
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
  --warmup_steps=1 --lr=3e-3 --val_every=100 --val_batches=2 --sample_tokens=0 --dist_timeout=120s
  --data_order=sequential)

# check NAME A B: the two checkpoints agree.
check() {
  "${compare[@]}" "$2/checkpoint.safetensors" "$3/checkpoint.safetensors" --tolerance=1e-5 \
    --absolute=c_attn.bias --absolute_tolerance=1e-4 >"$dir/cmp.log"
  local status=$?
  expect "$1: $(tail -1 "$dir/cmp.log")" "0" "$status"
  [ "$status" -eq 0 ] || cat "$dir/cmp.log"
}
# run NAME RANKS FLAGS...: trains 3 steps into $dir/NAME.
run() {
  local name="$1" ranks="$2"
  shift 2
  "${test_mpirun[@]}" -np "$ranks" $train "${common[@]}" --steps=3 --out_dir="$dir/$name" \
    --metrics_out="$dir/$name.json" "$@" >"$dir/$name.log" 2>&1
  expect "$name runs" "0" "$?"
  [ -f "$dir/$name/checkpoint.safetensors" ] || tail -5 "$dir/$name.log"
}
# live NAME: rank 0's tensor bytes after the last step.
live() { python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['live_memory_bytes'])" "$dir/$1.json"; }

$train "${common[@]}" --steps=3 --batch_size=4 --out_dir="$dir/one" --metrics_out="$dir/one.json" 2>/dev/null
expect "one process" "0" "$?"
run fsdp2 2 --batch_size=2 --fsdp
run fsdp4 4 --batch_size=1 --fsdp
run tp2 2 --batch_size=4 --mesh=model:2
run mesh 4 --batch_size=2 --mesh=data:2,model:2
run mesh_fsdp 4 --batch_size=2 --mesh=data:2,model:2 --fsdp
for name in fsdp2 fsdp4 tp2 mesh mesh_fsdp; do check "$name = 1 process x 4" "$dir/$name" "$dir/one"; done
expect "the plan names the mesh" "1" \
  "$(grep -c '^train: .* on 4 ranks (mesh data:2,model:2, FSDP) x cpu, .* 3 steps of 1 x 2 data ranks x 2 x 16 tokens' "$dir/mesh_fsdp.log")"
expect "every rank reports its memory" "0 1 2 3" \
  "$(grep -o '^train: rank [0-9]: tensor memory' "$dir/fsdp4.log" | cut -d' ' -f3 | tr -d : | sort | xargs)"

# Memory: 1/N of one process's state plus the root (wte and wpe, [50257 + 32, 64] f32,
# and ln_f), with 64 kB for the step's scalars.
root=$(((50257 + 32) * 64 * 4 + 2 * 64 * 4))
one=$(live one)
for n in 2 4; do
  got=$(live fsdp$n)
  bound=$((one / n + root + 65536))
  expect "FSDP on $n ranks holds $got <= $bound bytes" "yes" "$([ "$got" -le "$bound" ] && echo yes)"
done

# Resume on another mesh: 2 steps more, against the one-process run resumed.
$train "${common[@]}" --steps=5 --batch_size=4 --resume="$dir/one/checkpoint.safetensors" \
  --out_dir="$dir/resumed_one" 2>/dev/null
resume() {
  local name="$1" from="$2" ranks="$3"
  shift 3
  "${test_mpirun[@]}" -np "$ranks" $train "${common[@]}" --steps=5 \
    --resume="$dir/$from/checkpoint.safetensors" --out_dir="$dir/$name" "$@" >"$dir/$name.log" 2>&1
  expect "$name runs" "0" "$?"
  check "$name = 1 process resumed" "$dir/$name" "$dir/resumed_one"
}
resume fsdp2_on_tp2 fsdp2 2 --batch_size=4 --mesh=model:2
resume tp2_on_mesh_fsdp tp2 4 --batch_size=2 --mesh=data:2,model:2 --fsdp
resume mesh_fsdp_on_one mesh_fsdp 1 --batch_size=4

# A network spec: sharded by ShardedModel alone (each layer an FSDP unit but the tied wte).
spec=(--model="$PWD/models/gpt2/tiny.json")
$train "${common[@]}" "${spec[@]}" --steps=3 --batch_size=4 --out_dir="$dir/spec_one" 2>/dev/null
expect "a spec in one process" "0" "$?"
run spec_fsdp2 2 "${spec[@]}" --batch_size=2 --fsdp
run spec_fsdp4 4 "${spec[@]}" --batch_size=1 --fsdp
for name in spec_fsdp2 spec_fsdp4; do check "$name = 1 process x 4" "$dir/$name" "$dir/spec_one"; done
"${test_mpirun[@]}" -np 2 $train "${common[@]}" "${spec[@]}" --steps=3 --batch_size=4 --mesh=model:2 \
  --out_dir="$dir/bad" >"$dir/spec_tp.log" 2>&1
expect "a spec on a model axis fails" "yes" "$([ $? -ne 0 ] && echo yes)"
expect "... on every rank, saying why" "2" "$(grep -c 'this model has no tensor-parallel layers for the 2 ranks of its model axis' "$dir/spec_tp.log")"

# Bad input: every rank says what is wrong, and the run ends.
"${test_mpirun[@]}" -np 2 $train "${common[@]}" --steps=3 --batch_size=2 --mesh=data:2,model:2 \
  --out_dir="$dir/bad" >"$dir/bad.log" 2>&1
expect "a mesh that is not the world fails" "yes" "$([ $? -ne 0 ] && echo yes)"
expect "... on every rank, saying why" "2" "$(grep -c 'mesh data:2,model:2 has 4 ranks, but the world has 2' "$dir/bad.log")"
"${test_mpirun[@]}" -np 2 $train "${common[@]}" --steps=3 --batch_size=2 --model=tiny --n_head=3 \
  --n_embd=63 --mesh=model:2 --out_dir="$dir/bad" >"$dir/bad2.log" 2>&1
expect "heads that do not split fail" "yes" "$([ $? -ne 0 ] && echo yes)"
expect "... naming the parameter" "2" "$(grep -c 'h.0.attn.c_attn.weight .* does not split into 2 equal parts along mesh axis model' "$dir/bad2.log")"
expect_done
