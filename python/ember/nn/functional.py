"""torch.nn.functional's names over ember's autograd functions (python/nn.cc), and a few
composed from them (silu, leaky_relu, one_hot)."""

import ember

from ember._ember.functional import (binary_cross_entropy_with_logits, conv2d, cross_entropy, dropout, embedding,
                                     gelu, layer_norm, linear, log_softmax, max_pool2d, mse_loss, nll_loss, relu,
                                     scaled_dot_product_attention, sigmoid, softmax, tanh)

__all__ = [
    "binary_cross_entropy_with_logits", "conv2d", "cross_entropy", "dropout", "embedding", "gelu", "layer_norm",
    "leaky_relu", "linear", "log_softmax", "max_pool2d", "mse_loss", "nll_loss", "one_hot", "relu",
    "scaled_dot_product_attention", "sigmoid", "silu", "softmax", "tanh",
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
