"""torch.nn.init's in-place initialisers: each fills the tensor under no_grad (from
ember's default generator, ember.manual_seed) and returns it."""

import ember

__all__ = ["calculate_gain", "constant_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_", "uniform_",
           "xavier_normal_", "xavier_uniform_", "zeros_"]

import math


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


def calculate_gain(nonlinearity, param=None):
    """PyTorch's recommended gain: 1 for linear and sigmoid, 5/3 for tanh, sqrt(2) for
    relu, sqrt(2 / (1 + slope^2)) for leaky_relu (slope 0.01 by default), 3/4 for selu."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor):
    """fan_in and fan_out of a weight [out, in, *kernel], as PyTorch counts them."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def xavier_uniform_(tensor, gain=1.0):
    """U(-a, a) with a = gain sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010)."""
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain=1.0):
    """N(0, std^2) with std = gain sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def _kaiming_std(tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """U(-b, b) with b = sqrt(3) gain / sqrt(fan) (He et al., 2015)."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    """N(0, std^2) with std = gain / sqrt(fan)."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity))
