#!/usr/bin/env node
// tiktoken's own encoding and decoding speed (the npm package: OpenAI's Rust core built
// to WASM) on a file, one thread: encode_ordinary of the whole text, then decode of its
// ids, each repeated, median time.
//
//   mkdir -p /tmp/tiktoken && (cd /tmp/tiktoken && npm install tiktoken@1.0.22)
//   NODE_PATH=/tmp/tiktoken/node_modules node tools/reference/bench_tiktoken.js FILE [ENCODING] [REPEATS]
//
// Prints two lines like ember's `tokenize count --timing` and `tokenize decode --timing`.
const fs = require("fs");
const { get_encoding } = require("tiktoken");

const [file, name = "gpt2", repeats = "3"] = process.argv.slice(2);
if (!file) {
  console.error("usage: bench_tiktoken.js FILE [ENCODING] [REPEATS]");
  process.exit(2);
}
const text = fs.readFileSync(file, "utf8");
const bytes = Buffer.byteLength(text, "utf8");
const enc = get_encoding(name);
function median(f) {
  const seconds = [];
  for (let r = 0; r < Number(repeats); ++r) {
    const start = process.hrtime.bigint();
    f();
    seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  seconds.sort((a, b) => a - b);
  return seconds[Math.floor(seconds.length / 2)];
}
let ids;
const encode = median(() => (ids = enc.encode_ordinary(text)));
console.log(
  `tiktoken ${name}: ${bytes} bytes, ${ids.length} tokens, ${encode.toFixed(3)} s (median of ${repeats}), ` +
    `${(bytes / encode / 1e6).toFixed(2)} MB/s, 1 thread`
);
let decoded;
const decode = median(() => (decoded = enc.decode(ids)));
if (decoded.length !== bytes) throw new Error(`decode gave ${decoded.length} bytes, not ${bytes}`);
console.log(
  `tiktoken ${name}: decoded ${ids.length} tokens to ${decoded.length} bytes, ${decode.toFixed(4)} s ` +
    `(median of ${repeats}), ${(bytes / decode / 1e6).toFixed(2)} MB/s`
);
enc.free();
