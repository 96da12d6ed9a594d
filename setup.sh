#!/usr/bin/env bash
# Installs what ember needs on a Debian machine: the compiler, Bazel, the system
# libraries it builds on, and (as the models arrive) their data. Safe to run again:
# when everything is in place it does nothing and says so in one line.
set -euo pipefail
cd "$(dirname "$0")"

packages=(
  bazel-bootstrap bazel-rules-java g++ pkg-config   # Bazel 4.2.3 and the toolchain
  libabsl-dev libhwy-dev libeigen3-dev libre2-dev zlib1g-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev        # tests and benchmarks
  libopenblas-dev                                   # a benchmark's comparator
  python3                                           # interoperability tests
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

echo "setup: ready (${#missing[@]} packages installed now)"
