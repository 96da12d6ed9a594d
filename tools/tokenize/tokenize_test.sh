#!/usr/bin/env bash
# The tokenize tool end to end: each command, --jsonl with good and bad lines, the
# special-token contract, thread-independent ids, train then encode with what it wrote,
# and the errors a user sees. Ids are tiktoken's (gpt2).
set -uo pipefail
tool=tools/tokenize/tokenize
vocab=(--vocab_dir=downloads/tokenizer)
source base/expect.sh

expect "encode" "15496 995" "$(printf 'Hello world' | $tool encode "${vocab[@]}")"
expect "decode" "Hello world" "$(echo '15496 995' | $tool decode "${vocab[@]}")"
expect "ids of 1 to 5 digits" "0, 1 3 64 262 26438" \
  "$(printf '!' | $tool encode "${vocab[@]}"), $(printf '"$a the Flavor' | $tool encode "${vocab[@]}")"
expect "cl100k" "9906 1917" "$(printf 'Hello world' | $tool encode --encoding=cl100k_base "${vocab[@]}")"
expect "special allowed" "64 50256 65" "$(printf 'a<|endoftext|>b' | $tool encode --allowed_special=all "${vocab[@]}")"
expect "special ordinary" "64 27 91 437 1659 5239 91 29 65" \
  "$(printf 'a<|endoftext|>b' | $tool encode --ordinary "${vocab[@]}")"
err="$(printf 'a<|endoftext|>b' | $tool encode "${vocab[@]}" 2>&1 >/dev/null)"
expect "special refused (exit 1)" "1" "$(printf 'a<|endoftext|>b' | $tool encode "${vocab[@]}" >/dev/null 2>&1; echo $?)"
expect "special refused (message)" "tokenize: text contains the special token <|endoftext|> at byte 1, which is not allowed: allow it to get its id, or encode it as ordinary text" "$err"
expect "unknown special" "tokenize: <|im_start|> is not a special token of gpt2 (it has: <|endoftext|>)" \
  "$(echo x | $tool encode --allowed_special='<|im_start|>' "${vocab[@]}" 2>&1)"

jsonl_in='{"text": "Hi there"}
not json
{"text": "<|endoftext|>", "allowed_special": "all"}
{"text": "<|endoftext|>"}
{"text": 5}
{"text": "caf\u00e9", "allowed_special": ["<|endoftext|>"]}'
jsonl_want='{"ids":[17250,612]}
{"error":"expected a JSON object"}
{"ids":[50256]}
{"error":"text contains the special token <|endoftext|> at byte 0, which is not allowed: allow it to get its id, or encode it as ordinary text"}
{"error":"expected \"text\": a string"}
{"ids":[66,1878,2634]}'
expect "encode --jsonl" "$jsonl_want" "$(echo "$jsonl_in" | $tool encode --jsonl "${vocab[@]}")"
expect "decode --jsonl" '{"hex":"48656c6c6f"}
{"error":"token id 99999 is not in gpt2 (n_vocab 50257)"}
{"error":"expected token ids, got -1"}
{"hex":"f09f98"}' "$(printf '%s\n' '{"ids": [15496]}' '{"ids": [99999]}' '{"ids": [-1]}' '{"ids": [47249]}' |
  $tool decode --jsonl "${vocab[@]}")"

# A text long enough to be split across threads gives the same ids on any count.
text="$TEST_TMPDIR/long.txt"
for i in $(seq 1 3000); do echo "Line $i:   some   words,	tabs and numbers 12345 and caf\u00e9s" ; done > "$text"
one="$($tool encode --input="$text" --threads=1 "${vocab[@]}" | md5sum)"
expect "threads=3 ids" "$one" "$($tool encode --input="$text" --threads=3 "${vocab[@]}" | md5sum)"
expect "round trip" "$(md5sum < "$text")" \
  "$($tool encode --input="$text" "${vocab[@]}" | $tool decode "${vocab[@]}" | md5sum)"
expect "count" "$($tool encode --input="$text" "${vocab[@]}" | wc -w)" "$($tool count --input="$text" "${vocab[@]}")"
# Binary ids: the same ids, little-endian, 2 or 4 bytes each ("Hello world" is 15496 995).
expect "u16" "3c88 03e3" "$(printf 'Hello world' | $tool encode --output_format=u16 "${vocab[@]}" | od -An -tx2 | tr -s ' ' | sed 's/^ //')"
expect "u32" "00003c88 000003e3" "$(printf 'Hello world' | $tool encode --output_format=u32 "${vocab[@]}" | od -An -tx4 | tr -s ' ' | sed 's/^ //')"
expect "u16 of the long text" "$($tool encode --input="$text" "${vocab[@]}")" \
  "$($tool encode --input="$text" --output_format=u16 "${vocab[@]}" | od -An -v -tu2 -w2 | tr -d ' ' | paste -sd' ')"
expect "u16 refuses a large id" "tokenize: --output_format=u16: token 1 is 81830, which does not fit in 16 bits (use u32)" \
  "$(printf 'The/at Fulton' | $tool encode --encoding=cl100k_base --output_format=u16 "${vocab[@]}" 2>&1 >/dev/null)"
expect "bad format" "tokenize: --output_format=csv: expected text, u16 or u32" \
  "$(echo x | $tool encode --output_format=csv "${vocab[@]}" 2>&1)"

# Train, then encode with what it wrote (both formats describe the same vocabulary).
$tool train --input="$text" --vocab_size=300 --out="$TEST_TMPDIR/small" 2>/dev/null
expect "train wrote" "3" "$(ls "$TEST_TMPDIR"/small.* | wc -l)"
ids="$(printf 'Line 7: some words' | $tool encode --tiktoken_file="$TEST_TMPDIR/small.tiktoken")"
expect "trained vocabulary round trip" "Line 7: some words" \
  "$(echo "$ids" | $tool decode --tiktoken_file="$TEST_TMPDIR/small.tiktoken")"

# Errors a user sees.
expect "missing vocabulary" "tokenize: cannot open vocabulary file /nowhere/vocab.bpe (run ./setup.sh, or pass --vocab_dir)" \
  "$(echo x | $tool encode --vocab_dir=/nowhere 2>&1)"
expect "unknown encoding" 'tokenize: unknown encoding "gpt3"; known: gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base, o200k_harmony' \
  "$(echo x | $tool encode --encoding=gpt3 "${vocab[@]}" 2>&1)"
expect "bad id" 'tokenize: input item 1 ("x") is not a token id' "$(echo '1 x' | $tool decode "${vocab[@]}" 2>&1)"
expect "unknown command" 'tokenize: unknown command "encdoe": expected encode, decode, count or train' \
  "$($tool encdoe 2>&1)"
printf 'hello\nbad line\n' > "$TEST_TMPDIR/bad.tiktoken"
expect "malformed rank file" "tokenize: $TEST_TMPDIR/bad.tiktoken:1: expected \"<base64 token bytes> <rank>\"" \
  "$(echo x | $tool encode --tiktoken_file="$TEST_TMPDIR/bad.tiktoken" 2>&1)"

expect_done
