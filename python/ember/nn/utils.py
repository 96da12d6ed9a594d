"""torch.nn.utils's clip_grad_norm_."""

from ember import _ember


def clip_grad_norm_(parameters, max_norm: float) -> float:
    """Scales every gradient by max_norm / (norm + 1e-6) when their joint L2 norm
    exceeds max_norm; returns the norm before clipping."""
    return _ember._clip_grad_norm([p for p in parameters if p.grad is not None], float(max_norm))
