#!/usr/bin/env node
// Writes tiktoken's own token ids for a few hundred varied texts, for every encoding
// the npm package `tiktoken` (OpenAI's Rust core built to WASM) ships:
//
//   mkdir -p /tmp/tiktoken && (cd /tmp/tiktoken && npm install tiktoken@1.0.22)
//   NODE_PATH=/tmp/tiktoken/node_modules node tools/reference/tiktoken_vectors.js \
//     > tokenizer/testdata/tiktoken_vectors.jsonl
//
// One JSON object per line: {"text": ..., "<encoding>": [ids of encode_ordinary],
// "<encoding>.all_special": [ids of encode(text, "all")]} (the latter only for texts that
// hold special-token text).
const tiktoken = require("tiktoken");

const ENCODINGS = ["gpt2", "r50k_base", "p50k_base", "cl100k_base", "o200k_base"];

const texts = [];
const add = (t) => texts.push(t);

// Prose and code.
[
  "Hello, world!",
  "The quick brown fox jumps over the lazy dog.",
  "It was the best of times, it was the worst of times, it was the age of wisdom.",
  "In 1492, Columbus sailed the ocean blue; in 1969, Apollo 11 landed on the Moon.",
  "Dr. Smith's patients didn't wait—they'd already left.",
  "int main(int argc, char** argv) {\n  return argc > 1 ? 0 : 1;\n}\n",
  "def f(x):\n    return x ** 2  # square\n\n\nprint(f(3))\n",
  "for (let i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
  "SELECT name, COUNT(*) FROM users WHERE age >= 21 GROUP BY name;",
  "<html><body><p class=\"x\">Hi &amp; bye</p></body></html>",
  "{\"key\": [1, 2.5, -3e10, true, null], \"nested\": {\"a\": \"b\"}}",
  "https://example.com/path?query=1&other=two#frag",
  "user@example.org wrote: >>> quoted text",
  "    indented by four\n\tand a tab\n        eight spaces",
  "C'est la vie, naïve café, Straße, ÆØÅ æøå, İstanbul, ǅemal",
  "Привет, мир! Съешь же ещё этих мягких французских булок.",
  "Γειά σου Κόσμε· ΑΒΓΔ αβγδ",
  "日本語のテキストと漢字、ひらがな、カタカナ。",
  "中文文本：你好，世界！这是一个测试。",
  "한국어 텍스트입니다. 안녕하세요!",
  "مرحبا بالعالم! هذا نص عربي.",
  "שלום עולם! זהו טקסט בעברית.",
  "हिन्दी पाठ: नमस्ते दुनिया।",
  "ภาษาไทย สวัสดีชาวโลก",
  "e\u0301 a\u0300\u0323 Z\u0351\u0352\u0353a\u0354\u0355l\u0356g\u0357o",
  "👋 Hello 👨‍👩‍👧‍👦 family, 👍🏽 thumbs, 🏳️‍🌈 flag, 🇫🇷🇯🇵",
  "math: ∑_{i=1}^{n} x_i² ≤ ∞, ∀ε>0 ∃δ, ½ ¾ ⅓, Ⅻ",
  "tabs\tbetween\twords\tand\t\tdouble",
  "crlf\r\nlines\r\n\r\nend\r\n",
  "trailing spaces   ",
  "   leading spaces",
  "\n\nleading newlines",
  "mixed \t \n \r\n whitespace \u00a0 and\u3000ideographic",
  "zero\u200bwidth\u200djoiner\ufeffbom",
  "",
  " ",
  "a",
  "\n",
].forEach(add);

// Contractions in every case, after a word and after a space.
for (const c of ["s", "t", "re", "ve", "m", "ll", "d"]) {
  for (const v of [c, c.toUpperCase(), c[0].toUpperCase() + c.slice(1)]) {
    add(`I'${v} go`);
    add(`x '${v}`);
    add(`'${v}`);
    add(`don'${v}'${v}`);
  }
}
add("I’m curly ’s");

// Every kind of whitespace run before letters, digits, punctuation, non-ASCII, nothing.
const spaces = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r\n\r\n", " \n", "\n ",
                " \t ", "\u00a0", "\u3000", "\u2009", "\u0085", "\u2028", "\u000b", "\u000c",
                "  \u00a0", "\u00a0 "];
const nexts = ["word", "Word", "123", "!?", "é", "中文", "\u0301x", "😀", ""];
for (const s of spaces) {
  for (const n of nexts) add("a" + s + n);
}

// Numbers.
["0", "7", "42", "123", "1234", "12345", "123456789", "3.14159", "1,000,000", "-12.5e-3",
 "2024-11-21", "10:30pm", "v1.2.3", "٣٤٥ ١٢", "१२३", "①②③", "ⅠⅡⅢ", "x1y22z333w4444",
 "1 2  3   4", "$100.00", "50%"].forEach(add);

// Long runs (the merge loop must not go quadratic).
add("a".repeat(1000));
add("ab".repeat(400));
add(" ".repeat(300));
add(" ".repeat(300) + "x");
add("\n".repeat(100));
add("😀".repeat(50));
add("1".repeat(200));
add("!".repeat(150));
add("abc ".repeat(100));
add("€".repeat(80));

// Characters assigned in Unicode 15.1 and 16.0 (letters, marks and digits that RE2's
// Unicode 15.0 tables do not know), in contexts where their class changes the pieces:
// before a contraction, between a letter and digits, in runs, after punctuation.
[0x10D40, 0x10D43, 0x10D50, 0x10D70, 0x10D69, 0x1C89, 0x1C8A, 0xA7CB, 0xA7DC, 0x16D70, 0x16D43,
 0x1E5D0, 0x1E5F1, 0x11BC0, 0x11BF1, 0x105C0, 0x11380, 0x2EBF0, 0x116D0, 0x1CCF0, 0x13460,
 0x16100, 0x16130].forEach((cp) => {
  const x = String.fromCodePoint(cp);
  [`${x}'s`, `a${x}1234`, x.repeat(4), `!${x}x's`, ` ${x}.`, `A${x}b`].forEach(add);
});

// Special-token text.
["<|endoftext|>", "hello<|endoftext|>world", "<|endoftext|><|endoftext|>", "<|endoftext",
 "endoftext|>", "< |endoftext| >", "<|fim_prefix|>x<|fim_middle|>y<|fim_suffix|>",
 "<|endofprompt|>", "a <|endoftext|> b"].forEach(add);

const encoders = Object.fromEntries(ENCODINGS.map((name) => [name, tiktoken.get_encoding(name)]));
for (const text of texts) {
  const row = { text };
  for (const name of ENCODINGS) {
    const enc = encoders[name];
    row[name] = Array.from(enc.encode_ordinary(text));
    if (text.includes("<|")) row[name + ".all_special"] = Array.from(enc.encode(text, "all"));
    const back = new TextDecoder().decode(enc.decode(enc.encode_ordinary(text)));
    if (back !== text) throw new Error(`${name} does not round-trip ${JSON.stringify(text)}`);
  }
  process.stdout.write(JSON.stringify(row) + "\n");
}
process.stderr.write(`${texts.length} texts, ${ENCODINGS.length} encodings\n`);
