"""torchrun's counterpart: starts --nproc_per_node ranks of a training script on this
machine under mpirun, each with RANK, LOCAL_RANK, WORLD_SIZE and LOCAL_WORLD_SIZE set as
torchrun sets them, and the machine's cores shared among them.

    python3 -m ember.distributed.run --nproc_per_node=2 train.py --batch_size=4
    python3 -m ember.distributed.run --nproc_per_node=2 -m some.module --flag

One machine only (--nnodes=1; for several, run mpirun with a hostfile yourself and call
ember.distributed.init_process_group in the script). The run ends when every rank has
ended; a rank that fails ends the others, and the launcher exits with its status.
"""

import argparse
import os
import runpy
import shutil
import sys


def _parser():
    p = argparse.ArgumentParser(
        prog="python3 -m ember.distributed.run",
        description="Starts a training script's ranks under mpirun, as torchrun does.")
    p.add_argument("--nproc_per_node", "--nproc-per-node", type=int, default=1,
                   help="ranks to start on this machine (default 1)")
    p.add_argument("--nnodes", default="1", help="machines: only 1 is supported")
    p.add_argument("--node_rank", "--node-rank", type=int, default=0, help="must be 0")
    p.add_argument("--standalone", action="store_true", help="accepted, as torchrun's (one machine)")
    p.add_argument("--master_addr", "--master-addr", default=None, help="accepted; mpirun connects the ranks")
    p.add_argument("--master_port", "--master-port", default=None, help="accepted; mpirun connects the ranks")
    p.add_argument("-m", "--module", action="store_true", help="the script is a module name (python -m)")
    p.add_argument("--no_python", "--no-python", action="store_true",
                   help="the script is an executable, not a Python file")
    p.add_argument("script", help="the training script (or module, or executable)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    return p


def _as_rank():
    """In a rank mpirun started: torchrun's variables from OpenMPI's, then the script."""
    env = os.environ
    env["RANK"] = env["OMPI_COMM_WORLD_RANK"]
    env["WORLD_SIZE"] = env["OMPI_COMM_WORLD_SIZE"]
    env["LOCAL_RANK"] = env["OMPI_COMM_WORLD_LOCAL_RANK"]
    env["LOCAL_WORLD_SIZE"] = env["OMPI_COMM_WORLD_LOCAL_SIZE"]
    kind, script, args = sys.argv[2], sys.argv[3], sys.argv[4:]
    sys.argv = [script] + args
    if kind == "--exec":
        os.execvp(script, sys.argv)
    elif kind == "-m":
        runpy.run_module(script, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--as-rank"]:
        return _as_rank()
    a = _parser().parse_args(argv)
    if str(a.nnodes) not in ("1", "1:1") or a.node_rank != 0:
        sys.exit("ember.distributed.run: one machine only (--nnodes=1); for several, start the ranks with "
                 "mpirun --hostfile")
    if a.nproc_per_node < 1:
        sys.exit(f"ember.distributed.run: --nproc_per_node={a.nproc_per_node}: expected at least 1")
    if not a.no_python and not a.module and not os.path.isfile(a.script):
        sys.exit(f"ember.distributed.run: no script {a.script}")
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        sys.exit("ember.distributed.run: mpirun not found (./setup.sh installs OpenMPI)")
    cmd = [mpirun, "-np", str(a.nproc_per_node), "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    kind = "--exec" if a.no_python else "-m" if a.module else "--file"
    cmd += [sys.executable, "-m", "ember.distributed.run", "--as-rank", kind, a.script] + a.script_args
    sys.stdout.flush()
    os.execv(mpirun, cmd)


if __name__ == "__main__":
    main()
