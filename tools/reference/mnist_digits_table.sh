#!/usr/bin/env bash
# The SciCore thesis's MNIST table on ember and PyTorch 1.13: the MLP 784-128-10 (ReLU,
# softmax) on MNIST digits (downloads/mnist-digits: 8,000 training, 2,000 test images),
# each optimizer (SGD, SGD with momentum 0.9, RMSprop, Adam; ember's default learning
# rates, batch 32) with the thesis's loss (squared error on the softmax) and with cross
# entropy, EPOCHS epochs, ember then PyTorch for each. Prints a Markdown table of test
# accuracies beside the thesis's; each ember run's loss curves are in
# runs/mnist-digits/<optimizer>-<loss>/loss.svg.
#
#   tools/reference/mnist_digits_table.sh [EPOCHS]     (after ./setup.sh; default 20)
set -euo pipefail
cd "$(dirname "$0")/../.."
epochs="${1:-20}"
bazel build -c opt //models/mnist:train >/dev/null 2>&1
train="$(bazel info -c opt bazel-bin 2>/dev/null)/models/mnist/train"
declare -A thesis=([sgd]=95.5 [momentum]=97.8 [rmsprop]=97.5 [adam]=97.8)
accuracy() { python3 -c 'import json, sys; print("%.2f%%" % (100 * json.load(open(sys.argv[1]))["test_accuracy"]))' "$1"; }
echo "| optimizer | thesis (squared error) | ember, squared error | PyTorch, squared error | ember, cross entropy | PyTorch, cross entropy |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for optimizer in sgd momentum rmsprop adam; do
  row="| $optimizer | ${thesis[$optimizer]}%"
  for loss in squared_error cross_entropy; do
    out="runs/mnist-digits/$optimizer-$loss"
    "$train" --dataset=digits --loss="$loss" --optimizer="$optimizer" --epochs="$epochs" \
      --out_dir="$out" --metrics_out="$out/ember.json" 2>/dev/null
    OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 tools/reference/mnist_torch.py --data_dir=downloads/mnist-digits \
      --loss="$loss" --optimizer="$optimizer" --epochs="$epochs" --threads=2 --metrics_out="$out/torch.json" \
      >/dev/null 2>&1
    row="$row | $(accuracy "$out/ember.json") | $(accuracy "$out/torch.json")"
  done
  echo "$row |"
done
