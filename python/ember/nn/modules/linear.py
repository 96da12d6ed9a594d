"""torch.nn.modules.linear: Linear (from the C++ layer's parameters: PyTorch's
initialisation), Identity."""

import ember
from ember import _ember
from ember.nn import functional as F
from ember.nn.modules.module import Module, _from_core

__all__ = ["Identity", "Linear", "NonDynamicallyQuantizableLinear"]


class Linear(Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.bias = None
        _from_core(self, _ember._linear_parameters(in_features, out_features, bias, dtype or ember.float32), device)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for MultiheadAttention's out_proj: a Linear."""


class Identity(Module):
    """Returns its input; takes and ignores any arguments, as PyTorch's."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, x):
        return x
