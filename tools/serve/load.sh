#!/usr/bin/env bash
# A bounded load run of models/gpt2:serve on loopback with wrk: the same chat request
# (max_tokens tokens, sampled at temperature 1, a new seed each) from 1 client and then
# from N clients at once, each for SECONDS; prints replies, bad replies, tokens/s and the
# latency's p50 and p99 for each. Any reply that is not a 200 with choices counts as bad.
#
#   tools/serve/load.sh CHECKPOINT [SECONDS=60] [CLIENTS=32] [MAX_TOKENS=32] [serve flags...]
#
# Needs `bazel build -c opt //models/gpt2:serve` and wrk (setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/../.."
checkpoint="${1:?usage: tools/serve/load.sh CHECKPOINT [SECONDS] [CLIENTS] [MAX_TOKENS] [serve flags...]}"
seconds="${2:-60}"
clients="${3:-32}"
max_tokens="${4:-32}"
shift $(($# < 4 ? $# : 4))
serve="$(bazel info -c opt bazel-bin 2>/dev/null)/models/gpt2/serve"
[ -x "$serve" ] || { echo "load.sh: build it first: bazel build -c opt //models/gpt2:serve" >&2; exit 1; }
log="$(mktemp)"
trap 'kill "$pid" 2>/dev/null; rm -f "$log"' EXIT
BUILD_WORKSPACE_DIRECTORY="$PWD" "$serve" --checkpoint="$checkpoint" --port=0 \
  --max_batch="$clients" --max_queue="$clients" "$@" 2>"$log" &
pid=$!
port=""
while [ -z "$port" ]; do
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  port="$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$' || true)"
  sleep 0.1
done
head -1 "$log"
export BODY="{\"model\": \"ember\", \"max_tokens\": $max_tokens, \"temperature\": 1,
  \"messages\": [{\"role\": \"user\", \"content\": \"Tell me about the school library.\"}]}"
for c in 1 "$clients"; do
  threads=$((c < 2 ? 1 : 2))
  result="$(wrk -t"$threads" -c"$c" -d"${seconds}s" --timeout 120s -s tools/serve/load.lua \
    "http://127.0.0.1:$port/v1/chat/completions" | grep '^RESULT')"
  tokens="$(echo "$result" | grep -o 'tokens=[0-9]*' | cut -d= -f2)"
  secs="$(echo "$result" | grep -o 'seconds=[0-9.]*' | cut -d= -f2)"
  echo "clients=$c ${result#RESULT } tokens_per_s=$(python3 -c "print(round($tokens / $secs, 1))")"
done
