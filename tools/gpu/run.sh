#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, over what tools/gpu/pack.sh packed
# (the device tool's `run` with carry [".gpu.tar.xz", "runs/data/brown_gpt2_train.bin",
# "downloads/tokenizer/encoder.json", "downloads/tokenizer/vocab.bpe"]: about 55 MB of
# the 64 MiB it carries):
#
#   tar -xJf .gpu.tar.xz && tools/gpu/run.sh [--steps=LIST] [budget_s] [memcheck_glob]
#
# --steps picks what runs, in the order given (default: all but ncu, in this order):
#   tests      every test binary (gtest XML and log);
#   bench      the kernel benchmark (JSON; BENCH_FILTER picks its rows);
#   torch      PyTorch's times for the benchmark's shapes;
#   gpt2       GPT-2 124M training steps with ember's `train` (batch 16 x 1024, TF32 on
#              and off; --dtype=bf16 too, and bf16 at llm.c's 64 x 1024) and a few steps
#              of the main job's GPU shape, whose
#              checkpoint `generate` then continues (tokens/s at batch 1, with and
#              without the key/value cache);
#   refs       the references' steps: llm.c's train_gpt2cu (bf16 at 16 and 64 x 1024, and
#              train_gpt2cu_fp32 at 16) when .gpu/llmc holds them, PyTorch's at 16 x 1024
#              (f32, TF32, bf16 eager) and bf16 with torch.compile at 16 and 64 x 1024,
#              and PyTorch generating at batch 1 (tools/reference/gpt2_generate_torch.py);
#   python     ember's Python package with CUDA (.gpy, from pack.sh --python): python/tests/
#              cuda_test.py, then nanoGPT's train.py as-is (its baby GPT on the Brown
#              characters, --device=cuda, bf16) on ember and on the machine's PyTorch;
#   ncu        Nsight Compute on the benchmark rows NCU names (NCU_KERNELS: a kernel regex);
#   memcheck   each test binary matching memcheck_glob (default '*') under
#              compute-sanitizer's memcheck (or the tools SANITIZERS names), while the
#              budget lasts.
# so that each call to the device tool fits its time, e.g. --steps=tests,gpt2 first and
# --steps=refs,memcheck in a second call. budget_s (default 480) bounds memcheck.
#
# On an H200 (2026-11-26) tests, bench, torch, gpt2 and refs took about 3 minutes,
# memcheck over every test about 1 more.
#
# The device tool brings back at most 8 files, so every log and XML goes into
# $OUT/results.tar.gz; the summary (also printed last) is $OUT/summary.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
steps="tests,bench,torch,gpt2,refs,memcheck"
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --steps=*) steps="${1#--steps=}" ;;
    *) echo "run.sh: unknown flag $1 (--steps=LIST)" >&2; exit 2 ;;
  esac
  shift
done
for step in ${steps//,/ }; do
  case "$step" in
    tests | bench | torch | gpt2 | refs | python | ncu | memcheck) ;;
    *) echo "run.sh: unknown step $step (tests, bench, torch, gpt2, refs, python, ncu, memcheck)" >&2; exit 2 ;;
  esac
done
budget_s="${1:-480}"
memcheck_glob="${2:-*}"
deadline=$((SECONDS + budget_s))
OUT="${OUT:-/tmp/ember-gpu}"
logs="$(mktemp -d)"
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
left() { echo $((deadline - SECONDS)); }
finish() {
  tar -C "$logs" -czf "$OUT/results.tar.gz" .
  echo "---- summary ----"
  cat "$summary"
}
trap finish EXIT

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader | tee -a "$summary"
# PyTorch runs with the machine's own libraries (.gpu/lib holds Debian's libstdc++).
py=(env "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" python3)
libs=("$PWD/.gpu/lib" /usr/local/cuda/lib64)
for d in $("${py[@]}" -c 'import nvidia, os; print(" ".join(os.path.join(nvidia.__path__[0], p, "lib") for p in os.listdir(nvidia.__path__[0])))' 2>/dev/null); do
  libs+=("$d")
