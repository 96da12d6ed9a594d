"""torch.nn.modules.dropout: Dropout."""

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """torch.nn.Dropout; inplace=True writes the result into the input, as PyTorch."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x):
        out = F.dropout(x, self.p, self.training)
        return x.copy_(out) if self.inplace and out is not x else out

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
