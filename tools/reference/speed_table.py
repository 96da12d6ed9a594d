#!/usr/bin/python3
"""The speed tables of docs/perf/cpu.md, in one command: builds ember, then runs ember, PyTorch 1.13
and (when --llmc names a built llm.c checkout) llm.c's train_gpt2 alternately on the
same workloads, and prints the tables in Markdown with the ratios.

  tools/reference/speed_table.py                      # everything, 2 rounds
  tools/reference/speed_table.py --llmc=/tmp/llm.c    # with llm.c's train_gpt2 beside
  tools/reference/speed_table.py --only=gpt2 --busy   # GPT-2's step quiet and busy
  EMBER_SIMD=AVX2 tools/reference/speed_table.py      # as an AVX2-only machine would
                                                      # (PyTorch at AVX2 too; llm.c as built)

Workloads (each figure the median over --rounds; within a round the commands of a
workload run back to back, so each ratio compares runs seconds apart):
- small models, at ember's default thread count and on one thread, against PyTorch on
  one thread, on a quiet machine and with a busy loop on one core ("busy": another
  process that wants a core, as a browser or a build does): the Fashion-MNIST MLP
  (SGD and Adam, 1 epoch, batch 32), makemore's MLP (20k steps), the demo GPT (30
  steps; no PyTorch twin);
- GPT-2 124M's training step (B=4, T=64, f32, AdamW, clip 1; the median of steps 2-8):
  ember, PyTorch and llm.c on all cores, with the step's share of the measured 2-core
  FMA peak (//kernels/cpu:fma_peak_benchmark) and each process's peak RSS; on a CPU with
  AVX512-BF16 also ember's --dtype=bf16 and PyTorch's bf16 autocast, against the bf16
  dot product's roof. With --busy, each of them quiet and then busy in every round, and
  ember on one thread beside (the floor a busy machine must not push it under).

Needs ./setup.sh's downloads and PyTorch (`apt-get install python3-torch`). llm.c reads
gpt2_124M.bin and its token shards from its working directory: this script writes a
randomly initialised checkpoint in llm.c's format and ember's Brown corpus shards into
a temporary one, so llm.c needs no download.
"""
import argparse
import contextlib
import csv
import datetime
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile

import numpy as np

import openblas_core

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.join(ROOT, "bazel-bin")
TORCH = ["/usr/bin/python3"]
TORCH_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}
# PyTorch on one thread: torch.set_num_threads(1) (--threads=1) leaves Debian's OpenBLAS
# its own pool, which a busy core stalls; these keep it to the one thread too.
TORCH_ONE_THREAD_ENV = dict(TORCH_ENV, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
V, CTX, L, H, C = 50257, 1024, 12, 12, 768


def run(cmd, env=None, cwd=None, stop=None):
    """Runs cmd; returns (stdout, peak RSS in MB). stop(stdout so far) -> True ends it early."""
    full_env = dict(os.environ, BUILD_WORKSPACE_DIRECTORY=ROOT, **(env or {}))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=full_env,
                            cwd=cwd or ROOT, text=True)
    out = []
    for line in proc.stdout:
        out.append(line)
        if stop and stop("".join(out)):
            proc.send_signal(signal.SIGKILL)
            break
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    if stop is None and status != 0:
        sys.exit(f"failed ({status}): {' '.join(cmd)}")
    return "".join(out), usage.ru_maxrss / 1024


def json_file(path):
    with open(path) as f:
        return json.load(f)


class Busy:
    """A process spinning on one core while the block runs."""

    def __enter__(self):
        self.proc = subprocess.Popen(["sh", "-c", "while :; do :; done"])
        return self

    def __exit__(self, *_):
        self.proc.kill()
        self.proc.wait()


