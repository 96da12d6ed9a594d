"""torch.cuda's names over ember::cuda (tensor/cuda.h): the GPUs this process sees,
waiting for their work, and the caching allocator's counters.

    import ember
    device = "cuda" if ember.cuda.is_available() else "cpu"
    x = ember.randn(1024, 1024, device=device)
    ember.cuda.synchronize()                   # before reading a clock
    ember.cuda.max_memory_allocated()          # bytes, as torch.cuda's

A build without CUDA sees no devices: is_available() is False, and the calls that need a
device raise ValueError saying that this build has no CUDA support.
"""

import types

from ember import _ember
from ember import amp as _amp

# torch.cuda.amp's names.
amp = types.SimpleNamespace(GradScaler=_amp.GradScaler, autocast=_amp.autocast)

__all__ = ["amp", "device_count", "empty_cache", "get_device_name", "is_available", "is_bf16_supported",
           "manual_seed", "manual_seed_all", "max_memory_allocated", "memory_allocated", "memory_stats", "reset_peak_memory_stats",
           "set_device", "synchronize"]


def _index(device):
    """The device number of None (cuda:0), an int, "cuda[:N]" or an ember.device."""
    if device is None:
        return 0
    if isinstance(device, int):
        return device
    device = device if isinstance(device, _ember.device) else _ember.device(device)
    if device.type != "cuda":
        raise ValueError(f"expected a CUDA device, got {device}")
    return device.index or 0


def is_available():
    """Whether there is a GPU, a driver and a build with CUDA support."""
    return _ember._cuda_device_count() > 0


def device_count():
    """The CUDA devices this process sees (0 without a GPU, a driver or CUDA support)."""
    return _ember._cuda_device_count()


def get_device_name(device=None):
    """The device's name as the driver gives it ("NVIDIA H200")."""
    return _ember._cuda_device_name(_index(device))


def synchronize(device=None):
    """Waits until the device has finished all queued work; raises if any of it failed."""
    _ember._cuda_synchronize(_index(device))


def empty_cache():
    """Gives the caching allocator's unused blocks back to the driver (every device)."""
    _ember._cuda_empty_cache()


def memory_stats(device=None):
    """The caching allocator's counters: live_bytes, peak_bytes, cached_bytes,
    allocation_count and fresh_allocation_count (those that needed cudaMalloc); an empty
    dict where there is no GPU, as PyTorch's before CUDA is initialised."""
    if not is_available():
        return {}
    return _ember._cuda_memory_stats(_index(device))


def memory_allocated(device=None):
    """Bytes of tensors alive on the device now (0 without a GPU, as PyTorch's)."""
    return memory_stats(device).get("live_bytes", 0)


def max_memory_allocated(device=None):
    """The most bytes alive at once since the start or reset_peak_memory_stats (0 without
    a GPU)."""
    return memory_stats(device).get("peak_bytes", 0)


def reset_peak_memory_stats(device=None):
    """Starts max_memory_allocated over from the bytes alive now."""
    _ember._cuda_reset_peak(_index(device))


def set_device(device):
    """Makes the device current for this thread (kernels launch on it, memory comes from
    it); ember's tensors also carry their device's number, so "cuda:N" still means N."""
    _ember._cuda_set_device(_index(device))


def is_bf16_supported():
    """Whether a GPU is here that runs bf16: ember's CUDA code is built for sm_80 and later,
    which all have bf16 tensor cores, so any GPU ember can use does."""
    return is_available()


def manual_seed(seed: int):
    """Seeds ember's one generator, which the CPU and the GPU draw from alike (as
    ember.manual_seed)."""
    _ember.manual_seed(seed)


def manual_seed_all(seed: int):
    """Seeds every GPU's generator: ember has one for all devices (manual_seed)."""
    _ember.manual_seed(seed)
