#!/usr/bin/env bash
# `pip install ./python` as docs/python.md promises it: into a new virtual environment of
# Debian's python3 (no NumPy there: ember does not need it), offline (the build backend
# needs nothing from a package index), then `import ember` from there, outside the
# checkout, runs a small autograd computation and batches a dataset.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="$(mktemp -d)/venv"
trap 'rm -rf "$(dirname "$venv")"' EXIT
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install --no-index ./python
cd /
"$venv/bin/python" - "$venv" <<'PY'
import sys
import ember
assert ember.__file__.startswith(sys.argv[1]), ember.__file__  # the installed copy, not the checkout
x = ember.tensor([1.0, 2.0], requires_grad=True)
(x * x).sum().backward()
assert x.grad.tolist() == [2.0, 4.0], x.grad
from ember.utils.data import DataLoader, TensorDataset
ember.manual_seed(0)
batches = [b.tolist() for (b,) in DataLoader(TensorDataset(ember.arange(5)), batch_size=2, shuffle=True)]
assert sorted(sum(batches, [])) == [0, 1, 2, 3, 4], batches
print("pip install ./python: ember", ember.__file__)
PY
