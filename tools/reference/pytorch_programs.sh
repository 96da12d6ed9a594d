#!/usr/bin/env bash
# Well-known PyTorch programs on ember and on PyTorch 1.13, side by side, with only their
# import lines changed: the table of docs/perf/python.md.
#
#   tools/reference/pytorch_programs.sh MAKEMORE_DIR MINGPT_DIR EXAMPLES_DIR [ROUNDS] [ONLY]
#
# The three folders are checkouts of karpathy/makemore, karpathy/minGPT and
# pytorch/examples (never part of ember). Into $WORK (default /tmp/pytorch_programs) go
# torch/ and ember/, each with copies of makemore.py, minGPT's mingpt/ and projects/,
# and pytorch/examples' regression, time_sequence_prediction and word_language_model; in
# ember/ every `import torch...` / `from torch... import` line names ember instead (the
# diff is printed). Small data is made offline: names from makemore's own names.txt, a
# character text and a word-level train/valid/test split from ./downloads/brown, and the
# sine waves by time_sequence_prediction's own generate_sine_wave.py on each side.
# Debian has no tensorboard package, which PyTorch's torch.utils.tensorboard needs: the
# torch copy of makemore gets a SummaryWriter that writes nothing (ember's writes event
# files). Each round runs every program on PyTorch, then on ember, both on $THREADS
# threads (default 2), and prints a line per run; then one table: whether each ran, its
# final loss on each side and the seconds each took, with the ratio. ONLY (a regex)
# picks programs by name. Run from ember's root after ./setup.sh; PyTorch is Debian's
# python3-torch (/usr/bin/python3), with python3-matplotlib for time_sequence_prediction.
set -euo pipefail
usage="usage: tools/reference/pytorch_programs.sh MAKEMORE_DIR MINGPT_DIR EXAMPLES_DIR [ROUNDS] [ONLY]"
makemore="$(cd "${1:?$usage}" && pwd)"
mingpt="$(cd "${2:?$usage}" && pwd)"
examples="$(cd "${3:?$usage}" && pwd)"
rounds="${4:-1}"
only="${5:-.}"
work="${WORK:-/tmp/pytorch_programs}"
threads="${THREADS:-2}"
python=/usr/bin/python3
ember_root="$PWD"

bazel build -c opt //python:ember/_ember.so >/dev/null 2>&1
install -m 0755 "$(bazel info -c opt bazel-bin 2>/dev/null)/python/ember/_ember.so" python/ember/_ember.so

