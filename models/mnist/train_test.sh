#!/usr/bin/env bash
# The train binary end to end: one epoch of the MLP on Fashion-MNIST with its progress
# line, CSV, metrics JSON and checkpoint; the same on 2 ranks under mpirun, and with FSDP
# on 2 and 4 against one process; stopping
# with Ctrl-C and resuming; MNIST digits with the squared-error loss; and the errors a
# user can cause.
set -uo pipefail
source base/expect.sh
train=models/mnist/train
if [ ! -e /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  echo "SKIP: Fashion-MNIST is not installed (./setup.sh installs dataset-fashion-mnist)"
  exit 0
fi
out="$TEST_TMPDIR/run"
$train --epochs=1 --batch_size=64 --out_dir="$out" --metrics_out="$out/m.json" >"$out.stdout" 2>"$out.stderr"
expect "exit" "0" "$?"
expect "progress" "1" "$(tr '\r' '\n' <"$out.stderr" | grep -c '^step 938/938 | epoch 1/1 | loss')"
expect "epoch line" "1" "$(grep -c '^epoch 1: train loss' "$out.stderr")"
expect "csv header" "epoch,train_loss,test_loss,test_accuracy,train_seconds,examples_per_second" \
  "$(head -1 "$out/metrics.csv")"
expect "csv rows" "2" "$(wc -l <"$out/metrics.csv")"
keys="$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1])))))' "$out/m.json")"
expect "metrics keys" "epochs examples_per_second parameters test_accuracy test_loss train_loss train_seconds" "$keys"
expect "it learnt" "True" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["test_accuracy"] > 0.8)' "$out/m.json")"
expect "checkpoint" "yes" "$([ -s "$out/mlp.safetensors" ] && echo yes)"
# A network from a spec file (named layers, a residual sum, Paddle's fully connected
# layer over two inputs) trains like the built-in MLP.
cat >"$TEST_TMPDIR/net.json" <<'JSON'
{"layers": [
  {"name": "flat", "type": "Flatten"},
  {"name": "h1", "type": "Linear", "in_features": 784, "out_features": 64, "activation": "relu"},
  {"name": "h2", "type": "Linear", "in_features": 64, "out_features": 64, "activation": "relu"},
  {"name": "res", "type": "Add", "inputs": ["h1", "h2"]},
  {"name": "out", "type": "FullyConnected", "inputs": ["h1", "res"], "size": 10}]}
JSON
$train --model="$TEST_TMPDIR/net.json" --epochs=1 --batch_size=64 --optimizer=adam \
  --out_dir="$out/spec" --metrics_out="$out/spec.json" >/dev/null 2>"$out.spec"
expect "a spec file trains" "0" "$?"
expect "... it learnt" "True" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["test_accuracy"] > 0.8)' "$out/spec.json")"
expect "... its checkpoint is named after it" "yes" "$([ -s "$out/spec/net.safetensors" ] && echo yes)"
echo '{"layers": [{"name": "a", "type": "Flatten", "inputs": ["b"]}]}' >"$TEST_TMPDIR/bad.json"
$train --model="$TEST_TMPDIR/bad.json" --out_dir="$out/bad_spec" 2>"$out.bad_spec"
expect "a bad spec names the layer" "train: $TEST_TMPDIR/bad.json: layer a: unknown input \"b\"" "$(tail -1 "$out.bad_spec")"
# Data parallel: 2 ranks x 32 images, rank 0 alone reporting; it learns as one process does.
"${test_mpirun[@]}" -np 2 \
  $train --epochs=1 --batch_size=32 --out_dir="$out/dp" --metrics_out="$out/dp.json" >"$out.dp" 2>&1
expect "2 ranks: exit" "0" "$?"
expect "2 ranks: one header" "1" "$(grep -c '^train: mlp (101770 parameters) on 2 ranks x cpu, .* in batches of 2 x 32$' "$out.dp")"
expect "2 ranks: one epoch line" "1" "$(grep -c '^epoch 1: train loss' "$out.dp")"
expect "2 ranks: 937 steps of 64" "1" "$(tr '\r' '\n' <"$out.dp" | grep -c '^step 937/937 | epoch 1/1 | loss')"
expect "2 ranks: it learnt" "True" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["test_accuracy"] > 0.8)' "$out/dp.json")"
# FSDP (each Linear a unit) on 2 and 4 ranks: one epoch of MNIST digits (125 global
# batches of 64) ends with one process's weights and Adam state (measured 5e-7); the
# classifiers have no tensor-parallel layers for a model axis.
digits=(--dataset=digits --optimizer=adam --epochs=1)
$train "${digits[@]}" --batch_size=64 --out_dir="$out/fsdp1" 2>/dev/null
expect "fsdp: one process" "0" "$?"
for n in 2 4; do
  "${test_mpirun[@]}" -np $n $train "${digits[@]}" --batch_size=$((64 / n)) --fsdp \
    --out_dir="$out/fsdp$n" >"$out.fsdp$n" 2>&1
  expect "fsdp on $n ranks: exit" "0" "$?"
  expect "fsdp on $n ranks: the header says so" "1" "$(grep -c "^train: mlp (101770 parameters) on $n ranks (FSDP) x cpu" "$out.fsdp$n")"
  python3 models/common/compare_checkpoints.py "$out/fsdp1/mlp.safetensors" "$out/fsdp$n/mlp.safetensors" \
    --tolerance=1e-5 >"$out.compare" 2>&1
  expect "fsdp on $n ranks = one process: $(tail -1 "$out.compare")" "0" "$?"
