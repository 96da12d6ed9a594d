#!/bin/bash
# tools/graph writes DOT with the block model's ops; bad flags fail with a message.
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
echo PASS
