#!/usr/bin/env bash
# The train binary end to end: one epoch of the MLP on Fashion-MNIST with its progress
# line, CSV, metrics JSON and checkpoint; the same on 2 ranks under mpirun; and the
# errors a user can cause.
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
# Data parallel: 2 ranks x 32 images, rank 0 alone reporting; it learns as one process does.
mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS=detect_leaks=0 -np 2 \
  $train --epochs=1 --batch_size=32 --out_dir="$out/dp" --metrics_out="$out/dp.json" >"$out.dp" 2>&1
expect "2 ranks: exit" "0" "$?"
expect "2 ranks: one header" "1" "$(grep -c '^train: mlp (101770 parameters) on 2 ranks x cpu, .* in batches of 2 x 32$' "$out.dp")"
expect "2 ranks: one epoch line" "1" "$(grep -c '^epoch 1: train loss' "$out.dp")"
expect "2 ranks: 937 steps of 64" "1" "$(tr '\r' '\n' <"$out.dp" | grep -c '^step 937/937 | epoch 1/1 | loss')"
expect "2 ranks: it learnt" "True" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["test_accuracy"] > 0.8)' "$out/dp.json")"
expect "bad model" 'train: unknown model "vit"; expected mlp or cnn' "$($train --model=vit 2>&1)"
expect "bad optimizer" 'train: unknown optimizer "lbfgs"; expected sgd, momentum, rmsprop or adam' \
  "$($train --optimizer=lbfgs 2>&1)"
expect "bad epochs" "train: --epochs=0: expected at least 1" "$($train --epochs=0 2>&1)"
expect "missing data" "1" "$($train --data_dir=/nonexistent 2>&1 | grep -c '^train: .*/nonexistent.*(run ./setup.sh)$')"
expect_done
