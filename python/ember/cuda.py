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

from ember import _ember

__all__ = ["device_count", "empty_cache", "get_device_name", "is_available", "max_memory_allocated",
           "memory_allocated", "memory_stats", "reset_peak_memory_stats", "synchronize"]


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
    allocation_count and fresh_allocation_count (those that needed cudaMalloc)."""
    return _ember._cuda_memory_stats(_index(device))


def memory_allocated(device=None):
    """Bytes of tensors alive on the device now."""
    return memory_stats(device)["live_bytes"]


def max_memory_allocated(device=None):
    """The most bytes alive at once since the start or reset_peak_memory_stats."""
    return memory_stats(device)["peak_bytes"]


def reset_peak_memory_stats(device=None):
    """Starts max_memory_allocated over from the bytes alive now."""
    _ember._cuda_reset_peak(_index(device))
