"""Token shards (llm.c's format) of one GPT-2 phrase, for the binaries' shell tests.

    python3 models/gpt2/testdata/phrase_shards.py DIR   # DIR/train.bin and DIR/val.bin

train.bin repeats "The quick brown fox jumps over the lazy dog." (6,000 tokens), val.bin
takes every third of its tokens (1,000): a tiny model learns them in a few steps.
"""
import struct
import sys

PHRASE = (464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13)


def shard(path, tokens):
    with open(path, "wb") as f:
        f.write(struct.pack("<256i", 20240520, 1, len(tokens), *([0] * 253)))
        f.write(struct.pack("<%dH" % len(tokens), *tokens))


if __name__ == "__main__":
    shard(sys.argv[1] + "/train.bin", [PHRASE[i % 10] for i in range(6000)])
    shard(sys.argv[1] + "/val.bin", [PHRASE[(i * 3) % 10] for i in range(1000)])
