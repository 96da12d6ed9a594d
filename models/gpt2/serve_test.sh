#!/usr/bin/env bash
# serve as users meet it, on a tiny GPT the train binary makes: OpenAI's Node client
# against it (with an API key), headless Chromium on the chat page, the key required
# off loopback, and SIGTERM finishing a streamed reply before the server exits.
set -uo pipefail
source base/expect.sh
export BUILD_WORKSPACE_DIRECTORY="$PWD"  # the GPT-2 vocabulary
export HOME="$TEST_TMPDIR"               # Chromium's and Node's files
bin=models/gpt2
out="$TEST_TMPDIR/run"
mkdir -p "$out"
python3 models/gpt2/testdata/phrase_shards.py "$out"
$bin/train --model=tiny --train_data="$out/train.bin" --val_data="$out/train.bin" --batch_size=2 \
  --seq_len=16 --steps=2 --warmup_steps=1 --val_every=0 --out_dir="$out" --sample_tokens=0 \
  2>"$out/train.err" || { cat "$out/train.err"; exit 1; }
ckpt="$out/checkpoint.safetensors"

# start NAME FLAGS...: runs serve on a free port in the background ($pid, $port).
start() {
  local log="$out/$1.err"
  shift
  $bin/serve --checkpoint="$ckpt" --port=0 "$@" 2>"$log" &
  pid=$!
  port=""
  for _ in $(seq 200); do
    port="$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$log" | grep -o '[0-9]*$')"
    [ -n "$port" ] && return
    sleep 0.05
  done
  echo "serve did not start:"; cat "$log"; exit 1
}

expect "off loopback without a key" \
  "serve: --host=0.0.0.0 lets other machines in: give --api_key too (or keep 127.0.0.1)" \
  "$($bin/serve --checkpoint="$ckpt" --host=0.0.0.0 2>&1)"
expect "a bad limit" "serve: --max_batch=0: expected at least 1" \
  "$($bin/serve --checkpoint="$ckpt" --max_batch=0 2>&1)"

# OpenAI's client, with the key.
start keyed --api_key=test-key
node "$bin/serve_client_test.mjs" downloads/npm/openai "http://127.0.0.1:$port/v1" test-key
expect "openai client" "0" "$?"

# SIGTERM while a reply streams: the reply finishes ([DONE]), then the server exits 0.
curl -s -N "http://127.0.0.1:$port/v1/completions" -H "Authorization: Bearer test-key" \
  -d '{"model": "ember", "prompt": "The quick", "max_tokens": 200, "stream": true}' >"$out/drain.out" &
curl_pid=$!
for _ in $(seq 200); do [ -s "$out/drain.out" ] && break; sleep 0.01; done
kill -TERM "$pid"
wait "$pid"
expect "SIGTERM: exit" "0" "$?"
wait "$curl_pid"
expect "SIGTERM: the reply finished" "data: [DONE]" "$(grep -v '^$' "$out/drain.out" | tail -1)"
expect "SIGTERM: said so" "2" "$(grep -c -E 'serve: SIGTERM: finishing 1 requests|serve: stopped' "$out/keyed.err")"

# The chat page in Chromium answers as the API does for the same question and seed.
start open
page="$(node --experimental-websocket "$bin/serve_page_test.mjs" "http://127.0.0.1:$port/" \
  "Who teaches here?" 21 "$TEST_TMPDIR/chromium" 2>"$out/page.err")"
expect "page test ran" "0" "$?"
api="$(curl -s "http://127.0.0.1:$port/v1/chat/completions" -d '{"model": "ember", "seed": 21,
  "temperature": 1, "max_tokens": 12, "messages": [{"role": "user", "content": "Who teaches here?"}]}')"
expect "the page shows the API's answer" "ok" "$(python3 - "$page" "$api" <<'PY'
import json, sys
page, api = json.loads(sys.argv[1]), json.loads(sys.argv[2])
want = api["choices"][0]["message"]["content"].lstrip()
ok = page["state"] == "done" and page["text"] == want and page["chunks"] >= 2
print("ok" if ok else (page, want))
PY
)"
kill -TERM "$pid"
wait "$pid"
[ "$failures" -eq 0 ] || cat "$out"/*.err
expect_done
