"""ember from Python: the C++ framework's tensors, autograd, layers, optimizers,
safetensors checkpoints and tokenizer behind the APIs of PyTorch and tiktoken.

    import ember
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x @ x.T).sum().backward()
    x.grad                                      # tensor([[ 8., 12.], [ 8., 12.]])

    import ember.tokenizer as tiktoken          # tiktoken's API
    tiktoken.get_encoding("cl100k_base").encode("hello world")   # [15339, 1917]
"""

import functools as _functools

from ember import _ember
from ember._ember import (Tensor, arange, bfloat16, bool, cat, device, dtype, float16, float32, float64,
                          from_numpy, full, int32, int64, is_grad_enabled, load, manual_seed, masked_fill, matmul,
                          multinomial, ones, rand, randn, save, split, stack, tensor, topk, tril, triu,
                          uint8, uint16, zeros)
from ember import backends, cuda, nn, optim, tokenizer



class no_grad(_ember.no_grad):
    """torch.no_grad: gradient recording off inside `with ember.no_grad():`, or for every
    call of a function decorated `@ember.no_grad()`."""

    def __call__(self, fn):
        @_functools.wraps(fn)
        def without_grad(*args, **kwargs):
            with _ember.no_grad():
                return fn(*args, **kwargs)

        return without_grad


# PyTorch's short names of the dtypes (attributes, left out of __all__: a star import
# would hide Python's int and float).
long, int, float, double, half = int64, int32, float32, float64, float16

__all__ = [
    "Tensor", "arange", "backends", "bfloat16", "bool", "cat", "cuda", "device", "dtype", "float16", "float32",
    "float64", "from_numpy", "full", "int32", "int64", "is_grad_enabled", "load", "manual_seed", "masked_fill",
    "matmul", "multinomial", "nn", "no_grad", "ones", "optim", "rand", "randn", "save", "split", "stack", "tensor",
    "tokenizer", "topk", "tril", "triu", "uint8", "uint16", "zeros",
]