# Small workloads: (name, ember command, its rate, PyTorch command or None, its rate);
# a rate reads the figure (higher is faster) from the command's metrics file / stdout.
def small_workloads(tmp):
    metrics = os.path.join(tmp, "metrics.json")
    out = ["--out_dir", os.path.join(tmp, "out"), "--metrics_out", metrics]
    mnist = os.path.join(BIN, "models/mnist/train")
    items = []
    for opt in ("sgd", "adam"):
        items.append((f"Fashion-MNIST MLP, {opt.upper() if opt == 'sgd' else 'Adam'}, 1 epoch: images/s",
                      [mnist, "--model=mlp", f"--optimizer={opt}", "--epochs=1", "--batch_size=32", *out],
                      lambda _: json_file(metrics)["examples_per_second"],
                      TORCH + ["tools/reference/mnist_torch.py", "--model=mlp", f"--optimizer={opt}", "--epochs=1",
                               "--batch_size=32", "--threads=1", "--metrics_out", metrics],
                      lambda _: json_file(metrics)["examples_per_second"]))
    steps = 20000
    items.append(("makemore MLP, 20k steps: steps/s",
                  [os.path.join(BIN, "models/makemore/train"), f"--steps={steps}", "--val_every=1000000",
                   "--samples=0", *out],
                  lambda _: steps / json_file(metrics)["train_seconds"],
                  TORCH + ["tools/reference/makemore_torch.py", f"--steps={steps}", "--threads=1"],
                  lambda stdout: steps / json.loads(stdout.strip().splitlines()[-1])["train_seconds"]))
    items.append(("demo GPT, 30 steps: tokens/s",
                  [os.path.join(BIN, "models/gpt2/train"), "--steps=30", "--warmup_steps=2", "--val_every=1000",
                   "--val_batches=1", "--sample_tokens=0", "--save_checkpoint", os.path.join(tmp, "ck.safetensors"),
                   *out],
                  lambda _: json_file(metrics)["tokens_per_second"], None, None))
    return items


