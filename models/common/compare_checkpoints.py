"""Compares two safetensors checkpoints tensor by tensor: the relative difference
|a - b| / |b| (L2 norms) of each, or for the tensors whose names contain --absolute
the largest absolute difference max|a_i - b_i| (against --absolute_tolerance, by default
--tolerance). Prints each one above its tolerance and
exits 1 if there is one (or the keys differ). For the trainers' resume and
data-parallel tests; standard library only.

    compare_checkpoints.py A B [--tolerance 1e-5] [--prefix optimizer.] [--absolute NAME]
        [--absolute_tolerance 1e-4]
"""
import argparse
import array
import json
import math
import struct
import sys

TYPES = {"F32": "f", "F64": "d", "I64": "q"}


def read(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    tensors = {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        values = array.array(TYPES[info["dtype"]])
        values.frombytes(data[begin:end])
        tensors[key] = values
    return tensors


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    parser.add_argument("--prefix", default="", help="compare only the keys that start with this")
    parser.add_argument("--absolute", default=None, help="tensors whose names contain this: absolute differences")
    parser.add_argument("--absolute_tolerance", type=float, default=None, help="their tolerance (default: --tolerance)")
    args = parser.parse_args()
    a, b = read(args.a), read(args.b)
    keys_a = sorted(k for k in a if k.startswith(args.prefix))
    keys_b = sorted(k for k in b if k.startswith(args.prefix))
    if keys_a != keys_b:
        print("different keys:", sorted(set(keys_a) ^ set(keys_b)))
        return 1
    worst, bad = 0.0, 0
    for key in keys_a:
        if args.absolute is not None and args.absolute in key:
            diff, kind = max(abs(x - y) for x, y in zip(a[key], b[key])), "absolute"
            tolerance = args.tolerance if args.absolute_tolerance is None else args.absolute_tolerance
        else:
            tolerance = args.tolerance
            norm = math.sqrt(sum(y * y for y in b[key])) or 1.0
            diff, kind = math.sqrt(sum((x - y) ** 2 for x, y in zip(a[key], b[key]))) / norm, "relative"
            worst = max(worst, diff)
        if diff > tolerance:
            print("%s: %s difference %.3g" % (key, kind, diff))
            bad += 1
    print("%d tensors, largest relative difference %.3g" % (len(keys_a), worst))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
