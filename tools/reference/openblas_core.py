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


def coretype():
    """The OPENBLAS_CORETYPE this CPU needs, or None where OpenBLAS's own choice stands."""
    if "OPENBLAS_CORETYPE" in os.environ:
        return None
    flags = _cpu_flags()
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        fit = "SkylakeX"
    elif {"avx2", "fma"} <= flags:
        fit = "Haswell"
    else:
        return None
    probe = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True)
    chosen = probe.stdout.strip()
    if probe.returncode != 0 or not chosen or chosen.lower() in _VECTOR_CORES:
        return None
    return fit


def ensure():
    """Runs this script again with OPENBLAS_CORETYPE set, where OpenBLAS fell back."""
    fit = coretype()
    if fit:
        print(f"{os.path.basename(sys.argv[0])}: OpenBLAS does not know this CPU and fell back to kernels "
              f"without AVX2; running again with OPENBLAS_CORETYPE={fit}", file=sys.stderr)
        os.environ["OPENBLAS_CORETYPE"] = fit
        os.execv(sys.executable, [sys.executable] + sys.argv)