rm -rf "$work/torch" "$work/ember"
for side in torch ember; do
  mkdir -p "$work/$side/examples"
  cp "$makemore/makemore.py" "$makemore/names.txt" "$work/$side/"
  cp -r "$mingpt/mingpt" "$mingpt/projects" "$work/$side/"
  for e in regression time_sequence_prediction word_language_model; do
    mkdir -p "$work/$side/examples/$e"
    cp "$examples/$e"/*.py "$work/$side/examples/$e/"
  done
done
mapfile -t sources < <(cd "$work/ember" && find . -name '*.py')
(cd "$work/ember" && sed -E -i \
  -e 's/^(\s*)import torch$/\1import ember as torch/' \
  -e 's/^(\s*)import torch\.([A-Za-z_.]+)( as .*)?$/\1import ember.\2\3/' \
  -e 's/^(\s*)from torch(\.[A-Za-z_.]+)? import/\1from ember\2 import/' \
  "${sources[@]}")
echo "import lines changed:"
diff -r "$work/torch" "$work/ember" | grep '^>' | sort | uniq -c || true

# PyTorch's SummaryWriter needs the tensorboard package; the torch copy gets one that
# writes nothing.
mkdir -p "$work/stubs"
cat > "$work/stubs/no_tensorboard.py" <<'PY'
class SummaryWriter:
    def __init__(self, *args, **kwargs): pass
    def add_scalar(self, *args, **kwargs): pass
    def flush(self): pass
    def close(self): pass
PY
sed -i 's/^from torch.utils.tensorboard import SummaryWriter$/from no_tensorboard import SummaryWriter/' \
  "$work/torch/makemore.py"

"$python" - "$ember_root/downloads/brown" "$work" <<'PY'
import os, re, sys
src, work = sys.argv[1], sys.argv[2]
lines = []  # the Brown corpus's words (word/tag) as plain text, one sentence a line
for name in sorted(os.listdir(src)):
    if len(name) == 4 and name[:2].isalpha():
        for line in open(os.path.join(src, name), encoding="latin-1"):
            words = [re.sub(r"/[^/\s]+$", "", w) for w in line.split()]
            if words:
                lines.append(" ".join(words))
for side in ("torch", "ember"):
    with open(os.path.join(work, side, "projects/chargpt/input.txt"), "w") as f:
        f.write("\n".join(lines)[:200_000])
    data = os.path.join(work, side, "examples/word_language_model/data/brown")
    os.makedirs(data, exist_ok=True)
    for split, part in (("train", lines[:1500]), ("valid", lines[1500:1700]), ("test", lines[1700:1900])):
        with open(os.path.join(data, split + ".txt"), "w") as f:
            f.write("\n".join(part) + "\n")
print(f"data: chargpt 200,000 characters, word_language_model 1,500/200/200 sentences of the Brown corpus")
PY

# name | folder | command | the regex of a loss line (the last match's group 1 is the loss)
programs=(
  "makemore bigram|.|makemore.py -i names.txt -o out_bigram --type bigram --max-steps 300 --num-workers 0|step [0-9]+ \| loss ([0-9.]+)"
  "makemore mlp|.|makemore.py -i names.txt -o out_mlp --type mlp --max-steps 300 --num-workers 0|step [0-9]+ \| loss ([0-9.]+)"
  "makemore rnn|.|makemore.py -i names.txt -o out_rnn --type rnn --max-steps 150 --num-workers 0|step [0-9]+ \| loss ([0-9.]+)"
  "makemore gru|.|makemore.py -i names.txt -o out_gru --type gru --max-steps 150 --num-workers 0|step [0-9]+ \| loss ([0-9.]+)"
  "makemore bow|.|makemore.py -i names.txt -o out_bow --type bow --max-steps 300 --num-workers 0|step [0-9]+ \| loss ([0-9.]+)"
  "makemore transformer|.|makemore.py -i names.txt -o out_transformer --type transformer --max-steps 150 --num-workers 0|step [0-9]+ \| loss ([0-9.]+)"
  "minGPT chargpt|projects/chargpt|chargpt.py --trainer.max_iters=150 --trainer.num_workers=0 --model.model_type=None --model.n_layer=2 --model.n_head=4 --model.n_embd=128 --data.block_size=64 --trainer.batch_size=32 --system.work_dir='out'|train loss ([0-9.]+)"
  "minGPT adder|projects/adder|adder.py --trainer.max_iters=150 --trainer.num_workers=0 --system.work_dir='out'|train loss ([0-9.]+)"
  "examples regression|examples/regression|main.py|Loss: ([0-9.]+) after"
  "examples time_sequence_prediction|examples/time_sequence_prediction|train.py --steps 3|test loss: ([0-9.e-]+)"
  "examples word_language_model LSTM|examples/word_language_model|main.py --model LSTM --epochs 1 --emsize 64 --nhid 64 --bptt 20 --data data/brown --log-interval 100|valid loss +([0-9.]+)"
  "examples word_language_model GRU|examples/word_language_model|main.py --model GRU --epochs 1 --emsize 64 --nhid 64 --bptt 20 --data data/brown --log-interval 100|valid loss +([0-9.]+)"
  "examples word_language_model RNN_TANH|examples/word_language_model|main.py --model RNN_TANH --epochs 1 --emsize 64 --nhid 64 --bptt 20 --data data/brown --log-interval 100|valid loss +([0-9.]+)"
  "examples word_language_model Transformer|examples/word_language_model|main.py --model Transformer --epochs 1 --emsize 64 --nhid 64 --nhead 2 --bptt 20 --data data/brown --log-interval 100|valid loss +([0-9.]+)"
)

results="$work/results.tsv"
: > "$results"
for round in $(seq 1 "$rounds"); do
  for entry in "${programs[@]}"; do
    IFS='|' read -r name folder command pattern <<< "$entry"
    [[ "$name" =~ $only ]] || continue
    for side in torch ember; do
      dir="$work/$side/$folder"
      log="$work/$side.$(echo "$name" | tr ' ' '_').$round.log"
      if [[ "$name" == *time_sequence_prediction* ]]; then
        (cd "$dir" && PYTHONPATH="$work/$side:$work/stubs:$ember_root/python" "$python" generate_sine_wave.py >/dev/null 2>&1)
      fi
      start=$(date +%s.%N)
      rc=0
      (cd "$dir" && OMP_NUM_THREADS="$threads" EMBER_NUM_THREADS="$threads" MPLBACKEND=Agg \
        PYTHONPATH="$work/$side:$work/stubs:$ember_root/python" timeout 900 "$python" $command) > "$log" 2>&1 || rc=$?
      seconds=$(echo "$(date +%s.%N) - $start" | bc)
      loss=$("$python" -c 'import re, sys; m = re.findall(sys.argv[2], open(sys.argv[1]).read()); print(m[-1] if m else "-")' "$log" "$pattern")
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$side" "$round" "$rc" "$loss" "$seconds" >> "$results"
      printf 'round %s  %-44s %-6s exit %-3s loss %-10s %6.1f s\n' "$round" "$name" "$side" "$rc" "$loss" "$seconds"
    done
  done
done

"$python" - "$results" <<'PY'
import collections, statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
by = collections.OrderedDict()
for name, side, _, rc, loss, seconds in rows:
    by.setdefault(name, {}).setdefault(side, []).append((int(rc), loss, float(seconds)))
print("\n| program | runs on ember | loss, PyTorch | loss, ember | s, PyTorch | s, ember | ember faster by |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
ran = 0
for name, sides in by.items():
    t, e = sides.get("torch", []), sides.get("ember", [])
    ok = all(rc == 0 for rc, _, _ in e) and e
    ran += bool(ok)
    ts, es = statistics.median(s for *_, s in t), statistics.median(s for *_, s in e)
    print(f"| {name} | {'yes' if ok else 'no'} | {t[-1][1]} | {e[-1][1]} | {ts:.1f} | {es:.1f} | {ts / es:.2f}x |")
print(f"\n{ran} of {len(by)} programs ran on ember (median seconds over the rounds; exit codes in {sys.argv[1]})")
PY
