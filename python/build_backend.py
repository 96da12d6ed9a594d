"""The PEP 517 build backend behind `pip install ./python`: the wheel holds the `ember`
package (python/ember/) and the extension module that `bazel build -c opt
//python:ember/_ember.so` makes in this checkout. Written out here, without setuptools
or wheel, so that pip needs nothing from a package index (build isolation or not).

The module is compiled against Debian's python3 headers (WORKSPACE registers them): a
Python of another version cannot load it, and the build says so instead of installing a
wheel that fails at `import ember`.
"""

import base64
import hashlib
import os
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NAME, VERSION = "ember", "0.1.0"
SUMMARY = ("ember's tensors, autograd, layers, optimizers, tokenizer and distributed training, "
           "in PyTorch's and tiktoken's names")


def _tag():
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{python}-{python}-{platform}"


def _bazel_env():
    """The environment without what pip and a virtual environment put on PATH, which
    Bazel's actions inherit: the build then reuses what ./setup.sh or a developer built."""
    env = dict(os.environ)
    own = {os.path.join(sys.prefix, "bin")} if sys.prefix != sys.base_prefix else set()
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and p not in own and "pip-build-env" not in p)
    env.pop("VIRTUAL_ENV", None)
    return env


def _build_module():
    """Bazel's -c opt build of the extension; its path."""
    if not os.path.isfile(os.path.join(ROOT, "WORKSPACE")):
        raise RuntimeError(f"ember: {ROOT} is not an ember checkout (no WORKSPACE); run pip install ./python "
                           "from the repository's root")
    print("ember: bazel build -c opt //python:ember/_ember.so (./setup.sh installs Bazel)", file=sys.stderr)
    env = _bazel_env()
    build = subprocess.run(["bazel", "build", "-c", "opt", "//python:ember/_ember.so"], cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if build.returncode != 0:
        raise RuntimeError("ember: the extension module did not build:\n" + build.stdout[-4000:])
    bin_dir = subprocess.run(["bazel", "info", "-c", "opt", "bazel-bin"], cwd=ROOT, env=env, check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
    return os.path.join(bin_dir, "python", "ember", "_ember.so")


def _package_files(module):
    """(path in the wheel, path here) of the package's Python files and the module."""
    files = []
    for directory, dirs, names in os.walk(os.path.join(HERE, NAME)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                files.append((os.path.relpath(path, HERE).replace(os.sep, "/"), path))
    files.append((f"{NAME}/_ember.so", module))
    return files


def _check_loads(files):
    """Imports the package from a copy of its files with this Python."""
    with tempfile.TemporaryDirectory() as tmp:
        for arcname, path in files:
            os.makedirs(os.path.dirname(os.path.join(tmp, arcname)), exist_ok=True)
            with open(path, "rb") as src, open(os.path.join(tmp, arcname), "wb") as dst:
                dst.write(src.read())
        probe = subprocess.run([sys.executable, "-c", "import ember"], cwd=tmp, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    if probe.returncode != 0:
        last = probe.stdout.strip().splitlines()[-1] if probe.stdout.strip() else "no output"
        raise RuntimeError(f"ember: {sys.executable} (Python {sys.version.split()[0]}) cannot import the package "
                           f"built here: {last}. The module is built for Debian's python3: install into an "
                           "environment of that Python (python3 -m venv on /usr/bin/python3).\n"
                           + probe.stdout[-2000:])


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\nSummary: {SUMMARY}\n"
            "Requires-Python: >=3.8\n")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _package_files(_build_module())
    _check_loads(files)
    tag = _tag()
    wheel_name = f"{NAME}-{VERSION}-{tag}.whl"
    info = f"{NAME}-{VERSION}.dist-info"
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w", zipfile.ZIP_DEFLATED) as whl:
        def add(arcname, data):
            info_ = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            info_.external_attr = (0o755 if arcname.endswith(".so") else 0o644) << 16
            info_.compress_type = zipfile.ZIP_DEFLATED
            whl.writestr(info_, data)
            records.append(_record_line(arcname, data))

        for arcname, path in files:
            with open(path, "rb") as f:
                add(arcname, f.read())
        add(f"{info}/METADATA", _metadata().encode())
        add(f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: ember build_backend\nRoot-Is-Purelib: false\n"
                             f"Tag: {tag}\n".encode())
        records.append(f"{info}/RECORD,,")
        whl.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    return wheel_name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("ember: no source distribution; install from the checkout (pip install ./python)")
