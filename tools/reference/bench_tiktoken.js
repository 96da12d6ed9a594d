#!/usr/bin/env node
// tiktoken's own encoding speed (the npm package: OpenAI's Rust core built to WASM) on
// a file, one thread: encode_ordinary of the whole text, repeated, median time.
//
//   mkdir -p /tmp/tiktoken && (cd /tmp/tiktoken && npm install tiktoken@1.0.22)
//   NODE_PATH=/tmp/tiktoken/node_modules node tools/reference/bench_tiktoken.js FILE [ENCODING] [REPEATS]
//
// Prints one line like ember's `tokenize count --timing`.
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
const seconds = [];
let tokens = 0;
for (let r = 0; r < Number(repeats); ++r) {
  const start = process.hrtime.bigint();
  tokens = enc.encode_ordinary(text).length;
  seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
}
seconds.sort((a, b) => a - b);
const median = seconds[Math.floor(seconds.length / 2)];
console.log(
  `tiktoken ${name}: ${bytes} bytes, ${tokens} tokens, ${median.toFixed(3)} s (median of ${seconds.length}), ` +
    `${(bytes / median / 1e6).toFixed(2)} MB/s, 1 thread`
);
enc.free();
