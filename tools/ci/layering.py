"""The house's one-way dependencies, from every source file's includes.

Each folder may include only itself and the folders below it (../shared/DESIGN.md, the
README's Layout): base <- core <- kernels <- tensor <- autograd <- nn <- optim <-
distributed; tokenizer <- base, core; data <- tensor, tokenizer; models, python and
tools on top, in that order. One line per include that points up, and a non-zero exit
if there is any.
"""

import os
import re
import sys

CHAIN = ["base", "core", "kernels", "tensor", "autograd", "nn", "optim", "distributed"]
ALLOWED = {folder: set(CHAIN[: i + 1]) for i, folder in enumerate(CHAIN)}
ALLOWED["tokenizer"] = {"base", "core", "tokenizer"}
ALLOWED["data"] = set(CHAIN[:4]) | {"tokenizer", "data"}
LIBRARIES = set(CHAIN) | {"tokenizer", "data"}
ALLOWED["models"] = LIBRARIES | {"models"}
ALLOWED["python"] = LIBRARIES | {"models", "python"}
ALLOWED["tools"] = LIBRARIES | {"models", "python", "tools"}
INCLUDE = re.compile(r'\s*#\s*include\s+"([a-z_0-9]+)/')


def main():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    problems = files = 0
    for folder, allowed in sorted(ALLOWED.items()):
        for root, _, names in os.walk(folder):
            for name in sorted(names):
                if not name.endswith((".h", ".cc", ".cu", ".cuh")):
                    continue
                files += 1
                path = os.path.join(root, name)
                with open(path, errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m.group(1) in ALLOWED and m.group(1) not in allowed:
                            problems += 1
                            print(f"{path}:{number}: {folder}/ includes {m.group(1)}/, above it")
    print(f"layering: {files} files, {problems} includes pointing up")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
