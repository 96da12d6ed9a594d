"""torch.nn.utils's clip_grad_norm_."""

import ember
from ember import _ember


def clip_grad_norm_(parameters, max_norm: float) -> float:
    """Scales every gradient by max_norm / (norm + 1e-6) when their joint L2 norm
    exceeds max_norm; returns the norm before clipping. With parameters that
    fully_shard or parallelize_module split, the norm is the whole model's (every
    distinct element once) and the call collective, as PyTorch's over DTensors."""
    params = [p for p in parameters if p.grad is not None]
    from ember.distributed import _placement  # noqa: E402 (ember.distributed imports ember.nn)
    if not _placement.any_split(params):
        return _ember._clip_grad_norm(params, float(max_norm))
    norm = _placement.grad_norm(params)
    scale = float(max_norm) / (norm + 1e-6)
    if scale < 1:
        with ember.no_grad():
            for p in params:
                p.grad.mul_(scale)
    return norm
