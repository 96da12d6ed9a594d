#!/usr/bin/env bash
# Builds ember's CUDA tests, the kernel benchmark and GPT-2's `train` here (this machine
# has nvcc but maybe no GPU) and packs them for the GPU machine, which has CUDA's
# libraries but no Bazel:
#
#   [LLMC=/path/to/llm.c] tools/gpu/pack.sh
#                                # -> .gpu/ (ignored by git): stripped binaries + their libraries,
#                                #    and .gpu.tar.xz, the same in a fifth of the bytes
#
# then, on the GPU machine, from the repository root (the device tool's `run`, with
# carry [".gpu.tar.xz", "runs/data/brown_gpt2_train.bin",
# "downloads/tokenizer/encoder.json", "downloads/tokenizer/vocab.bpe"]):
#
#   tar -xJf .gpu.tar.xz && tools/gpu/run.sh --steps=tests,gpt2   # see run.sh for the steps
#
# The binaries travel with the shared libraries they load (.gpu/lib) but for glibc
# and CUDA's: the GPU machine's glibc must be at least Debian 12's (2.36). run.sh
# points LD_LIBRARY_PATH at .gpu/lib and the CUDA libraries it finds (the toolkit's
# lib64 or the Python packages' nvidia/*/lib).
#
#   [NANOGPT=/path/to/nanoGPT] tools/gpu/pack.sh --python
#                                # -> .gpy.tar.xz: ember's Python package built with CUDA, with
#                                #    Debian's python3.11, its standard library and numpy (the GPU
#                                #    machine's Python is another version, which the extension
#                                #    cannot load), and nanoGPT's train.py with ember's imports
#                                #    (tools/reference/nanogpt.sh's copy) on the Brown characters;
#                                #    run.sh --steps=python unpacks and runs it.
set -euo pipefail
cd "$(dirname "$0")/../.."
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
for ignored in /.gpu/ /.gpu.tar.xz /.gpy/ /.gpy.tar.xz; do
  grep -qx "$ignored" "$exclude" 2>/dev/null || echo "$ignored" >>"$exclude"
done

if [ "${1:-}" = --python ]; then
  bazel build --config=cuda -c opt //python:ember/_ember.so
  rm -rf .gpy
  mkdir -p .gpy/bin .gpy/lib .gpy/site
  cp /usr/bin/python3.11 .gpy/bin/python3
  tar -C /usr/lib --exclude=test --exclude=__pycache__ --exclude=idlelib --exclude=tkinter \
    -cf - python3.11 | tar -C .gpy/lib -xf -
  cp -r /usr/lib/python3/dist-packages/numpy .gpy/site/
  cp -r python/ember .gpy/site/
  find .gpy/site -name __pycache__ -prune -exec rm -rf {} +
  install -m 0755 bazel-bin/python/ember/_ember.so .gpy/site/ember/_ember.so
  # What the extension and numpy load, but for glibc's and CUDA's own.
  find .gpy/site -name '*.so' -exec ldd {} + | awk '$3 ~ /^\// { print $3 }' | sort -u |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s|ld-linux[^/]*)\.so|/lib(cuda|cudart|cublas|cublasLt|cudnn|nccl)[^/]*\.so' |
    while read -r lib; do cp -L "$lib" .gpy/lib/; done
  if [ -n "${NANOGPT:-}" ]; then
    WORK="$PWD/.gpy/nanogpt" tools/reference/nanogpt.sh "$NANOGPT" 0
    for side in torch ember; do ln -sfn ../data ".gpy/nanogpt/$side/data"; done
  fi
  tar -cf - .gpy | xz -T0 -3 >.gpy.tar.xz
  du -sh .gpy.tar.xz
  exit 0
fi

tests=(
  //kernels:adamw_test //kernels:attention_test //kernels:binary_test //kernels:conv_test
  //kernels:copy_test //kernels:embedding_test //kernels:layernorm_test //kernels:matmul_test
  //kernels:pool_test //kernels:random_test //kernels:recurrent_test //kernels:reduce_test
  //kernels:sampling_test //kernels:scan_test //kernels:softmax_test //kernels:sort_test
  //kernels:unary_test //kernels/cuda:memory_test
  //tensor:cuda_test //tensor:random_test
  //tensor/ops:cuda_ops_test //nn:module_test //models/gpt2:trainer_test
  //models/gpt2:parity_test //models/mnist:classifier_test //distributed:nccl_test
)
binaries=(//kernels/cuda:cuda_benchmark //models/gpt2:train //models/gpt2:generate)
bazel build --config=cuda -c opt "${tests[@]}" "${binaries[@]}"

rm -rf .gpu
mkdir -p .gpu/bin
built=()
for target in "${tests[@]}" "${binaries[@]}"; do
  path="${target#//}"  # kernels/cuda:memory_test -> .gpu/bin/kernels_cuda_memory_test
  built+=("bazel-bin/${path/://}")
  cp "${built[-1]}" ".gpu/bin/${path//[\/:]/_}"
done
# The shared libraries they load, but for glibc's and CUDA's own (the GPU machine has
# those): ember's (bazel-bin/_solib_*) and Debian's (Abseil, Highway, GoogleTest, ...).
mkdir -p .gpu/lib
for bin in "${built[@]}"; do  # where they are, so that their runpath finds ember's
  ldd "$bin" | awk '$3 ~ /^\// { print $3 }'
done | sort -u | grep -Ev '/(libc|libm|libpthread|libdl|librt|libgcc_s|ld-linux[^/]*)\.so|/lib(cuda|cudart|cublas|cublasLt|cudnn|nccl)[^/]*\.so' |
  while read -r lib; do cp -L "$lib" .gpu/lib/; done
# llm.c's CUDA trainers, built beside ember (LLMC=/path/to/llm.c), for run.sh to time
# beside ember's: train_gpt2cu and, when there, train_gpt2cu_fp32 (a PRECISION=FP32 build).
if [ -n "${LLMC:-}" ]; then
  mkdir -p .gpu/llmc
  for trainer in train_gpt2cu train_gpt2cu_fp32; do
    if [ -x "$LLMC/$trainer" ]; then cp "$LLMC/$trainer" .gpu/llmc/; fi
  done
fi
# Fashion-MNIST where Debian installs it (data/datasets.h), for the GPU half of
# models/mnist:classifier_test; run.sh puts it back in the same place.
if [ -d /usr/share/datasets/fashion-mnist ]; then
  cp -r /usr/share/datasets/fashion-mnist .gpu/
fi
chmod u+w .gpu/bin/* .gpu/lib/*
strip .gpu/bin/* .gpu/lib/*
du -sh .gpu/bin .gpu/lib
# The statically linked binaries each hold the CUDA kernels' machine code; compressed,
# everything travels well under the device tool's 64 MiB.
tar -cf - .gpu | xz -T0 -3 >.gpu.tar.xz
du -sh .gpu.tar.xz

echo "packed: $(ls .gpu/bin | wc -l) binaries; on the GPU machine run tools/gpu/run.sh"
