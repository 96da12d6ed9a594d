#!/usr/bin/env python3
"""Sums Nsight Compute's kernel times by kernel name (tools/gpu/profile.sh's fallback).

  ncu --metrics gpu__time_duration.sum --csv --page raw <program> >ncu.csv
  tools/gpu/kernel_times.py ncu.csv [steps]

prints each kernel's total, calls and mean, largest first, divided by `steps` (default
1) so the totals read per training step.
"""
import collections
import csv
import sys

SCALE = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0}


def main(path, steps):
    lines = [l for l in open(path) if l.startswith('"')]  # ncu's own messages are not quoted
    rows = list(csv.reader(lines))
    header, units = rows[0], rows[1]
    name, time = header.index("Kernel Name"), header.index("gpu__time_duration.sum")
    scale = SCALE[units[time]]
    total, calls = collections.Counter(), collections.Counter()
    for row in rows[2:]:
        kernel = row[name].split("(")[0]
        total[kernel] += float(row[time].replace(",", "")) * scale
        calls[kernel] += 1
    all_ms = sum(total.values())
    print(f"kernels: {all_ms / steps:.2f} ms a step, {sum(calls.values()) / steps:.0f} launches")
    for kernel, ms in total.most_common(40):
        print(f"{ms / steps:9.3f} ms {ms / all_ms:6.1%} {calls[kernel] / steps:7.0f} x "
              f"{ms / calls[kernel] * 1e3:9.1f} us  {kernel[:120]}")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 1.0)
