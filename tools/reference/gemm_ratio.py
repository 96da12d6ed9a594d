#!/usr/bin/env python3
"""ember's GEMM against OpenBLAS and Eigen, shape by shape, from one matmul_benchmark run.

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


def main(path):
    rows = collections.defaultdict(dict)
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name", "median") != "median":
            continue
        kind, shape = b["run_name"].split("/", 1)
        rows[shape.split("/min_time")[0]][kind] = b["GFLOP/s"]
    for shape, v in sorted(rows.items()):
        ember, blas, eigen = v.get("BM_Ember"), v.get("BM_OpenBlas"), v.get("BM_Eigen")
        if ember and blas and eigen:
            print(f"{shape:36s} GFLOP/s: ember {ember:6.1f}  OpenBLAS {blas:6.1f}"
                  f"  Eigen {eigen:6.1f}   ember/OpenBLAS {ember / blas:.2f}"
                  f"  ember/Eigen {ember / eigen:.2f}")

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
