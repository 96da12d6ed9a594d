"""Watches the train ranks writing to OUT_DIR (polled every 20 ms) and prints, for the
figures of docs/perf/distributed.md#distributed-checkpoints:
- the checkpoint's save: from its temporary file's first appearance to the final file;
- the ranks' peak summed private memory (RssAnon) and file-backed memory (RssFile), and
  the machine's peak used memory (MemTotal - MemAvailable) above where it started.

    python3 tools/reference/checkpoint_io_monitor.py OUT_DIR LABEL &
"""

import glob
import os
import sys
import time


def ranks(out_dir):
    found = []
    for proc in glob.glob("/proc/[0-9]*"):
        try:
            cmd = open(proc + "/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if cmd and b"train" in os.path.basename(cmd[0]) and b"--out_dir=" + out_dir.encode() in cmd:
            found.append(proc)
    return found


def status(proc):
    fields = {}
    try:
        for line in open(proc + "/status"):
            if line.startswith(("RssAnon:", "RssFile:")):
                fields[line.split(":")[0]] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return fields


def used():
    info = {}
    for line in open("/proc/meminfo"):
        key, value = line.split(":")
        info[key] = int(value.split()[0]) * 1024
    return info["MemTotal"] - info["MemAvailable"]


def main():
    out_dir, label = sys.argv[1], sys.argv[2]
    final = os.path.join(out_dir, "checkpoint.safetensors")
    base = used()
    anon = filed = peak = 0
    save_start = save_end = None
    seen = False
    start = time.time()
    while time.time() - start < 1800:
        procs = ranks(out_dir)
        if procs:
            seen = True
        elif seen:
            break
        fields = [status(p) for p in procs]
        anon = max(anon, sum(f.get("RssAnon", 0) for f in fields))
        filed = max(filed, sum(f.get("RssFile", 0) for f in fields))
        peak = max(peak, used() - base)
        temporary = glob.glob(final + ".tmp-*")
        now = time.time()
        if temporary and save_start is None:
            save_start = now
        if save_start is not None and save_end is None and not temporary and os.path.exists(final):
            save_end = now
        time.sleep(0.02)
    save = f"save {save_end - save_start:.2f} s; " if save_start and save_end else ""
    print(f"{label}: {save}peak summed RssAnon {anon / 1e6:.0f} MB, RssFile {filed / 1e6:.0f} MB; "
          f"machine's used memory +{peak / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
