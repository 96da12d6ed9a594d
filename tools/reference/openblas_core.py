"""OpenBLAS at its best on this CPU, for the scripts that time PyTorch or NumPy.

Debian's OpenBLAS (0.3.21, built for every x86 core it knows) picks its kernels by CPU
model, and on a model newer than it knows it falls back to its SSE3 kernels
("Prescott"). On a 2-vCPU Intel Xeon of model 207 (Emerald Rapids, AVX-512) it did, and
PyTorch 1.13's GPT-2 124M step took 4.1-4.3 s instead of 1.65-1.91 s with
OPENBLAS_CORETYPE=SkylakeX (alternating runs of gpt2_step_torch.py, same machine): a
reference that slow flatters ember. So a timing script calls ensure() before it imports
numpy or torch; where OpenBLAS chose kernels without AVX2 on a CPU that has it, the
script runs again with OPENBLAS_CORETYPE naming the kernels that fit (SkylakeX for
AVX-512, Haswell for AVX2). A choice OpenBLAS made knowingly, or an OPENBLAS_CORETYPE
already set, is left alone. kernels/cpu/matmul_benchmark.cc does the same for its
cblas_sgemm.

EMBER_SIMD=AVX2 runs ember on an AVX-512 machine as an AVX2-only machine would run it
(kernels/cpu/simd.h); the references then run as they would there too: OpenBLAS on its
Haswell kernels, PyTorch's own kernels at AVX2 (ATEN_CPU_CAPABILITY) and oneDNN's at
most AVX2 (ONEDNN_MAX_CPU_ISA). Otherwise an "AVX2-only" table compares ember's AVX2
code with PyTorch on AVX-512's GEMM: on a 2-vCPU Intel Xeon (Emerald Rapids), where
AVX-512 has twice AVX2's FMA peak, ember's Fashion-MNIST MLP read 1.23x PyTorch so.
"""
import os
import subprocess
import sys

# Cores whose kernels use AVX2 or AVX-512 (OpenBLAS's names, as openblas_get_corename
# gives them); any other core on an AVX2 CPU is a fallback.
_VECTOR_CORES = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"}
_PROBE = ("import ctypes; lib = ctypes.CDLL('libopenblas.so.0'); "
          "lib.openblas_get_corename.restype = ctypes.c_char_p; print(lib.openblas_get_corename().decode())")


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def avx2_only():
    """Whether this run stands for an AVX2-only machine (EMBER_SIMD=AVX2)."""
    return os.environ.get("EMBER_SIMD", "").upper() == "AVX2"


def coretype():
    """The OPENBLAS_CORETYPE this run needs, or None where OpenBLAS's own choice stands."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return None
    flags = _cpu_flags()
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags and not avx2_only():
        fit = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        fit = "Haswell"
    else:
        return None
    if avx2_only():
        return fit
    probe = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True)
    chosen = probe.stdout.strip()
    if probe.returncode != 0 or not chosen or chosen.lower() in _VECTOR_CORES:
        return None
    return fit


# What PyTorch and oneDNN need to run as on an AVX2-only machine.
_AVX2_ONLY_ENV = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def environment():
    """The variables this run sets for the references (on top of the caller's)."""
    env = {}
    fit = coretype()
    if fit:
        env["OPENBLAS_CORETYPE"] = fit
    if avx2_only():
        env.update({k: v for k, v in _AVX2_ONLY_ENV.items() if k not in os.environ})
    return env


def ensure():
    """Runs this script again with environment() set, where it sets anything (OpenBLAS
    reads its variable when it loads)."""
    env = environment()
    if env:
        why = "EMBER_SIMD=AVX2" if avx2_only() else "OpenBLAS does not know this CPU and fell back to kernels without AVX2"
        settings = " ".join(f"{k}={v}" for k, v in env.items())
        print(f"{os.path.basename(sys.argv[0])}: {why}; running again with {settings}", file=sys.stderr)
        os.environ.update(env)
        os.execv(sys.executable, [sys.executable] + sys.argv)
