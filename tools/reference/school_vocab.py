"""Learns the small byte-level BPE vocabulary of models/gpt2:school_test from the school
conversations (models/gpt2/school.jsonl, in chat's template), so that the test's model
trains in seconds under an unoptimised build (GPT-2's 50,257 tokens make its output
layer the whole cost). Writes models/gpt2/testdata/school.tiktoken: the 256 bytes, then
merges in the order learnt, as "<base64 token> <rank>" lines. Standard library only.

    python3 tools/reference/school_vocab.py [MERGES]
"""
import base64
import collections
import json
import re
import sys

# GPT-2's pretokenizer, with ASCII letters and digits for \\p{L} and \\p{N} (the set is ASCII).
PATTERN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


def main():
    merges = int(sys.argv[1]) if len(sys.argv) > 1 else 700
    text = []
    for line in open("models/gpt2/school.jsonl"):
        for turn in json.loads(line)["messages"]:
            text.append(("User: %s\nBot:" if turn["role"] == "user" else " %s\n") % turn["content"])
    words = collections.Counter(PATTERN.findall("".join(text)))
    pieces = {w: [bytes([b]) for b in w.encode()] for w in words}
    vocab = [bytes([b]) for b in range(256)]
    for _ in range(merges):
        pairs = collections.Counter()
        for w, count in words.items():
            p = pieces[w]
            for a, b in zip(p, p[1:]):
                pairs[(a, b)] += count
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        vocab.append(a + b)
        for w in words:
            p, out, i = pieces[w], [], 0
            while i < len(p):
                if i + 1 < len(p) and p[i] == a and p[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(p[i])
                    i += 1
            pieces[w] = out
    with open("models/gpt2/testdata/school.tiktoken", "w") as f:
        for rank, token in enumerate(vocab):
            f.write("%s %d\n" % (base64.b64encode(token).decode(), rank))
    print("%d tokens" % len(vocab))


if __name__ == "__main__":
    main()