done
export LD_LIBRARY_PATH="$(IFS=:; echo "${libs[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# The GPU half of models/mnist:classifier_test reads Fashion-MNIST where Debian puts it.
if [ -d .gpu/fashion-mnist ] && [ ! -d /usr/share/datasets/fashion-mnist ]; then
  mkdir -p /usr/share/datasets && cp -r .gpu/fashion-mnist /usr/share/datasets/
fi

# A failing case's message is what the next session fixes from: print them.
step_tests() {
  for t in .gpu/bin/*_test; do
    name="$(basename "$t")"
    start=$SECONDS
    timeout 90 "$t" --gtest_output="xml:$logs/$name.xml" >"$logs/$name.log" 2>&1
    rc=$?
    counts="$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$logs/$name.log" | cut -c1-13 | sort | uniq -c | tr -s ' \n' ' ')"
    say "$name: rc=$rc $counts($((SECONDS - start)) s)"
    if [ $rc -ne 0 ]; then
      grep -E -B2 -A12 'Failure|\[  FAILED  \]|error|Error|terminate' "$logs/$name.log" | head -60 | tee -a "$summary"
    fi
  done
}

step_bench() {
  timeout 200 .gpu/bin/kernels_cuda_cuda_benchmark --benchmark_min_time=0.05 --benchmark_filter="${BENCH_FILTER:-.}" \
    --benchmark_out="$OUT/cuda_benchmark.json" --benchmark_out_format=json >"$logs/cuda_benchmark.txt" 2>&1
  say "cuda_benchmark: rc=$?"
  cat "$logs/cuda_benchmark.txt"
}

step_torch() {
  timeout 120 "${py[@]}" tools/reference/bench_torch_cuda.py --json="$OUT/torch_cuda.json" >"$logs/torch_cuda.txt" 2>&1
  say "bench_torch_cuda: rc=$?"
  cat "$logs/torch_cuda.txt"
}

# GPT-2 124M steps on the tokens the references read too.
train=runs/data/brown_gpt2_train.bin
step_gpt2() {
  if [ ! -x .gpu/bin/models_gpt2_train ] || [ ! -f "$train" ]; then
    say "gpt2: skipped (needs .gpu/bin/models_gpt2_train and $train)"
    return
  fi
  for mode in tf32 notf32 bf16; do
    flags=(--dtype=f32 --"$mode")
    [ $mode = bf16 ] && flags=(--dtype=bf16)
    timeout 150 .gpu/bin/models_gpt2_train --device=cuda --model=gpt2 --train_data="$train" \
      --val_data="$train" --batch_size=16 --seq_len=1024 --steps=10 --warmup_steps=2 --dropout=0 \
      --val_every=1000 --val_batches=1 --sample_tokens=0 --out_dir="$logs/gpt2_$mode" --save_checkpoint=/dev/null \
      "${flags[@]}" --metrics_out="$logs/gpt2_metrics_$mode.json" >"$logs/gpt2_train_$mode.log" 2>&1
    say "ember gpt2 train ($mode, 16x1024): rc=$? $(tail -c 600 "$logs/gpt2_train_$mode.log" | tr '\r' '\n' | tail -3)"
  done
  # llm.c's own recipe's batch: 64 x 1024 in one step (its peak tensor memory in the summary).
  timeout 150 .gpu/bin/models_gpt2_train --device=cuda --model=gpt2 --train_data="$train" \
    --val_data="$train" --batch_size=64 --seq_len=1024 --steps=8 --warmup_steps=2 --dropout=0 \
    --val_every=1000 --val_batches=1 --sample_tokens=0 --out_dir="$logs/gpt2_bf16_b64" --save_checkpoint=/dev/null \
    --dtype=bf16 --metrics_out="$logs/gpt2_metrics_bf16_b64.json" >"$logs/gpt2_train_bf16_b64.log" 2>&1
  say "ember gpt2 train (bf16, 64x1024): rc=$? $(tail -c 600 "$logs/gpt2_train_bf16_b64.log" | tr '\r' '\n' | tail -3)"
  # The main job's GPU shape (the small preset, 64 x 256), a few steps, for its step time;
  # generate then continues its checkpoint on the GPU, at batch 1.
  timeout 100 .gpu/bin/models_gpt2_train --device=cuda --train_data="$train" --val_data="$train" \
    --steps=150 --val_every=1000 --val_batches=1 --sample_tokens=0 --out_dir="$logs/gpt2_main" \
    --save_checkpoint="$logs/gpt2_main.safetensors" >"$logs/gpt2_main.log" 2>&1
  say "ember gpt2 main job's GPU shape, 150 steps: rc=$? $(tail -c 600 "$logs/gpt2_main.log" | tr '\r' '\n' | tail -3)"
  if [ -x .gpu/bin/models_gpt2_generate ] && [ -f downloads/tokenizer/vocab.bpe ]; then
    for cache in kv_cache nokv_cache; do
      BUILD_WORKSPACE_DIRECTORY="$PWD" timeout 60 .gpu/bin/models_gpt2_generate --device=cuda \
        --checkpoint="$logs/gpt2_main.safetensors" --max_tokens=200 --stop_at_eot=false --"$cache" \
        >"$logs/generate_$cache.log" 2>&1
      say "ember generate (--$cache, batch 1, 200 tokens): rc=$? $(grep 'tokens/s' "$logs/generate_$cache.log")"
    done
  fi
  rm -f "$logs/gpt2_main.safetensors"
}

step_refs() {
  for run in train_gpt2cu:16 train_gpt2cu:64 train_gpt2cu_fp32:16; do
    llmc=${run%:*} batch=${run#*:}
    [ -x ".gpu/llmc/$llmc" ] || continue
    timeout 150 ".gpu/llmc/$llmc" -i "$train" -j "$train" -e d12 -b "$batch" -t 1024 -x 10 -v 1000 -s 1000 \
      -o "$logs/${llmc}_b$batch" >"$logs/${llmc}_b$batch.log" 2>&1
    say "llm.c $llmc (${batch}x1024): rc=$? $(grep -iE 'memory|^step +(8|9|10)/' "$logs/${llmc}_b$batch.log" | tr '\n' ' ')"
  done
  for run in f32:16 tf32:16 bf16:16 compile:16 compile:64; do
    dtype=${run%:*} batch=${run#*:}
    flags=(--steps=6)
    [ $dtype = tf32 ] && flags=(--steps=6 --tf32)
    [ $dtype = bf16 ] && flags=(--steps=6 --bf16)
    [ $dtype = compile ] && flags=(--steps=8 --bf16 --compile)
    timeout 150 "${py[@]}" tools/reference/gpt2_step_torch.py --device=cuda --batch_size="$batch" --seq_len=1024 \
      "${flags[@]}" >"$logs/gpt2_torch_${dtype}_b$batch.log" 2>&1
    say "torch gpt2 step ($dtype, ${batch}x1024): rc=$? $(tail -1 "$logs/gpt2_torch_${dtype}_b$batch.log")"
  done
  # generate's reference: the small preset at batch 1 under bf16 autocast (generate's
  # default dtype on a GPU), with and without a key/value cache.
  timeout 120 "${py[@]}" tools/reference/gpt2_generate_torch.py --device=cuda --preset=small --tokens=200 --bf16 \
    >"$logs/generate_torch.log" 2>&1
  say "torch generate (small, batch 1, bf16): rc=$? $(tail -1 "$logs/generate_torch.log")"
}

# Debian's python3.11 from .gpy runs ember (its extension is built for that Python);
# the machine's own python3 runs PyTorch.
step_python() {
  if [ ! -x .gpy/bin/python3 ]; then
    say "python: skipped (needs .gpy from pack.sh --python)"
    return
  fi
  local ember_py=(env PYTHONHOME="$PWD/.gpy" PYTHONPATH="$PWD/.gpy/site" PYTHONUNBUFFERED=1
    LD_LIBRARY_PATH="$PWD/.gpy/lib:$LD_LIBRARY_PATH" "$PWD/.gpy/bin/python3")
  timeout 120 "${ember_py[@]}" python/tests/cuda_test.py -v >"$logs/python_cuda_test.log" 2>&1
  say "python cuda_test: rc=$? $(grep -E '^(Ran|OK|FAILED)' "$logs/python_cuda_test.log" | tr '\n' ' ')"
  grep -E -A12 '^(FAIL|ERROR):' "$logs/python_cuda_test.log" | head -40 | tee -a "$summary"
  [ -d .gpy/nanogpt ] || return
  local args=(config/train_shakespeare_char.py --dataset=brown_char --device=cuda --dtype=bfloat16
    --compile=False --max_iters=300 --lr_decay_iters=300 --eval_interval=150 --eval_iters=20
    --log_interval=25)
  for side in ember torch; do
    local run=("${ember_py[@]}")
    [ $side = torch ] && run=("${py[@]}")
    (cd ".gpy/nanogpt/$side" && timeout 150 "${run[@]}" train.py "${args[@]}") >"$logs/nanogpt_$side.log" 2>&1
    say "nanoGPT train.py ($side, cuda, bf16, 300 iters): rc=$? $(grep -E '^step [0-9]+:' "$logs/nanogpt_$side.log" | tr '\n' ' ') \
$(grep -E '^iter (100|200|275):' "$logs/nanogpt_$side.log" | tr '\n' ' ')"
    tail -5 "$logs/nanogpt_$side.log" | tee -a "$summary"
  done
}

# With NCU set to a benchmark filter (and NCU_KERNELS to a kernel-name regex), Nsight
# Compute's speed-of-light, occupancy and stall sections for those kernels.
step_ncu() {
  if [ -z "${NCU:-}" ] || ! command -v ncu >/dev/null; then
    say "ncu: skipped (needs NCU=<benchmark filter> and Nsight Compute)"
    return
  fi
  timeout 150 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    -k "regex:${NCU_KERNELS:-.}" -c 16 .gpu/bin/kernels_cuda_cuda_benchmark --benchmark_filter="$NCU" \
    --benchmark_min_time=0.0001 >"$OUT/ncu.txt" 2>&1
  say "ncu ($NCU): rc=$? $(grep -c 'Section: GPU Speed Of Light' "$OUT/ncu.txt") kernels profiled"
}

# memcheck (and the other tools SANITIZERS names, e.g. "memcheck racecheck"), as long
# as the budget lasts. API errors are left to ember, which checks every CUDA call's
# result (copy_test asks for more memory than a GPU has, on purpose).
step_memcheck() {
  if ! command -v compute-sanitizer >/dev/null; then
    say "memcheck: skipped (no compute-sanitizer)"
    return
  fi
  for tool in ${SANITIZERS:-memcheck}; do
    for t in .gpu/bin/*_test; do
      name="$(basename "$t")"
      # shellcheck disable=SC2053  # a glob, on purpose
      [[ $name == $memcheck_glob ]] || continue
      room=$(($(left) - 20))
      if [ $room -lt 30 ]; then say "$name $tool: skipped (budget)"; continue; fi
      timeout $room compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 1 "$t" \
        >"$logs/$name.$tool.log" 2>&1
      rc=$?
      say "$name $tool: rc=$rc $(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$logs/$name.$tool.log")"
      [ $rc -ne 0 ] && grep -m3 -A8 '^========= Invalid\|^========= Program hit\|^========= Error\|^========= Warning' \
        "$logs/$name.$tool.log" | head -30 | tee -a "$summary"
    done
  done
}

for step in ${steps//,/ }; do
  "step_$step"
done
