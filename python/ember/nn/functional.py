"""torch.nn.functional's names over ember's autograd functions (python/nn.cc), and a few
composed from them (silu, leaky_relu, one_hot, binary_cross_entropy, l1_loss,
smooth_l1_loss, normalize, pad, rms_norm; the losses take PyTorch's whole signatures)."""

import ember

from ember._ember import functional as _core
from ember._ember.functional import (binary_cross_entropy_with_logits, conv2d, dropout, embedding, gelu, layer_norm,
                                     linear, log_softmax, max_pool2d, relu, scaled_dot_product_attention, sigmoid,
                                     softmax, tanh)

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


def _legacy_reduction(size_average, reduce, reduction):
    """PyTorch's deprecated size_average and reduce, folded into a reduction as it folds
    them (either given overrides reduction)."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _reduce(name, loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', not {reduction!r}")


def _classes_last(name, input, target):
    """input [N, C, d...] or [C] with class targets [N, d...] or []: input as [..., C] and
    target as [...], the class dimension last (the kernels' layout)."""
    if input.dim() == 1:
        return input.unsqueeze(0), target.reshape(1)
    if input.dim() > 2:
        input = input.permute(0, *range(2, input.dim()), 1)
    if tuple(target.shape) != tuple(input.shape[:-1]):
        raise ValueError(f"{name}: target of shape {tuple(target.shape)} for input of shape {tuple(input.shape)}")
    return input, target


def _weighted_nll(name, log_probs, target, weight, ignore_index, reduction):
    """-w[y] log_probs[..., y] over the targets y that are not ignore_index; 'mean' divides
    by the sum of their weights, as PyTorch does."""
    valid = target != ignore_index
    safe = ember.where(valid, target, ember.zeros_like(target))
    picked = -log_probs.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    w = ember.ones_like(picked) if weight is None else weight.to(picked.dtype)[safe.reshape(-1)].view(*safe.shape)
    w = w * valid.to(picked.dtype)
    loss = picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(name, loss, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """torch.nn.functional.cross_entropy over class indices, the classes along dimension 1
    of [N, C, d...] (or the only one of [C]). The plain mean is one fused node
    (nn::CrossEntropyLoss); class weights, 'sum' and 'none' go through log_softmax, with
    label smoothing as PyTorch mixes it: (1 - s) nll + s (-sum_c w_c log p_c) / C.
    Class-probability targets (a floating target) are refused by name."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.is_floating_point():
        raise NotImplementedError("cross_entropy: class-probability targets (a floating target) are not supported; "
                                  "give class indices")
    input, target = _classes_last("cross_entropy", input, target)
    if weight is None and reduction == "mean":
        return _core.cross_entropy(input, target, ignore_index, label_smoothing)
    log_probs = log_softmax(input, -1)
    loss = _weighted_nll("cross_entropy", log_probs, target, weight, ignore_index, reduction)
    if not label_smoothing:
        return loss
    classes = input.shape[-1]
    valid = (target != ignore_index).to(log_probs.dtype)
    spread = -(log_probs if weight is None else log_probs * weight.to(log_probs.dtype)).sum(-1) * valid / classes
    if reduction == "mean":
        w = valid if weight is None else weight.to(log_probs.dtype)[
            ember.where(target != ignore_index, target, ember.zeros_like(target)).reshape(-1)].view(*target.shape) * valid
        spread = spread.sum() / w.sum()
    else:
        spread = _reduce("cross_entropy", spread, reduction)
    return loss * (1 - label_smoothing) + spread * label_smoothing


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """torch.nn.functional.nll_loss: -input[..., y] (log-probabilities, classes along
    dimension 1), weighted and reduced as PyTorch does."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    input, target = _classes_last("nll_loss", input, target)
    if weight is None and reduction == "mean":
        return _core.nll_loss(input, target, ignore_index)
    return _weighted_nll("nll_loss", input, target, weight, ignore_index, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """(input - target)^2, reduced (the mean is one fused node)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        return _core.mse_loss(input, target)
    return _reduce("mse_loss", (input - target).square(), reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """|input - target|, reduced."""
    return _reduce("l1_loss", (input - target).abs(), _legacy_reduction(size_average, reduce, reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Huber's loss over beta: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d =
    input - target; beta = 0 is l1_loss), reduced."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    d = (input - target).abs()
    if beta == 0:
        return _reduce("smooth_l1_loss", d, reduction)
    loss = ember.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta)
    return _reduce("smooth_l1_loss", loss, reduction)


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
