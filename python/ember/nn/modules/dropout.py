"""torch.nn.modules.dropout: Dropout."""

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"
