#!/usr/bin/env python3
"""Writes a tiktoken rank file from one of the tables the `tiktoken` npm package ships.

    npm_tiktoken_ranks.py encoders/cl100k_base.json cl100k_base.tiktoken

The package's `encoders/<name>.json` holds the encoding's pat_str, special tokens and
"bpe_ranks": lines "<ignored> <first rank> <base64 token> <base64 token> ...", the
tokens taking consecutive ranks from the first. The output is tiktoken's own format,
"<base64 token> <rank>" per line in rank order, which is byte for byte the file OpenAI
publishes (setup.sh checks its SHA-256 against the one tiktoken pins).
"""
import json
import sys


def main(src, dst):
    with open(src, encoding="utf-8") as f:
        table = json.load(f)["bpe_ranks"]
    ranked = []
    for number, line in enumerate(table.split("\n"), 1):
        if not line:
            continue
        fields = line.split(" ")
        if len(fields) < 3 or not fields[1].isdigit():
            sys.exit(f"{src}: bpe_ranks line {number}: expected '<tag> <rank> <token>...'")
        first = int(fields[1])
        ranked.extend((first + i, token) for i, token in enumerate(fields[2:]))
    ranked.sort()
    with open(dst, "w", encoding="ascii", newline="\n") as f:
        f.writelines(f"{token} {rank}\n" for rank, token in ranked)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
