#!/usr/bin/env python3
"""An independent safetensors reader and writer in plain Python (json + struct), to
check ember's files against: the format is an 8-byte little-endian header length, a
JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the data.

  safetensors_interop.py write FILE   writes the fixed tensors below
  safetensors_interop.py dump FILE    prints every tensor of FILE, one per line, in the text
                                      form safetensors_interop.cc prints (so they can be diffed)
"""
import json
import struct
import sys

# dtype -> struct format of one element (F16/BF16/U16 as raw 16-bit words).
FORMATS = {"F32": "f", "F64": "d", "F16": "H", "BF16": "H", "I32": "i", "I64": "q",
           "U8": "B", "U16": "H", "BOOL": "?"}


def fixed_tensors():
    """name -> (dtype, shape, values): the same set safetensors_interop.cc writes."""
    return {
        "weight": ("F32", [2, 3], [i * 0.25 - 0.5 for i in range(6)]),
        "bias": ("F64", [3], [i / 3 for i in range(3)]),
        "ids": ("I64", [4], [-2, 0, 7, 1 << 40]),
        "counts": ("I32", [], [-5]),
        "half": ("F16", [2], [0x3c00, 0xc000]),       # 1.0, -2.0
        "brain": ("BF16", [3], [0x3f80, 0x4049, 0]),  # 1.0, 3.140625, 0
        "mask": ("BOOL", [2, 2], [True, False, False, True]),
        "bytes": ("U8", [5], [0, 1, 127, 128, 255]),
        "words": ("U16", [1], [65535]),
        "empty": ("F32", [0, 3], []),
    }


def write(path, tensors, metadata):
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, shape, values) in tensors.items():
        raw = struct.pack("<%d%s" % (len(values), FORMATS[dtype]), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode("utf-8")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        fmt = FORMATS[info["dtype"]]
        count = (end - begin) // struct.calcsize(fmt)
        tensors[name] = (info["dtype"], info["shape"],
                         list(struct.unpack("<%d%s" % (count, fmt), data[begin:end])))
    return tensors, metadata


def text(value, dtype):
    if dtype == "F32":
        return "%.9g" % value
    if dtype == "F64":
        return "%.17g" % value
    if dtype == "BOOL":
        return "1" if value else "0"
    return str(value)


def dump(path):
    tensors, metadata = read(path)
    for key in sorted(metadata):
        print("metadata %s=%s" % (key, metadata[key]))
    for name in sorted(tensors):
        dtype, shape, values = tensors[name]
        print("%s %s [%s] %s" % (name, dtype, ",".join(map(str, shape)),
                                 " ".join(text(v, dtype) for v in values)))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "dump"):
        sys.exit(__doc__)
    if sys.argv[1] == "write":
        write(sys.argv[2], fixed_tensors(), {"format": "pt", "note": "caf\u00e9"})
    else:
        dump(sys.argv[2])
