"""torch.nn.functional's names over ember's autograd functions (python/nn.cc)."""

from ember._ember.functional import (binary_cross_entropy_with_logits, conv2d, cross_entropy, dropout, embedding,
                                     gelu, layer_norm, linear, log_softmax, max_pool2d, mse_loss, nll_loss, relu,
                                     scaled_dot_product_attention, sigmoid, softmax, tanh)

__all__ = [
    "binary_cross_entropy_with_logits", "conv2d", "cross_entropy", "dropout", "embedding", "gelu", "layer_norm",
    "linear", "log_softmax", "max_pool2d", "mse_loss", "nll_loss", "relu", "scaled_dot_product_attention", "sigmoid",
    "softmax", "tanh",
]
