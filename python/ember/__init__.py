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
import math as _math
import operator as _operator

from ember import _ember
from ember._ember import (Generator, Tensor, arange, argsort, bfloat16, bool, cat, cumprod, cumsum, default_generator,
                          device, dtype, float16, float32, float64, from_numpy, frombuffer, full, get_num_threads,
                          initial_seed, int32, int64, is_grad_enabled, manual_seed, masked_fill, matmul, msort,
                          multinomial, ones, rand, randn, randperm, seed, set_num_threads, sort, split, stack, tensor,
                          topk, tril, triu, uint8, uint16, zeros)
from ember import amp, autograd, backends, cuda, distributed, nn, onnx, optim, tokenizer, utils
from ember.amp import autocast
from ember.nn import parallel as _parallel
from ember.serialization import load, save

_core_backward = Tensor.backward


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Tensor.backward(gradient=None, retain_graph=False): accumulates the gradient of
    this tensor into every leaf's .grad; then DistributedDataParallel's armed wrappers
    average theirs (as PyTorch's reducer finishes when backward does)."""
    if create_graph or inputs is not None:
        raise NotImplementedError("backward: create_graph and inputs are not supported")
    _core_backward(self, gradient, True if retain_graph else False)
    _parallel._finish_armed()


Tensor.backward = _backward

from ember import _torch_names  # noqa: E402 (after Tensor's own methods, which it wraps)

for _name, _method in _torch_names.METHODS.items():
    setattr(Tensor, _name, _method)
globals().update(_torch_names.FUNCTIONS)



class no_grad(_ember.no_grad):
    """torch.no_grad: gradient recording off inside `with ember.no_grad():`, or for every
    call of a function decorated `@ember.no_grad()`."""

    def __call__(self, fn):
        @_functools.wraps(fn)
        def without_grad(*args, **kwargs):
            with _ember.no_grad():
                return fn(*args, **kwargs)

        return without_grad


class set_grad_enabled:
    """torch.set_grad_enabled(mode): gradient recording on or off from the call on (as a
    function), or inside `with ember.set_grad_enabled(mode):` (the previous mode back
    after it)."""

    def __init__(self, mode):
        self._previous = is_grad_enabled()
        _ember._set_grad_enabled(True if mode else False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _ember._set_grad_enabled(self._previous)


class enable_grad:
    """torch.enable_grad: gradient recording on inside (within a no_grad region too), as a
    context manager or a decorator."""

    def __enter__(self):
        self._previous = is_grad_enabled()
        _ember._set_grad_enabled(True)
        return self

    def __exit__(self, *exc):
        _ember._set_grad_enabled(self._previous)

    def __call__(self, fn):
        @_functools.wraps(fn)
        def with_grad(*args, **kwargs):
            with enable_grad():
                return fn(*args, **kwargs)

        return with_grad


class inference_mode(no_grad):
    """torch.inference_mode: no gradient recording inside (ember's no_grad)."""


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """torch.randint(low=0, high, size): integers uniform in [low, high), without bias, from
    generator (default: the default generator, ember.manual_seed); int64 unless dtype says
    otherwise."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        raise TypeError("randint: expected randint(high, size) or randint(low, high, size)")
    t = _ember._randint(_operator.index(low), _operator.index(high), list(size), generator)
    t = t.to(dtype if dtype is not None else int64)
    return t.to(device if device is not None else "cpu").requires_grad_(requires_grad)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,  # noqa: A001
            disable=False):
    """torch.compile: today, the model itself, unchanged (the same object, so its
    parameters, state_dict and training are the model's): ember runs eagerly, its fused
    kernels (attention, layer norm, cross entropy, AdamW) chosen as the model calls them,
    with no graph compiler to hand the model to. The arguments choose how a compiler
    would work, never what the model computes, so any value is accepted. Used as a
    decorator too (@ember.compile or @ember.compile(...))."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise TypeError(f"compile: expected a module or a function, got {type(model).__name__}")
    return model


# (compile stays out of __all__: a star import would hide Python's own compile.)

# PyTorch's constants, and the package's version (pyproject.toml's).
inf, nan, pi, e = float("inf"), float("nan"), _math.pi, _math.e
__version__ = "0.1.0"

# PyTorch's short names of the dtypes (attributes, left out of __all__: a star import
# would hide Python's int and float).
long, int, float, double, half = int64, int32, float32, float64, float16

__all__ = [
    "Generator", "Tensor", "add", "argsort", "cumprod", "cumsum", "diagonal", "e", "einsum", "flip", "gather", "index_add", "msort",
    "scatter", "scatter_add", "sort", "index_select", "inf", "nan", "narrow", "nonzero", "onnx", "pi", "roll",
    "sin", "cos", "sub", "allclose", "amp", "arange", "argmax", "autocast", "autograd", "backends", "bfloat16", "bmm",
    "bool", "cat", "chunk", "clamp", "clip", "clone", "cuda", "default_generator", "detach", "device", "distributed", "dtype",
    "empty", "empty_like", "enable_grad", "eq", "exp", "flatten", "float16", "float32", "float64", "from_numpy", "frombuffer",
    "full", "full_like", "ge", "get_default_dtype", "get_num_threads", "gt", "inference_mode", "initial_seed", "int32", "int64",
    "is_floating_point", "is_grad_enabled", "is_tensor", "le", "linspace", "load", "log", "log_softmax", "lt",
    "manual_seed", "masked_fill", "matmul", "maximum", "mean", "minimum", "mm", "multinomial", "ne", "neg",
    "nn", "no_grad", "norm", "numel", "ones", "ones_like", "optim", "permute", "rand", "rand_like", "randint",
    "randn", "randn_like", "randperm", "reciprocal", "relu", "reshape", "rsqrt", "save", "seed", "set_grad_enabled",
    "set_num_threads", "sigmoid", "softmax", "split", "sqrt", "square", "squeeze", "stack", "std", "t", "tanh",
    "tensor", "tokenizer", "topk", "transpose", "tril", "triu", "uint16", "uint8", "unsqueeze", "utils", "var",
    "where", "zeros", "zeros_like",
]
