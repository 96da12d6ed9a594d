#!/usr/bin/env bash
# nanoGPT's own train.py and sample.py on ember and on PyTorch 1.13, side by side: the
# figures of docs/python.md#nanogpt.
#
#   tools/reference/nanogpt.sh NANOGPT_DIR [ROUNDS] [ITERS]
#
# NANOGPT_DIR is a checkout of karpathy/nanoGPT (never part of ember). Into $WORK
# (default /tmp/nanogpt_ember) go torch/, its model.py, train.py, sample.py,
# configurator.py and config/ as they are, and ember/, the same files with only their
# import lines changed (torch -> ember, tiktoken -> ember.tokenizer); then a
# character-level Brown corpus in data/brown_char/ (made as its
# data/shakespeare_char/prepare.py makes Shakespeare's, from ./downloads/brown). Each
# round runs its README's CPU example on both, one after the other, and prints ms/iter
# (the median of the logged iterations after the first) and the losses; at the end
# ember's sample.py samples from its checkpoint. ROUNDS=0 only prepares $WORK. Run from
# ember's root after ./setup.sh; PyTorch is Debian's python3-torch (/usr/bin/python3).
# BATCH_SIZE (default 12, the README's example) sets the windows a step. LOADS="quiet
# busy" runs each round's pair quiet and then with a process spinning on one core (as
# on a machine in use), and ember on one thread beside them under each load.
set -euo pipefail
nanogpt="$(cd "${1:?usage: tools/reference/nanogpt.sh NANOGPT_DIR [ROUNDS] [ITERS]}" && pwd)"
rounds="${2:-2}"
iters="${3:-2000}"
work="${WORK:-/tmp/nanogpt_ember}"
python=/usr/bin/python3
ember_root="$PWD"

rm -rf "$work/torch" "$work/ember"
for side in torch ember; do
  mkdir -p "$work/$side"
  cp -r "$nanogpt"/{model.py,train.py,sample.py,configurator.py,config} "$work/$side/"
done
sed -i -e 's/^import torch$/import ember as torch/' \
  -e 's/^import torch.nn as nn$/import ember.nn as nn/' \
  -e 's/^from torch.nn import functional as F$/from ember.nn import functional as F/' \
  -e 's/^from torch.nn.parallel import/from ember.nn.parallel import/' \
  -e 's/^from torch.distributed import/from ember.distributed import/' \
  -e 's/^import tiktoken$/import ember.tokenizer as tiktoken/' \
  "$work/ember/"{model.py,train.py,sample.py}
echo "import lines changed:"
diff -r "$work/torch" "$work/ember" | grep '^>' || true

mkdir -p "$work/data/brown_char"
if [[ ! -f "$work/data/brown_char/meta.pkl" ]]; then
  "$python" - "$ember_root/downloads/brown" "$work/data/brown_char" <<'PY'
import os, pickle, re, sys
import numpy as np
src, out = sys.argv[1], sys.argv[2]
# The Brown corpus's tagged words (word/tag) as plain text, one sentence a line.
lines = []
for name in sorted(os.listdir(src)):
    if len(name) != 4 or not name[:2].isalpha():
        continue
    for line in open(os.path.join(src, name), encoding="latin-1"):
        words = [re.sub(r"/[^/\s]+$", "", w) for w in line.split()]
        if words:
            lines.append(" ".join(words))
data = "\n".join(lines) + "\n"
chars = sorted(set(data))
stoi = {c: i for i, c in enumerate(chars)}
n = len(data)
for split, text in (("train", data[:int(n * 0.9)]), ("val", data[int(n * 0.9):])):
    np.array([stoi[c] for c in text], dtype=np.uint16).tofile(os.path.join(out, split + ".bin"))
pickle.dump({"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": stoi},
            open(os.path.join(out, "meta.pkl"), "wb"))
print(f"data/brown_char: {n:,} characters, {len(chars)} distinct")
PY
fi
ln -sfn "$work/data" "$work/torch/data"
ln -sfn "$work/data" "$work/ember/data"

# ROUNDS=0: only prepare $WORK (tools/gpu/pack.sh --python packs it for the GPU machine).
[[ $rounds == 0 ]] && exit 0
bazel build -c opt //python:ember/_ember.so >/dev/null 2>&1
install -m 0755 "$(bazel info -c opt bazel-bin 2>/dev/null)/python/ember/_ember.so" python/ember/_ember.so

args=(config/train_shakespeare_char.py --dataset=brown_char --device=cpu --compile=False
  --eval_iters=20 --log_interval=10 --block_size=64 --batch_size="${BATCH_SIZE:-12}" --n_layer=4 --n_head=4
  --n_embd=128 --max_iters="$iters" --lr_decay_iters="$iters" --dropout=0.0)
summary() {  # $1: log; prints the median ms/iter after the first log line, and the losses
  "$python" - "$1" <<'PY'
import re, statistics, sys
log = open(sys.argv[1]).read()
ms = [float(m) for m in re.findall(r"time ([0-9.]+)ms", log)][1:]
evals = re.findall(r"step (\d+): train loss ([0-9.]+), val loss ([0-9.]+)", log)
print(f"median {statistics.median(ms):.1f} ms/iter over {len(ms)} logged iters; evals (step, train, val): {evals}")
PY
}
loads="${LOADS:-quiet}"
spinner=
trap '[[ -n $spinner ]] && kill "$spinner"' EXIT
for r in $(seq "$rounds"); do
  for load in $loads; do
    if [[ $load == busy ]]; then
      sh -c 'while :; do :; done' &
      spinner=$!
    fi
    sides=(torch ember)
    [[ $loads == *busy* ]] && sides+=(ember1)
    for side in "${sides[@]}"; do
      cd "$work/${side%1}"
      rm -rf out-shakespeare-char
      if [[ $side == ember* ]]; then export PYTHONPATH="$ember_root/python"; else unset PYTHONPATH; fi
      log="$work/$side.$load.$r.log"
      if [[ $side == ember1 ]]; then
        EMBER_NUM_THREADS=1 "$python" train.py "${args[@]}" >"$log" 2>&1 || { tail -20 "$log"; exit 1; }
      else
        "$python" train.py "${args[@]}" >"$log" 2>&1 || { tail -20 "$log"; exit 1; }
      fi
      echo "round $r, $load, ${side/ember1/ember on 1 thread}: $(summary "$log")"
    done
    if [[ -n $spinner ]]; then
      kill "$spinner"
      wait "$spinner" 2>/dev/null || true
      spinner=
    fi
  done
done
# (PyTorch's side would need tiktoken, which its sample.py imports, in Debian's python3.)
cd "$work/ember"
export PYTHONPATH="$ember_root/python"
echo "ember's sample:"
"$python" sample.py --out_dir=out-shakespeare-char --device=cpu --num_samples=1 --max_new_tokens=200 2>&1 | tail -4
