#!/usr/bin/env bash
# The train binary end to end: one epoch of the MLP on Fashion-MNIST with its progress
# line, CSV, metrics JSON and checkpoint; and the errors a user can cause.
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
expect "bad model" 'train: unknown model "vit"; expected mlp or cnn' "$($train --model=vit 2>&1)"
expect "bad optimizer" 'train: unknown optimizer "lbfgs"; expected sgd, momentum, rmsprop or adam' \
  "$($train --optimizer=lbfgs 2>&1)"
expect "bad epochs" "train: --epochs=0: expected at least 1" "$($train --epochs=0 2>&1)"
expect "missing data" "1" "$($train --data_dir=/nonexistent 2>&1 | grep -c '^train: .*/nonexistent.*(run ./setup.sh)$')"
expect_done
