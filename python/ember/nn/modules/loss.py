"""torch.nn.modules.loss: the losses as layers, over nn.functional."""

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["BCEWithLogitsLoss", "CrossEntropyLoss", "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss"]


class _Loss(Module):
    """A loss as a layer: forward(input, target) is fn(input, target, **options), the
    options being the functional's keyword arguments as given to the constructor."""

    def __init__(self, fn, **options):
        super().__init__()
        object.__setattr__(self, "_fn", fn)
        object.__setattr__(self, "_options", options)
        for name, value in options.items():
            object.__setattr__(self, name, value)

    def forward(self, input, target):
        return self._fn(input, target, **self._options)


class CrossEntropyLoss(_Loss):
    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(F.cross_entropy, weight=weight, ignore_index=ignore_index,
                         reduction=F._legacy_reduction(size_average, reduce, reduction),
                         label_smoothing=label_smoothing)


class MSELoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(F.mse_loss, reduction=F._legacy_reduction(size_average, reduce, reduction))


class NLLLoss(_Loss):
    """-input[i, target[i]] averaged over the targets not equal to ignore_index."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(F.nll_loss, weight=weight, ignore_index=ignore_index,
                         reduction=F._legacy_reduction(size_average, reduce, reduction))


class L1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(F.l1_loss, reduction=F._legacy_reduction(size_average, reduce, reduction))


class SmoothL1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(F.smooth_l1_loss, reduction=F._legacy_reduction(size_average, reduce, reduction),
                         beta=beta)


class BCEWithLogitsLoss(_Loss):
    def __init__(self):
        super().__init__(F.binary_cross_entropy_with_logits)
