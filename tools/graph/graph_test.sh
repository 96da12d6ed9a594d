#!/bin/bash
# tools/graph writes DOT with the block model's ops, a spec's network (its residual sum,
# concatenation and two-input fully connected layer) and a GPT-2 checkpoint's; SVG
# through Graphviz with a drawn node per DOT node; bad flags fail with a message.
set -euo pipefail
graph=tools/graph/graph
out="$TEST_TMPDIR/block.dot"
"$graph" --model=block --out="$out" 2>/dev/null
for op in layer_norm linear narrow view transpose causal_attention gelu_tanh reshape add cross_entropy; do
  grep -q "label=\"$op" "$out" || { echo "missing op $op in $out"; exit 1; }
done
head -1 "$out" | grep -q '^digraph autograd {$'
"$graph" --model=mlp | grep -q 'label="cross_entropy\\n\[\]", style=bold'
if "$graph" --model=nope 2>"$TEST_TMPDIR/err"; then echo "unknown model accepted"; exit 1; fi
grep -q "unknown --model=nope" "$TEST_TMPDIR/err"
if "$graph" --dim=10 --heads=3 2>"$TEST_TMPDIR/err"; then echo "bad heads accepted"; exit 1; fi
grep -q "must divide --dim 10" "$TEST_TMPDIR/err"
cat >"$TEST_TMPDIR/net.json" <<'JSON'
{"input_size": 8, "layers": [
  {"name": "h1", "type": "Linear", "in_features": 8, "out_features": 16, "activation": "relu"},
  {"name": "h2", "type": "Linear", "in_features": 16, "out_features": 16, "activation": "tanh"},
  {"name": "sum", "type": "Add", "inputs": ["h1", "h2"]},
  {"name": "both", "type": "Concat", "inputs": ["h1", "sum"]},
  {"name": "out", "type": "FullyConnected", "inputs": ["h1", "both"], "size": 4}]}
JSON
net="$TEST_TMPDIR/net.dot"
"$graph" --spec="$TEST_TMPDIR/net.json" --input_shape=2,8 --out="$net" 2>/dev/null
for op in 'linear\n[2, 16]' 'relu' 'tanh' 'add\n[2, 16]' 'cat\n[2, 32]' 'linear\n[2, 4]' 'add\n[2, 4]'; do
  grep -qF "label=\"$op" "$net" || { echo "missing $op in $net"; exit 1; }
done
# 7 parameters: h1's two, h2's two, out's weight_0, weight_1 and bias.
[ "$(grep -c 'shape=ellipse' "$net")" -eq 7 ] || { echo "expected 7 parameter leaves"; exit 1; }
"$graph" --checkpoint=models/gpt2/testdata/tiny_llmc.bin --batch=1 --seq=4 >"$TEST_TMPDIR/gpt.dot"
grep -q 'label="causal_attention' "$TEST_TMPDIR/gpt.dot"
# GPT-2 as a spec on token ids: 2 blocks' attention, the head on wte's table, and its 28
# parameters (wte, wpe, 12 a block, ln_f's 2), the head adding none.
"$graph" --spec=models/gpt2/tiny.json --input_ids=50257 --input_shape=1,4 >"$TEST_TMPDIR/spec.dot"
[ "$(grep -c 'label="causal_attention' "$TEST_TMPDIR/spec.dot")" -eq 2 ] || { echo "expected 2 attentions"; exit 1; }
grep -qF 'label="linear\n[1, 4, 50257]' "$TEST_TMPDIR/spec.dot" || { echo "no head"; exit 1; }
[ "$(grep -c 'shape=ellipse' "$TEST_TMPDIR/spec.dot")" -eq 28 ] || { echo "expected 28 parameter leaves"; exit 1; }
if command -v dot >/dev/null; then
  "$graph" --spec="$TEST_TMPDIR/net.json" --input_shape=2,8 --out="$TEST_TMPDIR/net.svg" 2>/dev/null
  [ "$(grep -c 'class="node"' "$TEST_TMPDIR/net.svg")" -eq "$(grep -c '^  n[0-9]* \[' "$net")" ] ||
    { echo "the SVG does not draw every node"; exit 1; }
  grep -q '>cat</text>' "$TEST_TMPDIR/net.svg" || { echo "the SVG lacks the concatenation"; exit 1; }
else
  echo "SKIP the SVG: Graphviz's dot is not installed (./setup.sh installs graphviz)"
fi
if "$graph" --spec="$TEST_TMPDIR/net.json" --input_shape=2,x 2>"$TEST_TMPDIR/err"; then echo "bad shape accepted"; exit 1; fi
grep -q -- "--input_shape=2,x: expected positive sizes" "$TEST_TMPDIR/err"
echo PASS
