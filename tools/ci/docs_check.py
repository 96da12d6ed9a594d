#!/usr/bin/env python3
"""Checks that README.md and docs/ name only things that exist.

Run by tools/ci/docs.sh (which CI runs), from the repository root. It checks:
- every relative Markdown link [text](path#anchor): the file exists, and the anchor is a
  heading of that file (GitHub's slugs);
- every repository path named in code (`tools/reference/speed_table.py`, a path in a
  command): the file or folder exists, unless git ignores it (made by the set-up or a run);
- every Bazel label (`//models/gpt2:train`, `@ember//tensor`, `//tensor/...`, and the
  short form `nn:safetensors_test` in backquotes): `bazel query` knows it. A command that
  starts with `cd DIR &&` runs in another workspace: its labels are left alone;
- every flag given to one of ember's binaries (after `bazel run //...:target --`, or
  after a `bazel-bin/...` path): some ember binary defines it (an ABSL_FLAG), or it is one
  of Abseil's own (--help, --flagfile, ...).

Prints one line per problem, `FILE:LINE: what`, and exits 1 if there is any.
"""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`]+)`")
LABEL = re.compile(r"(?:@ember)?(?<!:)//[A-Za-z0-9_./-]*(?::[A-Za-z0-9_./+-]+)?")  # not a URL's
SHORT_LABEL = re.compile(r"^([a-z][a-z0-9_/]*):([A-Za-z0-9_.*+-]+)$")
PATH_TOKEN = re.compile(r"[A-Za-z0-9_.+/-]+")
# A command running one of ember's binaries, and the part of it that is the binary's
# arguments: after `bazel run [options] //label --`, or after a bazel-bin/ path.
BINARY_ARGS = re.compile(r"(?:bazel run\b[^|;&]*?//[^\s]+ -- |bazel-bin/[^\s]+ )([^|;&#]*)")
FLAG = re.compile(r"(?:^|\s)--([a-z][a-z0-9_]*)")
ABSEIL_FLAGS = {"help", "helpfull", "helpshort", "helppackage", "version", "flagfile", "fromenv",
                "tryfromenv", "undefok", "only_check_args"}


def defined_flags():
    """The names of every ABSL_FLAG in ember's C++ sources."""
    out = subprocess.run(["git", "grep", "-h", "-o", "-E", r"ABSL_FLAG\([^,]+, *[a-z0-9_]+", "--", "*.cc"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    return {line.rsplit(",", 1)[1].strip() for line in out.stdout.splitlines()} | ABSEIL_FLAGS


def top_level_dirs():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return {line.split("/", 1)[0] for line in out.stdout.splitlines() if "/" in line}


def ignored(path):
    return subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT).returncode == 0


def slug(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(md_file):
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", md_file.read_text(), re.M)}


def markdown_files():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


def main():
    problems = []
    labels = {}  # label -> first place it was named
    tops = top_level_dirs()
    flags = defined_flags()
    for md in markdown_files():
        rel = md.relative_to(ROOT)
        in_fence = False
        for number, line in enumerate(md.read_text().splitlines(), 1):
            where = f"{rel}:{number}"
            if line.startswith("```"):
                in_fence = not in_fence
                continue
            if not in_fence:
                for target in LINK.findall(line):
                    if re.match(r"[a-z]+:", target):
                        continue
                    path, _, anchor = target.partition("#")
                    resolved = (md.parent / path) if path else md
                    if not resolved.exists():
                        problems.append(f"{where}: link to {target}: no such file")
                    elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                        problems.append(f"{where}: link to {target}: no heading #{anchor}")
            spans = [line] if in_fence else CODE_SPAN.findall(line)
            for span in spans:
                if re.search(r"\bcd [^ ]+ &&", span):
                    continue
                for label in LABEL.findall(span):
                    if label.endswith(".") and not label.endswith("..."):
                        label = label[:-1]
                    if label not in ("//", "@ember//"):
                        labels.setdefault(label.replace("@ember//", "//"), where)
                short = SHORT_LABEL.match(span.strip())
                if short and (ROOT / short.group(1)).is_dir():
                    labels.setdefault(f"//{short.group(1)}:{short.group(2)}", where)
                for token in PATH_TOKEN.findall(span):
                    token = token.rstrip(".")
                    first = token.split("/", 1)[0]
                    if "/" not in token or first not in tops or token.startswith("//"):
                        continue
                    if not (ROOT / token).exists() and not ignored(token):
                        problems.append(f"{where}: names {token}, which does not exist")
        problems += flag_problems(md, rel, flags)
    problems += check_labels(labels)
    for p in problems:
        print(p)
    print(f"docs: {len(markdown_files())} files, {len(labels)} labels, {len(problems)} problems")
    return 1 if problems else 0


def flag_problems(md, rel, flags):
    """The flags that commands in md give ember's binaries and no binary defines: in code
    spans, and in fenced blocks with continued lines (a trailing backslash) joined."""
    problems = []
    in_fence, pending, start = False, "", 0
    for number, line in enumerate(md.read_text().splitlines(), 1):
        if line.startswith("```"):
            in_fence, pending = not in_fence, ""
            continue
        if in_fence:
            if not pending:
                start = number
            pending += line.rstrip("\\") + " "
            if line.endswith("\\"):
                continue
            commands, where, pending = [pending], start, ""
        else:
            commands, where = CODE_SPAN.findall(line), number
        for command in commands:
            for args in BINARY_ARGS.findall(command):
                for flag in FLAG.findall(args):
                    if flag not in flags:
                        problems.append(f"{rel}:{where}: gives --{flag}, which no ember binary defines")
    return problems


def canonical(label):
    """//a/b -> //a/b:b, as bazel query prints it."""
    if ":" in label or label.endswith("..."):
        return label
    return f"{label}:{label.rstrip('/').rsplit('/', 1)[-1]}"


def query(expression):
    result = subprocess.run(["bazel", "query", "--keep_going", "--noshow_progress", expression],
                            cwd=ROOT, capture_output=True, text=True)
    return set(result.stdout.split())


def check_labels(labels):
    """The labels bazel query does not know, as problems."""
    plain = {canonical(l) for l in labels if "*" not in l and "..." not in l}
    known = query("set(" + " ".join(sorted(plain)) + ")") if plain else set()
    problems = []
    for label, where in sorted(labels.items(), key=lambda kv: kv[1]):
        if "*" in label or "..." in label:
            package, _, name = label.partition(":")
            targets = query(package + ":*" if "*" in label else package)
            name_re = re.compile("^" + re.escape(name).replace(r"\*", ".*") + "$")
            found = any(name_re.match(t.partition(":")[2]) for t in targets) if name else targets
        else:
            found = canonical(label) in known
        if not found:
            problems.append(f"{where}: names {label}, which Bazel does not know")
    return problems


if __name__ == "__main__":
    sys.exit(main())
