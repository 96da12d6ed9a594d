"""torch.nn.init's in-place initialisers: each fills the tensor under no_grad (from
ember's default generator, ember.manual_seed) and returns it."""

import ember

__all__ = ["constant_", "normal_", "ones_", "uniform_", "zeros_"]


def _fill(tensor, values):
    with ember.no_grad():
        tensor[...] = values.to(tensor.device)
    return tensor


def normal_(tensor, mean: float = 0.0, std: float = 1.0):
    """Entries drawn from N(mean, std^2)."""
    return _fill(tensor, ember.randn(*tensor.shape, dtype=tensor.dtype) * std + mean)


def uniform_(tensor, a: float = 0.0, b: float = 1.0):
    """Entries drawn uniformly from [a, b)."""
    return _fill(tensor, ember.rand(*tensor.shape, dtype=tensor.dtype) * (b - a) + a)


def constant_(tensor, val: float):
    with ember.no_grad():
        tensor[...] = val
    return tensor


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)
