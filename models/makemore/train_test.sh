#!/usr/bin/env bash
# The character models' binaries end to end on the real names: the counting and neural
# bigrams (losses, samples, CSV, JSON), a short run of makemore's MLP, stopped and
# resumed, and on 2 and 4 ranks (plain and FSDP) against one process; the errors.
set -uo pipefail
source base/expect.sh
if [ ! -e downloads/names/female.txt ]; then
  echo "SKIP: the names are not downloaded (./setup.sh)"
  exit 0
fi
bigram=models/bigram/train
mlp=models/makemore/train
out="$TEST_TMPDIR/run"
json() { python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

$bigram --names_dir=downloads/names --out_dir="$out/bigram" --samples=5 --metrics_out="$out/counting.json" >"$out.stdout" 2>"$out.stderr"
expect "counting exit" "0" "$?"
expect "counting losses" "loss (nats per character): train 2.4246, val 2.4233, test 2.4295" "$(head -1 "$out.stdout")"
expect "counting samples" "6" "$(wc -l <"$out.stdout")"
expect "counting keys" "['parameters', 'samples', 'test_loss', 'train_loss', 'val_loss']" "$(json "$out/counting.json" 'sorted(m)')"
expect "counting samples in json" "5" "$(json "$out/counting.json" 'len(m["samples"])')"

$bigram --model=neural --steps=50 --names_dir=downloads/names --out_dir="$out/neural" --metrics_out="$out/neural.json" >/dev/null 2>"$out.stderr"
expect "neural exit" "0" "$?"
expect "neural progress" "1" "$(tr '\r' '\n' <"$out.stderr" | grep -c '^step 50/50 | loss')"
expect "neural csv" "52" "$(wc -l <"$out/neural/metrics.csv")"  # header, 50 steps, final
expect "neural learnt" "True" "$(json "$out/neural.json" 'm["val_loss"] < 2.8')"

$mlp --steps=2000 --val_every=1000 --samples=3 --names_dir=downloads/names --out_dir="$out/mlp" \
  --metrics_out="$out/mlp.json" >"$out.stdout" 2>"$out.stderr"
expect "mlp exit" "0" "$?"
expect "mlp progress" "1" "$(tr '\r' '\n' <"$out.stderr" | grep -c '^step 2000/2000 | loss')"
expect "mlp val lines" "2" "$(grep -c '^step [0-9]*: train loss .*, val loss' "$out.stderr")"
expect "mlp csv" "step,lr,batch_loss,train_loss,val_loss" "$(head -1 "$out/mlp/metrics.csv")"
expect "mlp csv rows" "3" "$(wc -l <"$out/mlp/metrics.csv")"
expect "mlp keys" "['parameters', 'samples', 'steps', 'test_loss', 'train_loss', 'train_seconds', 'val_loss']" \
  "$(json "$out/mlp.json" 'sorted(m)')"
expect "mlp learnt" "True" "$(json "$out/mlp.json" 'm["val_loss"] < 2.45')"
expect "mlp model" "yes" "$([ -s "$out/mlp/mlp.safetensors" ] && echo yes)"

# Stop and resume: Ctrl-C writes a checkpoint and exits 130; --resume=latest ends with the
# weights, the CSV and the samples of the run that never stopped.
run=(--steps=3000 --val_every=1000 --samples=3 --names_dir=downloads/names)
$mlp "${run[@]}" --out_dir="$out/whole" >"$out.whole" 2>/dev/null
EMBER_PROGRESS_SECONDS=0 $mlp "${run[@]}" --out_dir="$out/cut" --checkpoint_every=500 >/dev/null 2>"$out.cut" &
pid=$!
for _ in $(seq 600); do grep -q '^step 1[05]00/3000' "$out.cut" && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
expect "SIGINT: exit 130" "130" "$?"
expect "SIGINT: says where" "1" "$(grep -c '^train: stopped by signal 2 after step .*continue with --resume=latest' "$out.cut")"
$mlp "${run[@]}" --out_dir="$out/cut" --resume=latest >"$out.resumed" 2>"$out.cut2"
expect "resume: exit" "0" "$?"
expect "resume: from where it stopped" "1" "$(grep -c 'resuming at step' "$out.cut2")"
expect "resume: the same samples" "$(tail -3 "$out.whole")" "$(tail -3 "$out.resumed")"
expect "resume: the same CSV" "$(cat "$out/whole/metrics.csv")" "$(cat "$out/cut/metrics.csv")"
python3 models/common/compare_checkpoints.py "$out/whole/mlp.safetensors" "$out/cut/mlp.safetensors" --tolerance 0 \
  >"$out.compare" 2>&1
expect "stopped and resumed = never stopped (bit for bit)" "0" "$?"
expect "resume: another run's flags" \
  "train: $out/cut/mlp.safetensors was trained with --hidden=200; this run has --hidden=100 (a resumed run keeps its flags)" \
  "$($mlp "${run[@]}" --hidden=100 --out_dir="$out/cut" --resume=latest 2>&1)"
# Several processes: 300 steps of a global minibatch of 32 on 2 ranks (plain and FSDP)
# and 4 (FSDP) end with one process's weights (measured 2e-7), losses and samples.
steps=(--steps=300 --val_every=100 --samples=3 --names_dir=downloads/names)
$mlp "${steps[@]}" --batch_size=32 --out_dir="$out/one" >"$out.one" 2>/dev/null
expect "one process" "0" "$?"
for case in "2 dp" "2 fsdp --fsdp" "4 fsdp --fsdp"; do
  read -r n name flag <<<"$case"
  "${test_mpirun[@]}" -np "$n" $mlp "${steps[@]}" --batch_size=$((32 / n)) $flag \
    --out_dir="$out/$name$n" >"$out.$name$n" 2>"$out.$name$n.err"
  expect "$name on $n ranks: exit" "0" "$?"
  expect "$name on $n ranks: rank 0 alone prints" "1" "$(grep -c '^train: Mlp.* on '"$n"' ranks .*300 steps of '"$n"' x ' "$out.$name$n.err")"
  expect "$name on $n ranks: one process's losses and samples" "$(sed 's/ (.* of training)//' "$out.one")" \
    "$(sed 's/ (.* of training)//' "$out.$name$n")"
  python3 models/common/compare_checkpoints.py "$out/one/mlp.safetensors" "$out/$name$n/mlp.safetensors" \
    --tolerance=1e-5 >"$out.compare" 2>&1
  expect "$name on $n ranks = one process: $(tail -1 "$out.compare")" "0" "$?"
done
expect "bad bigram" 'train: unknown model "trigram"; expected counting or neural' "$($bigram --model=trigram 2>&1)"
expect "bad steps" "train: --steps=0: expected at least 1" "$($mlp --steps=0 2>&1)"
expect "missing names" "1" "$($mlp --names_dir=/nonexistent 2>&1 | grep -c '^train: .*/nonexistent.*(run ./setup.sh)$')"
expect_done
