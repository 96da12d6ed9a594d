"""torch.amp's autocast (also ember.autocast) and GradScaler (also ember.cuda.amp.GradScaler): the bf16 mixed-precision policy of
autograd/autocast.h for the scope of a `with` (products in bf16 with f32 sums,
normalisations and losses in f32, f32 parameters), on the CPU and on CUDA alike.

    with ember.autocast(device_type="cpu", dtype=ember.bfloat16):
        logits, loss = model(x, y)
    loss.backward()                      # outside the scope, as in PyTorch
"""

import warnings

from ember import _ember

__all__ = ["GradScaler", "autocast"]


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True): dtype bf16 (the default; f16
    is refused: ember trains in bf16, which needs no gradient scaling); enabled=False turns
    autocast off inside an enclosing scope. Usable as a decorator too."""

    def __init__(self, device_type: str = "cuda", dtype=None, enabled: bool = True, cache_enabled=None):
        if device_type not in ("cpu", "cuda"):
            raise ValueError(f"autocast: device_type must be 'cpu' or 'cuda', not {device_type!r}")
        dtype = _ember.bfloat16 if dtype is None else dtype
        if enabled and dtype != _ember.bfloat16:
            raise ValueError(f"autocast: dtype {dtype} is not supported (bf16; ember has no f16 autocast)")
        self._scope = _ember._autocast(_ember.bfloat16 if enabled else _ember.float32)

    def __enter__(self):
        self._scope.__enter__()
        return self

    def __exit__(self, *exc):
        self._scope.__exit__(*exc)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def autocast_wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return autocast_wrapper


class GradScaler:
    """torch.amp.GradScaler, for scripts written for f16 training (nanoGPT's train.py makes
    one with enabled=(dtype == 'float16')). bf16's range needs no loss scaling: a disabled
    scaler passes everything through (scale() returns the loss, step() steps the
    optimizer, unscale_() and update() do nothing), and an enabled one is refused on a
    GPU (without one it disables itself, as PyTorch's does)."""

    def __init__(self, device: str = "cuda", init_scale: float = 65536.0, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        if enabled and _ember._cuda_device_count() == 0:
            # As PyTorch: without a GPU an enabled scaler disables itself, with a warning.
            warnings.warn("GradScaler is enabled, but CUDA is not available. Disabling.")
        elif enabled:
            raise ValueError("GradScaler: f16 loss scaling is not supported; train in bf16 "
                             "(ember.autocast(dtype=ember.bfloat16)), which needs none, and pass enabled=False")

    def scale(self, loss):
        return loss

    def unscale_(self, optimizer):
        pass

    def step(self, optimizer):
        return optimizer.step()

    def update(self, new_scale=None):
        pass

    def is_enabled(self):
        return False

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        pass
