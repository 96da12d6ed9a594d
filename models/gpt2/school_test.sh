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
# first step's loss is the trained model's, far below a fresh one's ln(833) = 6.7. Its
# closing sample is one conversation: it ends at <|endoftext|>, which it does not print.
$train --init_from="$dir/school/checkpoint.safetensors" --conversations=$set_file --batch_size=8 \
  --seq_len=48 --steps=2 --warmup_steps=0 --lr=1e-4 --min_lr=1e-4 --sample_tokens=300 \
  --out_dir="$dir/again" >"$dir/again.stdout" 2>"$dir/again.log"
expect "fine-tuning from a checkpoint runs" "0" "$?"
expect "the sample is one conversation" "1 0" \
  "$(grep -c -- '---- sample' "$dir/again.stdout") $(grep -c -F '<|endoftext|>' "$dir/again.stdout")"
expect "... from its weights" "yes" \
  "$(awk -F, 'NR == 3 { print ($2 < 1.0) ? "yes" : "no" }' "$dir/again/metrics.csv")"

# The docs' recipe (docs/models.md, "A chatbot for one school") as `bazel run` runs it:
# each binary started in its runfiles, the user in a workspace of their own
# (BUILD_WORKSPACE_DIRECTORY, BUILD_WORKING_DIRECTORY), the commands' relative paths as
# printed, with tiny settings appended (a main job of 4 steps on a 300-token BPE of the
# Brown corpus). The relative paths must reach the user's workspace, not the runfiles.
ws="$dir/ws"
mkdir -p "$ws/downloads" "$ws/models/gpt2"
ln -s "$PWD/downloads/brown" "$ws/downloads/brown"
cp $set_file "$ws/models/gpt2/school.jsonl"
tiny=(--steps=4 --warmup_steps=1 --batch_size=2 --seq_len=32 --val_every=4 --val_batches=1 --sample_tokens=0)
export BUILD_WORKSPACE_DIRECTORY="$ws" BUILD_WORKING_DIRECTORY="$ws"
$train "${tiny[@]}" --vocab_size=300 2>"$dir/recipe_main.log"
expect "the recipe's main job runs" "0" "$?"
$train --init_from=runs/gpt2/checkpoint.safetensors \
  --conversations=models/gpt2/school.jsonl --steps=300 --batch_size=8 --seq_len=64 \
  --warmup_steps=10 --lr=1e-3 --min_lr=1e-4 --out_dir=runs/school "${tiny[@]}" 2>"$dir/recipe_school.log"
expect "the recipe's fine-tuning runs, from the relative paths" "0" "$?"
expect "... into the user's runs/school" "yes" "$([ -f "$ws/runs/school/checkpoint.safetensors" ] && echo yes)"
echo "Who is the head teacher?" | $chat --checkpoint=runs/school/checkpoint.safetensors >"$dir/recipe_chat.out" 2>&1
expect "the recipe's chat answers" "0" "$?"
unset BUILD_WORKSPACE_DIRECTORY BUILD_WORKING_DIRECTORY

printf '{"messages": [{"role": "user", "content": "Hi"}]}\n' >"$dir/bad.jsonl"
$train --model=demo --vocab=$vocab --conversations="$dir/bad.jsonl" --out_dir="$dir/bad" 2>"$dir/bad.log"
expect "a conversation without a reply fails" "1" "$?"
expect "... naming the line" "train: $dir/bad.jsonl:1: no reply of the bot's to learn" "$(tail -1 "$dir/bad.log")"
expect_done
