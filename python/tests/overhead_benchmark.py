"""The cost of an ember op called from Python: autograd/overhead_benchmark.cc's tiny
graph (25 rounds of y = tanh(y * w + b) - 0.5 on 16-element tensors, then backward of
the sum: 101 ops, so that the arithmetic is negligible), timed from Python. Prints
microseconds per op, as the C++ benchmark's us_per_op counter does; run both:

    bazel run -c opt //python:overhead_benchmark
    bazel run -c opt //autograd:overhead_benchmark
"""

import time

import ember

ROUNDS = 25  # four ops each


def step(x, w, b):
    y = x
    for _ in range(ROUNDS):
        y = (y * w + b).tanh() - 0.5
    y.sum().backward()


def main():
    ember.manual_seed(1)
    x, w, b = (ember.randn(16, requires_grad=True) for _ in range(3))
    for _ in range(200):  # warm up the allocator's cache
        step(x, w, b)
    best = float("inf")
    for _ in range(7):
        iterations = 2000
        start = time.perf_counter()
        for _ in range(iterations):
            step(x, w, b)
        best = min(best, (time.perf_counter() - start) / iterations)
    ops = 4 * ROUNDS + 1
    print(f"python: {best * 1e6:.1f} us per forward+backward, {best * 1e6 / ops:.2f} us_per_op (best of 7 x 2000)")


if __name__ == "__main__":
    main()
