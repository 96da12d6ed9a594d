"""torch.nn.functional's names over ember's autograd functions (python/nn.cc), and a few
composed from them (silu, leaky_relu, one_hot, binary_cross_entropy, l1_loss,
smooth_l1_loss, normalize, pad, rms_norm)."""

import ember

from ember._ember.functional import (binary_cross_entropy_with_logits, conv2d, cross_entropy, dropout, embedding,
                                     gelu, layer_norm, linear, log_softmax, max_pool2d, mse_loss, nll_loss, relu,
                                     scaled_dot_product_attention, sigmoid, softmax, tanh)

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "conv2d", "cross_entropy", "dropout", "embedding",
    "gelu", "l1_loss", "layer_norm", "leaky_relu", "linear", "log_softmax", "smooth_l1_loss", "max_pool2d", "mse_loss", "nll_loss", "normalize",
    "one_hot", "pad", "relu", "rms_norm", "scaled_dot_product_attention", "sigmoid", "silu", "softmax", "tanh",
]


def silu(input):
    """x sigmoid(x) (swish)."""
    return input * sigmoid(input)


def leaky_relu(input, negative_slope=0.01):
    """x for x >= 0, negative_slope x below: relu(x) - negative_slope relu(-x)."""
    return relu(input) - relu(-input) * negative_slope


def one_hot(tensor, num_classes=-1):
    """int64 [..., num_classes]: 1 where the last index equals the entry (num_classes -1:
    the largest entry + 1)."""
    if tensor.dtype not in (ember.int64, ember.int32):
        raise ValueError(f"one_hot: expected an integer tensor, got {tensor.dtype}")
    values = tensor.reshape(-1).tolist()
    low, high = (min(values), max(values)) if values else (0, -1)
    if values and (low < 0 or (num_classes >= 0 and high >= num_classes)):
        raise ValueError(f"one_hot: class values must lie in [0, {num_classes}), got [{low}, {high}]")
    n = high + 1 if num_classes < 0 else num_classes
    classes = ember.arange(n, dtype=ember.int64).to(tensor.device)
    return (tensor.to(ember.int64).unsqueeze(-1) == classes).to(ember.int64)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """-(y log p + (1 - y) log(1 - p)) of probabilities p, each log clamped at -100 as
    PyTorch's (a p of 0 or 1 gives a finite loss)."""
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"binary_cross_entropy: target of shape {tuple(target.shape)} for input of shape "
                         f"{tuple(input.shape)}")
    loss = -(target * input.log().clamp(min=-100.0) + (1 - target) * (1 - input).log().clamp(min=-100.0))
    if weight is not None:
        loss = loss * weight
    return _reduce("binary_cross_entropy", loss, reduction)


def l1_loss(input, target, reduction="mean"):
    """|input - target|, reduced."""
    return _reduce("l1_loss", (input - target).abs(), reduction)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    """Huber's loss over beta: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d =
    input - target; beta = 0 is l1_loss), reduced."""
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    d = (input - target).abs()
    if beta == 0:
        return _reduce("smooth_l1_loss", d, reduction)
    loss = ember.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta)
    return _reduce("smooth_l1_loss", loss, reduction)


def _reduce(name, loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', not {reduction!r}")


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(||input||_p along dim, eps) (p = 2 or 1)."""
    return input / input.norm(p=p, dim=dim, keepdim=True).clamp(min=eps)


def pad(input, pad, mode="constant", value=0.0):
    """Constant padding: pad = (left, right) for the last dimension, then (top, bottom) for
    the one before, and so on, as torch.nn.functional.pad (negative pads crop)."""
    if mode != "constant":
        raise ValueError(f"pad: mode {mode!r} is not supported (constant)")
    if len(pad) % 2 or len(pad) // 2 > input.dim():
        raise ValueError(f"pad: {len(pad)} values for a tensor of {input.dim()} dimensions (pairs, from the last)")
    out = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        pieces = []
        for amount, at_end in ((before, False), (after, True)):
            if amount < 0:  # crop
                size = out.shape[dim]
                keep = [slice(None)] * out.dim()
                keep[dim] = slice(0, size + amount) if at_end else slice(-amount, size)
                out = out[tuple(keep)]
        for amount, at_end in ((before, False), (after, True)):
            if amount > 0:
                shape = list(out.shape)
                shape[dim] = amount
                pieces.append((at_end, ember.full(shape, value, dtype=input.dtype, device=input.device)))
        parts = [p for e, p in pieces if not e] + [out] + [p for e, p in pieces if e]
        out = ember.cat(parts, dim=dim) if len(parts) > 1 else out
    return out


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input / sqrt(mean(input^2) + eps) over the last len(normalized_shape) dimensions,
    times weight (eps: the dtype's machine epsilon when None, as PyTorch's)."""
    dims = len(normalized_shape) if isinstance(normalized_shape, (tuple, list)) else 1
    if eps is None:
        eps = {ember.float64: 2.220446049250313e-16, ember.float16: 0.0009765625,
               ember.bfloat16: 0.0078125}.get(input.dtype, 1.1920928955078125e-07)
    flat = input.reshape(*input.shape[:input.dim() - dims], -1)
    scale = ((flat * flat).mean(dim=-1, keepdim=True) + eps).rsqrt()
    out = (flat * scale).reshape(*input.shape)
    return out * weight if weight is not None else out
