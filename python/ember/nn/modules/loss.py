"""torch.nn.modules.loss: the losses as layers, over nn.functional."""

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss"]


class _Loss(Module):
    def __init__(self, fn):
        super().__init__()
        object.__setattr__(self, "_fn", fn)

    def forward(self, input, target):
        return self._fn(input, target)


class CrossEntropyLoss(_Loss):
    def __init__(self, ignore_index: int = -100, label_smoothing: float = 0.0):
        super().__init__(lambda x, y: F.cross_entropy(x, y, ignore_index, label_smoothing))


class MSELoss(_Loss):
    def __init__(self):
        super().__init__(F.mse_loss)


class NLLLoss(_Loss):
    """-input[i, target[i]] averaged over the targets not equal to ignore_index."""

    def __init__(self, ignore_index: int = -100):
        super().__init__(lambda x, y: F.nll_loss(x, y, ignore_index))


class L1Loss(_Loss):
    def __init__(self, reduction: str = "mean"):
        super().__init__(lambda x, y: F.l1_loss(x, y, reduction))


class SmoothL1Loss(_Loss):
    def __init__(self, reduction: str = "mean", beta: float = 1.0):
        super().__init__(lambda x, y: F.smooth_l1_loss(x, y, reduction, beta))


class BCEWithLogitsLoss(_Loss):
    def __init__(self):
        super().__init__(F.binary_cross_entropy_with_logits)
