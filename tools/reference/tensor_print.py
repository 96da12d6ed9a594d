#!/usr/bin/python3
"""Prints PyTorch's repr of the tensors that tensor/print_test.cc formats.

Run with Debian's PyTorch, from the repository root:
    /usr/bin/python3 tools/reference/tensor_print.py > tensor/testdata/print_reference.txt
print_test.cc compares ember's output with these strings, with ", dtype=..." added before the closing
parenthesis (PyTorch omits the default dtype; ember always names it).
"""
import torch

CASES = {
    "matrix": torch.tensor([[1., 2.], [3., 4.]]),
    "fixed": torch.tensor([1.5, -2.25]),
    "scalar": torch.tensor(3.5),
    "summarized_vector": torch.arange(10000),
    "scientific_small": torch.tensor([1e-5, 1.0]),
    "scientific_large": torch.tensor([1e10, 1.0]),
    "scientific_ratio": torch.tensor([100000., 1.]),
    "bool": torch.tensor([True, False]),
    "empty_2d": torch.zeros(2, 0),
    "empty_1d": torch.tensor([]),
    "cube": torch.zeros(2, 2, 2),
    "nan_inf": torch.tensor([float("nan"), 1.5, float("inf")]),
    "summarized_rows": torch.arange(2000).reshape(1000, 2),
    "wrapped": torch.arange(30.) / 7,
    "summarized_cube": torch.arange(2000.).reshape(10, 10, 20),
    "zeros": torch.tensor([0., 0.]),
    "negative_tiny": torch.tensor([-0.0001, 2.]),
}

for name, tensor in CASES.items():
    print(f"--- {name}")
    print(repr(tensor))
