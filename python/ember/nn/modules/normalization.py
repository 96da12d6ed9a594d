"""torch.nn.modules.normalization: LayerNorm, RMSNorm."""

import ember
from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["LayerNorm", "RMSNorm"]


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        dtype, device = dtype or ember.float32, device or "cpu"
        self.weight = Parameter(ember.ones(*self.normalized_shape, dtype=dtype).to(device)) if elementwise_affine else None
        self.bias = (Parameter(ember.zeros(*self.normalized_shape, dtype=dtype).to(device))
                     if elementwise_affine and bias else None)

    def forward(self, x):
        return F.layer_norm(x, list(self.normalized_shape), self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class RMSNorm(Module):
    """torch.nn.RMSNorm: x / sqrt(mean(x^2) + eps) * weight over the last dimensions."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True, dtype=ember.float32):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = Parameter(ember.ones(*self.normalized_shape, dtype=dtype)) if elementwise_affine else None

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"
