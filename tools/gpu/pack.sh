#!/usr/bin/env bash
# Builds ember's CUDA tests and benchmarks here (this machine has nvcc but maybe no
# GPU) and packs them for the GPU machine, which has CUDA's libraries but no Bazel:
#
#   tools/gpu/pack.sh            # -> .gpu/ (ignored by git): stripped binaries + run.sh
#
# then, on the GPU machine, from the repository root (the device tool's `run`, with
# carry [".gpu"]):
#
#   .gpu/run.sh                  # every test (gtest XML) and the benchmark (JSON) into $OUT
#
# The binaries travel with the shared libraries they load (.gpu/lib) but for glibc
# and CUDA's: the GPU machine's glibc must be at least Debian 12's (2.36). run.sh
# points LD_LIBRARY_PATH at .gpu/lib and the CUDA libraries it finds (the toolkit's
# lib64 or the Python packages' nvidia/*/lib), runs each test binary, then each under
# compute-sanitizer's memcheck, then the benchmark and PyTorch's reference script.
set -euo pipefail
cd "$(dirname "$0")/../.."

tests=(
  //kernels/cuda:conv_test //kernels/cuda:copy_test //kernels/cuda:elementwise_test
  //kernels/cuda:matmul_test //kernels/cuda:random_test //kernels/cuda:rows_test
  //kernels/cuda:sampling_test //tensor:cuda_test //tensor:random_test
  //tensor/ops:cuda_ops_test //nn:module_test //models/gpt2:trainer_test
  //models/mnist:classifier_test
)
bazel build --config=cuda -c opt "${tests[@]}" //kernels/cuda:cuda_benchmark

rm -rf .gpu
mkdir -p .gpu/bin
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
grep -qx '/.gpu/' "$exclude" 2>/dev/null || echo '/.gpu/' >>"$exclude"
built=()
for target in "${tests[@]}" //kernels/cuda:cuda_benchmark; do
  path="${target#//}"  # kernels/cuda:copy_test -> .gpu/bin/kernels_cuda_copy_test
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
chmod u+w .gpu/bin/* .gpu/lib/*
strip .gpu/bin/* .gpu/lib/*
du -sh .gpu/bin .gpu/lib

cat >.gpu/run.sh <<'RUN'
#!/usr/bin/env bash
# Runs on the GPU machine; see tools/gpu/pack.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/ember-gpu}"
mkdir -p "$OUT"
nvidia-smi | tee "$OUT/nvidia-smi.txt"
libs=("$PWD/.gpu/lib" /usr/local/cuda/lib64)
for d in $(python3 -c 'import nvidia, os; print(" ".join(os.path.join(nvidia.__path__[0], p, "lib") for p in os.listdir(nvidia.__path__[0])))' 2>/dev/null); do
  libs+=("$d")
done
export LD_LIBRARY_PATH="$(IFS=:; echo "${libs[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
for t in .gpu/bin/*_test; do
  name="$(basename "$t")"
  "$t" --gtest_output="xml:$OUT/$name.xml" >"$OUT/$name.log" 2>&1 || status=1
  echo "$name: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/$name.log" | cut -c1-13 | sort | uniq -c | tr -s ' \n' ' ')"
done
if command -v compute-sanitizer >/dev/null; then
  for t in .gpu/bin/*_test; do
    name="$(basename "$t")"
    compute-sanitizer --tool memcheck --error-exitcode 1 "$t" >"$OUT/$name.memcheck.log" 2>&1 || status=1
    echo "$name memcheck: $(grep -m1 'ERROR SUMMARY' "$OUT/$name.memcheck.log")"
  done
fi
.gpu/bin/kernels_cuda_cuda_benchmark --benchmark_out="$OUT/cuda_benchmark.json" --benchmark_out_format=json \
  >"$OUT/cuda_benchmark.txt" 2>&1 || status=1
python3 tools/reference/bench_torch_cuda.py --json="$OUT/torch_cuda.json" >"$OUT/torch_cuda.txt" 2>&1 || status=1
exit $status
RUN
chmod +x .gpu/run.sh
echo "packed: $(ls .gpu/bin | wc -l) binaries and .gpu/run.sh"