done
"${test_mpirun[@]}" -np 2 $train "${digits[@]}" --mesh=model:2 --out_dir="$out/tp" >"$out.tp" 2>&1
expect "a model axis fails on every rank, saying why" "2" "$(grep -c 'this model has no tensor-parallel layers for the 2 ranks of its model axis' "$out.tp")"
# Stop and resume: Ctrl-C mid-epoch writes a checkpoint and exits 130; --resume=latest
# ends with the weights and Adam state of the run that never stopped, bit for bit.
run=(--epochs=2 --batch_size=256 --optimizer=adam)
$train "${run[@]}" --out_dir="$out/whole" 2>/dev/null
expect "whole: exit" "0" "$?"
EMBER_PROGRESS_SECONDS=0 $train "${run[@]}" --out_dir="$out/cut" --checkpoint_every=100 --keep_checkpoints=2 \
  2>"$out.cut" &
pid=$!
for _ in $(seq 600); do grep -q '^step 1[5-9]0/470' "$out.cut" && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
expect "SIGINT: exit 130" "130" "$?"
expect "SIGINT: says where" "1" "$(grep -c '^train: stopped by signal 2 after step .*continue with --resume=latest' "$out.cut")"
expect "SIGINT: the newest 2 kept" "2" "$(ls "$out/cut/checkpoints" | grep -c '^step_000[0-9]*.safetensors$')"
$train "${run[@]}" --out_dir="$out/cut" --resume=latest 2>"$out.resumed"
expect "resume: exit" "0" "$?"
expect "resume: from where it stopped" "1" "$(grep -c '; resuming at step [0-9]* of 470$' "$out.resumed")"
expect "resume: one CSV row per epoch" "epoch 1 2" "$(cut -d, -f1 "$out/cut/metrics.csv" | xargs)"
python3 models/common/compare_checkpoints.py "$out/whole/mlp.safetensors" "$out/cut/mlp.safetensors" --tolerance 0 \
  >"$out.compare" 2>&1
expect "stopped and resumed = never stopped (weights and Adam's state, bit for bit)" "0" "$?"
expect "resume: another run's flags" \
  "train: $out/cut/mlp.safetensors was trained with --optimizer=adam; this run has --optimizer=sgd (a resumed run keeps its flags)" \
  "$($train --epochs=3 --batch_size=256 --lr=0.001 --out_dir="$out/cut" --resume=latest 2>&1)"
expect "resume: nothing left" "1" "$($train "${run[@]}" --out_dir="$out/cut" --resume=latest 2>&1 | grep -c 'is at step 470 and --epochs=2 has 470: nothing to continue')"
expect "resume: not mnist's" "1" "$($train "${run[@]}" --resume="$out/m.json" 2>&1 | grep -c '^train: .*m.json')"
# MNIST digits (8,000 / 2,000) with the thesis's loss, squared error on the softmax: two
# epochs of Adam learn them; the loss curves are drawn.
$train --dataset=digits --loss=squared_error --optimizer=adam --epochs=2 --out_dir="$out/digits" \
  --metrics_out="$out/digits.json" >/dev/null 2>"$out.digits"
expect "digits: exit" "0" "$?"
expect "digits: 8,000 training images" "1" "$(grep -c 'epochs of 8000 images' "$out.digits")"
expect "digits: it learnt" "True" \
  "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["test_accuracy"] > 0.9)' "$out/digits.json")"
expect "digits: the loss plot" "1" "$(grep -c '<svg' "$out/digits/loss.svg")"
expect "bad loss" 'train: unknown loss "hinge"; expected cross_entropy or squared_error' "$($train --loss=hinge 2>&1)"
expect "bad dataset" "train: --dataset=cifar: expected fashion or digits" "$($train --dataset=cifar 2>&1)"
expect "bad model" 'train: unknown model "vit"; expected mlp, cnn or a .json model spec' "$($train --model=vit 2>&1)"
expect "bad optimizer" 'train: unknown optimizer "lbfgs"; expected sgd, momentum, rmsprop or adam' \
  "$($train --optimizer=lbfgs 2>&1)"
expect "bad epochs" "train: --epochs=0: expected at least 1" "$($train --epochs=0 2>&1)"
expect "missing data" "1" "$($train --data_dir=/nonexistent 2>&1 | grep -c '^train: .*/nonexistent.*(run ./setup.sh)$')"
expect_done
