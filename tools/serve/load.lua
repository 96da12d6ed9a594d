-- wrk's script for tools/serve/load.sh: POSTs $BODY to the URL again and again, and
-- counts the completion tokens of the replies and every reply that is not a 200 with
-- choices and usage. One line at the end: RESULT key=value ...
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = os.getenv("BODY")

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  tokens, bad, replies = 0, 0, 0
end

function response(status, headers, body)
  replies = replies + 1
  local n = body:match('"completion_tokens":(%d+)')
  if status ~= 200 or not n or not body:find('"choices":%[{') then
    bad = bad + 1
    if bad <= 3 then io.stderr:write("bad reply: ", status, " ", body, "\n") end
  else
    tokens = tokens + tonumber(n)
  end
end

function done(summary, latency, requests)
  local t, b, r = 0, 0, 0
  for _, thread in ipairs(threads) do
    t = t + thread:get("tokens")
    b = b + thread:get("bad")
    r = r + thread:get("replies")
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT replies=%d bad=%d socket_errors=%d tokens=%d seconds=%.1f p50_s=%.3f p99_s=%.3f\n",
    r, b, e.connect + e.read + e.write + e.timeout, t, summary.duration / 1e6,
    latency:percentile(50) / 1e6, latency:percentile(99) / 1e6))
end