def small_table(args, tmp):
    rows = []
    for name, ember, ember_rate, torch, torch_rate in small_workloads(tmp):
        for load in ("quiet", "busy"):
            got = {"default": [], "one": [], "torch": []}
            for _ in range(args.rounds):
                with Busy() if load == "busy" else contextlib.nullcontext():
                    got["default"].append(ember_rate(run(ember)[0]))
                    got["one"].append(ember_rate(run(ember, env={"EMBER_NUM_THREADS": "1"})[0]))
                    if torch:
                        got["torch"].append(torch_rate(run(torch, env=TORCH_ONE_THREAD_ENV)[0]))
            med = {k: statistics.median(v) if v else None for k, v in got.items()}
            rows.append((name, load, med))
            print(f"  {name} ({load}): {med}", file=sys.stderr)
    print("| workload | load | ember, default threads | ember, 1 thread | PyTorch 1.13, 1 thread "
          "| default / 1 thread | ember default / PyTorch |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name, load, m in rows:
        torch = f"{m['torch']:,.0f}" if m["torch"] else "-"
        vs_torch = f"{m['default'] / m['torch']:.2f}x" if m["torch"] else "-"
        print(f"| {name} | {load} | {m['default']:,.0f} | {m['one']:,.0f} | {torch} "
              f"| {m['default'] / m['one']:.2f}x | {vs_torch} |")


def step_flops(batch, seq):
    """Multiply-add FLOPs of one training step (forward 2, backward 4 per multiply-add):
    the Linear layers and the tied head, and attention's two products per layer."""
    linear = L * 12 * C * C + C * V  # qkv 3C^2, proj C^2, fc 4C^2, fc proj 4C^2; the head
    attention = L * 2 * seq * seq * C  # Q K^T and P V, per sequence
    return 6 * batch * (seq * linear + attention)


def write_llmc_inputs(tmp):
    """gpt2_124M.bin (GPT-2's initialisation) and token shards where train_gpt2 looks."""
    rng = np.random.default_rng(0)
    vp = (V + 127) // 128 * 128
    header = np.zeros(256, np.int32)
    header[:8] = [20240326, 3, CTX, V, L, H, C, vp]
    proj_std = 0.02 / np.sqrt(2 * L)
    shapes = [("wte", (vp, C), 0.02), ("wpe", (CTX, C), 0.02), ("ln1w", (L, C), None), ("ln1b", (L, C), 0),
              ("qkvw", (L, 3 * C, C), 0.02), ("qkvb", (L, 3 * C), 0), ("attprojw", (L, C, C), proj_std),
              ("attprojb", (L, C), 0), ("ln2w", (L, C), None), ("ln2b", (L, C), 0), ("fcw", (L, 4 * C, C), 0.02),
              ("fcb", (L, 4 * C), 0), ("fcprojw", (L, C, 4 * C), proj_std), ("fcprojb", (L, C), 0),
              ("lnfw", (C,), None), ("lnfb", (C,), 0)]
    with open(os.path.join(tmp, "gpt2_124M.bin"), "wb") as f:
        header.tofile(f)
        for _, shape, std in shapes:
            if std is None:
                np.ones(shape, np.float32).tofile(f)
            elif std == 0:
                np.zeros(shape, np.float32).tofile(f)
            else:
                rng.normal(0, std, shape).astype(np.float32).tofile(f)
    data = os.path.join(tmp, "dev", "data", "tinyshakespeare")
    os.makedirs(data, exist_ok=True)
    run([os.path.join(BIN, "tools/prepare_data/prepare_data"), "--dataset=brown", "--encoding=gpt2",
         "--out", os.path.join(data, "tiny_shakespeare")])


def gpt2_table(args, tmp):
    flops = step_flops(4, 64)
    # The peak is what the machine can do: the best of 5 repetitions, not their median
    # (a repetition that another process slowed says nothing about the roof).
    out = run([os.path.join(BIN, "kernels/cpu/fma_peak_benchmark"), "--benchmark_format=json",
               "--benchmark_repetitions=5"])[0]
    bench = json.loads(out)["benchmarks"]
    # The f32 FMA roof, and the bf16 dot product's (vdpbf16ps) where the CPU has one.
    peak, bf16_peak = {}, {}
    for b in bench:
        if b.get("run_type") == "iteration" and "GFLOP/s" in b:
            threads = int(b["run_name"].split("threads:")[1].split("/")[0])
            roof = bf16_peak if b["run_name"].startswith("BM_Bf16DotPeak") else peak
            roof[threads] = max(roof.get(threads, 0), b["GFLOP/s"])
    target = bench[0].get("label", "?")
    ember_dir = os.path.join(tmp, "gpt2")
    # GPT-2's vocabulary: the train binary's default data is in a Brown BPE of 8,193
    # tokens, whose head would be a sixth of GPT-2's.
    ember = [os.path.join(BIN, "models/gpt2/train"), "--model=gpt2", "--vocab=gpt2", "--batch_size=4", "--seq_len=64",
             "--steps=8", "--warmup_steps=2", "--val_every=1000", "--val_batches=1", "--sample_tokens=0", "--out_dir",
             ember_dir, "--save_checkpoint", os.path.join(ember_dir, "ck.safetensors"), "--metrics_out",
             os.path.join(ember_dir, "final.json")]
    params = V * C + CTX * C + L * (12 * C * C + 13 * C) + 2 * C  # GPT-2 124M, head tied: 124,439,808

    def ember_step(dtype="f32", env=None):
        _, rss = run(ember + [f"--dtype={dtype}"], env=env)
        with open(os.path.join(ember_dir, "final.json")) as f:
            got = json.load(f)["parameters"]
        if got != params:
            sys.exit(f"ember trained a model of {got} parameters, not GPT-2 124M's {params}")
        with open(os.path.join(ember_dir, "metrics.csv")) as f:
            rows = list(csv.DictReader(f))
        return statistics.median(float(r["seconds"]) for r in rows if int(r["step"]) >= 2), rss

    def torch_step(bf16=False):
        stdout, rss = run(TORCH + ["tools/reference/gpt2_step_torch.py", "--steps=8"] + (["--bf16"] if bf16 else []),
                          env=TORCH_ENV)
        return json.loads(stdout.strip().splitlines()[-1])["median_step_seconds"], rss

    def llmc_step():
        pattern = re.compile(r"step (\d+): train loss [\d.]+ \(took ([\d.]+) ms\)")
        stdout, rss = run([os.path.join(args.llmc, "train_gpt2")], env={"OMP_NUM_THREADS": str(os.cpu_count())},
                          cwd=tmp, stop=lambda s: len(pattern.findall(s)) >= 8)
        return statistics.median(float(ms) / 1000 for step, ms in pattern.findall(stdout) if int(step) >= 1), rss

    runners = {"ember": ember_step, "PyTorch 1.13": torch_step}
    if bf16_peak:  # bf16 where the CPU has a bf16 dot product: ember's autocast and PyTorch's
        runners["ember --dtype=bf16"] = lambda: ember_step("bf16")
        runners["PyTorch 1.13, bf16 autocast"] = lambda: torch_step(bf16=True)
    if args.llmc:
        write_llmc_inputs(tmp)
        runners["llm.c train_gpt2.c"] = llmc_step
    if args.busy:
        one = {"EMBER_NUM_THREADS": "1"}
        runners["ember, 1 thread"] = lambda: ember_step(env=one)
        if bf16_peak:
            runners["ember --dtype=bf16, 1 thread"] = lambda: ember_step("bf16", env=one)
    loads = ("quiet", "busy") if args.busy else ("quiet",)
    got = {(k, load): [] for k in runners for load in loads}
    for _ in range(args.rounds):
        for name, fn in runners.items():
            for load in loads:
                with Busy() if load == "busy" else contextlib.nullcontext():
                    got[(name, load)].append(fn())
                print(f"  GPT-2 step, {name} ({load}): {got[(name, load)][-1]}", file=sys.stderr)
    medians = {k: (statistics.median(s for s, _ in v), max(r for _, r in v)) for k, v in got.items()}
    med = {name: medians[(name, "quiet")] for name in runners if "1 thread" not in name}
    cores = min(os.cpu_count(), max(peak))
    bf16_roof = f", bf16 dot product {bf16_peak[cores]:.0f} on {cores}" if bf16_peak else ""
    print(f"\nGPT-2 124M training step, B=4, T=64 ({flops / 1e9:.0f} GFLOP); FMA peak measured "
          f"{peak.get(1, 0):.0f} GFLOP/s one core, {peak.get(2, 0):.0f} two{bf16_roof} ({target}):\n")
    print("| | seconds per step | ember (f32) faster by | share of the peak | peak RSS |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, (seconds, rss) in med.items():
        roof = bf16_peak[cores] if "bf16" in name else peak[cores]  # each precision's own roof
        print(f"| {name} | {seconds:.2f} | {seconds / med['ember'][0]:.2f}x "
              f"| {flops / seconds / 1e9 / roof:.0%} | {rss / 1024:.1f} GB |")
    if "ember --dtype=bf16" in med:
        bf16 = med["ember --dtype=bf16"][0]
        print(f"\nember --dtype=bf16 faster than ember f32 by {med['ember'][0] / bf16:.2f}x, than "
              f"PyTorch's bf16 autocast by {med['PyTorch 1.13, bf16 autocast'][0] / bf16:.2f}x")
    if args.busy:
        print("\nQuiet and busy (a process spinning on one core), seconds per step, medians:\n")
        print("| | quiet | busy | busy / quiet |")
        print("| --- | ---: | ---: | ---: |")
        for name in runners:
            quiet, busy = medians[(name, "quiet")][0], medians[(name, "busy")][0]
            print(f"| {name} | {quiet:.3f} | {busy:.3f} | {busy / quiet:.2f}x |")
        for ours, theirs in (("ember", "PyTorch 1.13"), ("ember --dtype=bf16", "PyTorch 1.13, bf16 autocast")):
            if ours in runners and theirs in runners:
                print(f"\nbusy: {ours} faster than {theirs} by "
                      f"{medians[(theirs, 'busy')][0] / medians[(ours, 'busy')][0]:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--llmc", default="", help="a llm.c checkout with train_gpt2 built (make train_gpt2)")
    parser.add_argument("--only", choices=["small", "gpt2"], default=None)
    parser.add_argument("--busy", action="store_true",
                        help="GPT-2's step also with a process spinning on one core, and ember on one thread")
    args = parser.parse_args()
    if args.llmc and not os.access(os.path.join(args.llmc, "train_gpt2"), os.X_OK):
        sys.exit(f"--llmc={args.llmc}: no train_gpt2 built there (run make train_gpt2 in it)")
    # Always: bazel-bin holds whatever was built last (a plain `bazel test` leaves
    # unoptimised binaries there); from the cache this takes seconds.
    subprocess.run(["bazel", "build", "-c", "opt", "//models/mnist:train", "//models/makemore:train",
                    "//models/gpt2:train", "//kernels/cpu:fma_peak_benchmark", "//tools/prepare_data"],
                   cwd=ROOT, check=True)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    # The PyTorch scripts set these themselves (openblas_core.ensure).
    env = openblas_core.environment()
    blas = " ".join(f"{k}={v}" for k, v in env.items()) if env else "OpenBLAS's own kernels"
    print(f"{datetime.date.today()}, {cpu}, {os.cpu_count()} cores, EMBER_SIMD={os.environ.get('EMBER_SIMD', '')}, "
          f"PyTorch with {blas}\n")
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "small"):
            small_table(args, tmp)
        if args.only in (None, "gpt2"):
            gpt2_table(args, tmp)


if __name__ == "__main__":
    main()
