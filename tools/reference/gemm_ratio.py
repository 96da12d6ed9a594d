#!/usr/bin/env python3
"""ember's GEMM against OpenBLAS and Eigen, shape by shape, from one matmul_benchmark run.

Rows are M/K/N/threads/layout (layout 0: A B, 1: A B^T, 2: A^T B); with --peak=GFLOPS
(one core's, from //kernels/cpu:fma_peak_benchmark) the 1-thread rows also give ember's
share of it.

  bazel run -c opt //kernels/cpu:matmul_benchmark -- --benchmark_repetitions=5 \
      --benchmark_enable_random_interleaving=true --benchmark_min_time=0.2 \
      --benchmark_report_aggregates_only=true \
      --benchmark_out=/tmp/gemm.json --benchmark_out_format=json
  tools/reference/gemm_ratio.py /tmp/gemm.json

Interleaving the repetitions and taking medians keeps the comparison fair on a machine
whose speed drifts between runs.
"""
import collections
import json
import sys


def main(path, peak):
    rows = collections.defaultdict(dict)
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":
            continue
        kind, shape = b["run_name"].split("/", 1)
        rows[shape.split("/min_time")[0]][kind] = b["GFLOP/s"]
    for shape, v in sorted(rows.items()):
        ember, blas, eigen = v.get("BM_Ember"), v.get("BM_OpenBlas"), v.get("BM_Eigen")
        if not (ember and blas):
            continue
        line = f"{shape:40s} GFLOP/s: ember {ember:6.1f}  OpenBLAS {blas:6.1f}"
        if eigen:
            line += f"  Eigen {eigen:6.1f}"
        line += f"   ember/OpenBLAS {ember / blas:.2f}"
        if peak:
            threads = int(shape.split("threads:")[1].split("/")[0])
            line += f"   ember at {ember / (peak * threads):.0%} of peak"
        print(line)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--peak=")]
    peaks = [float(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("--peak=")]
    if len(args) != 1:
        sys.exit(__doc__)
    main(args[0], peaks[0] if peaks else None)
