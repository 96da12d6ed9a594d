#!/usr/bin/env bash
# The school chatbot end to end, from scratch (the docs' recipe starts from the main
# job's model instead): the demo GPT fine-tuned on the bundled conversations
# (train --conversations, the loss on the bot's turns only) answers the set's questions
# through chat with the set's facts; a run started from that checkpoint takes its
# tokenizer from it; bad conversation files fail naming the line. The tokenizer is a
# BPE of 833 tokens learnt from the set (tools/reference/school_vocab.py): with GPT-2's
# 50,257 the output layer would make the unoptimised test build's steps 10x slower.
set -uo pipefail
source base/expect.sh
train=models/gpt2/train
chat=models/gpt2/chat
dir="$TEST_TMPDIR"
set_file=models/gpt2/school.jsonl
vocab=models/gpt2/testdata/school.tiktoken

$train --model=demo --vocab=$vocab --conversations=$set_file --batch_size=8 --seq_len=48 \
  --steps=150 --warmup_steps=10 --lr=4e-3 --min_lr=4e-4 --sample_tokens=0 --seed=5 \
  --out_dir="$dir/school" 2>"$dir/train.log"
expect "fine-tuning runs" "0" "$?"
expect "the plan counts the conversations" "1" \
  "$(grep -c '38 conversations (models/gpt2/school.jsonl); 150 steps of 1 x 8 x 48 tokens' "$dir/train.log")"
# ask QUESTION FACT: chat's greedy answer holds the fact.
ask() {
  local answer
  answer="$(printf '%s\n\n' "$1" | $chat --checkpoint="$dir/school/checkpoint.safetensors" \
    --temperature=0 2>/dev/null | head -1)"
  expect "asked \"$1\", the answer names $2 ($answer)" "1" "$(grep -c -F "$2" <<<"$answer")"
}
ask "Who is the head teacher?" "Imogen Okafor"
ask "What is the school mascot?" "heron called Pip"
ask "When does the school day start?" "8:40"

# From the fine-tuned checkpoint, without --vocab: its tokenizer comes with it, and the
# first step's loss is the trained model's, far below a fresh one's ln(833) = 6.7.
$train --init_from="$dir/school/checkpoint.safetensors" --conversations=$set_file --batch_size=8 \
  --seq_len=48 --steps=2 --warmup_steps=0 --lr=1e-4 --min_lr=1e-4 --sample_tokens=0 \
  --out_dir="$dir/again" 2>"$dir/again.log"
expect "fine-tuning from a checkpoint runs" "0" "$?"
expect "... from its weights" "yes" \
  "$(awk -F, 'NR == 3 { print ($2 < 1.0) ? "yes" : "no" }' "$dir/again/metrics.csv")"

printf '{"messages": [{"role": "user", "content": "Hi"}]}\n' >"$dir/bad.jsonl"
$train --model=demo --vocab=$vocab --conversations="$dir/bad.jsonl" --out_dir="$dir/bad" 2>"$dir/bad.log"
expect "a conversation without a reply fails" "1" "$?"
expect "... naming the line" "train: $dir/bad.jsonl:1: no reply of the bot's to learn" "$(tail -1 "$dir/bad.log")"
expect_done
