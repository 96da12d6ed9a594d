"""ember from Python: the C++ framework's tokenizer (and, as they arrive, its tensors,
autograd, layers and optimizers) behind the APIs of tiktoken and PyTorch.

    import ember.tokenizer as tiktoken          # tiktoken's API
    enc = tiktoken.get_encoding("cl100k_base")
    enc.encode("hello world")                   # [15339, 1917]
"""

from ember import _ember  # noqa: F401  (the C++ core; fails early if it is not built)
from ember import tokenizer

__all__ = ["tokenizer"]
