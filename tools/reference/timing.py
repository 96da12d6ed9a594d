"""Shared by the bench_torch_*.py scripts: the median wall time of a call."""
import time


def median_seconds(fn, min_seconds=1.0):
    """Calls fn once to warm up, then for at least min_seconds (and 5 calls)."""
    fn()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_seconds or len(times) < 5:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]
