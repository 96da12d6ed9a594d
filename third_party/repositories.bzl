"""Repositories ember needs, all offline: stubs for the three repositories Bazel 4
asks for on its own, and the system libraries found through pkg-config.

A repository that uses ember calls this once from its WORKSPACE:

    local_repository(name = "ember", path = "...")
    load("@ember//third_party:repositories.bzl", "ember_dependencies")
    ember_dependencies()
"""

# Target name in @ember_system_libs -> the pkg-config modules it links (an entry
# starting with "-l" is a library that ships no .pc file, linked before the modules).
# //third_party:BUILD gives each one an alias; nothing else names these.
_SYSTEM_LIBRARIES = {
    "absl_containers": ["absl_flat_hash_map", "absl_flat_hash_set", "absl_inlined_vector"],
    "absl_flags": ["absl_flags", "absl_flags_parse", "absl_flags_usage"],
    "absl_status": ["absl_status", "absl_statusor"],
    "absl_strings": ["absl_strings", "absl_str_format"],
    "absl_synchronization": ["absl_synchronization"],
    "absl_time": ["absl_time"],
    "benchmark": ["benchmark"],
    "benchmark_main": ["-lbenchmark_main", "benchmark"],
    "cpp_httplib": ["cpp-httplib"],  # models/gpt2:serve's HTTP server
    "eigen": ["eigen3"],
    "gtest": ["gtest", "gmock"],
    "gtest_main": ["gtest_main", "gtest", "gmock"],
    "highway": ["libhwy"],
    "highway_contrib": ["libhwy-contrib", "libhwy"],
    "highway_test": ["libhwy-test", "libhwy"],
    "json": ["nlohmann_json"],  # header-only: safetensors headers, model specs
    "openblas": ["openblas"],  # a comparator for benchmarks only
    "pybind11": ["pybind11", "python3"],  # header-only: python/'s extension module
    "re2": ["re2"],
    "zlib": ["zlib"],
}

_SETUP_HINT = "Run ./setup.sh in ember's root to install the system packages it builds on."

def _pkg_config(rctx, flag, modules):
    result = rctx.execute(["pkg-config", flag] + modules)
    if result.return_code != 0:
        fail("pkg-config %s %s failed: %s\n%s" % (flag, " ".join(modules), result.stderr, _SETUP_HINT))
    return result.stdout.strip().split(" ") if result.stdout.strip() else []

def _system_libs_impl(rctx):
    if not rctx.which("pkg-config"):
        fail("pkg-config is not installed. " + _SETUP_HINT)
    build = ['package(default_visibility = ["//visibility:public"])', ""]
    include_dirs = {}  # absolute include dir -> folder name inside this repository
    for name, entries in sorted(_SYSTEM_LIBRARIES.items()):
        raw_libs = [e for e in entries if e.startswith("-l")]
        modules = [e for e in entries if not e.startswith("-l")]
        includes = []
        for flag in _pkg_config(rctx, "--cflags-only-I", modules):
            path = flag[len("-I"):]
            if path in ("/usr/include", "/usr/local/include"):
                continue  # the compiler searches these already
            if path not in include_dirs:
                include_dirs[path] = "include_%d" % len(include_dirs)
                rctx.symlink(path, include_dirs[path])
            includes.append(include_dirs[path])
        # -D flags (cpp-httplib's say which features its library was built with: the
        # header must see the same ones).
        defines = [f[len("-D"):] for f in _pkg_config(rctx, "--cflags-only-other", modules) if f.startswith("-D")]
        build.append("cc_library(")
        build.append('    name = "%s",' % name)
        if includes:
            # The headers are listed so that Bazel tracks them and sandboxes see them.
            build.append("    hdrs = glob([%s])," % ", ".join(['"%s/**"' % i for i in includes]))
            build.append("    includes = %s," % repr(includes))
        if defines:
            build.append("    defines = %s," % repr(defines))
        build.append("    linkopts = %s," % repr(raw_libs + _pkg_config(rctx, "--libs", modules)))
        build.append(")")
        build.append("")
    rctx.file("BUILD", "\n".join(build))
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)

_system_libs = repository_rule(
    implementation = _system_libs_impl,
    local = True,
    environ = ["PKG_CONFIG_PATH"],
)

def _cuda_impl(rctx):
    """CUDA from a local toolkit; only targets built with --config=cuda reach it."""
    root = rctx.os.environ.get("CUDA_PATH", "/usr/local/cuda")
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    rctx.file("defs.bzl", 'NVCC = "%s/bin/nvcc"\n' % root)
    if not rctx.path(root + "/bin/nvcc").exists:
        # Fails only when a --config=cuda build reaches it.
        rctx.file("BUILD", """package(default_visibility = ["//visibility:public"])
genrule(
    name = "missing",
    outs = ["missing.h"],
    cmd = "echo 'No CUDA toolkit at {root} (set CUDA_PATH), so --config=cuda cannot build.' >&2; exit 1",
)
cc_library(name = "cudart", hdrs = [":missing"])
cc_library(name = "cublas", hdrs = [":missing"])
cc_library(name = "nccl", hdrs = [":missing"])
""".format(root = root))
        return
    rctx.symlink(root + "/include", "include")
    rctx.file("BUILD", """package(default_visibility = ["//visibility:public"])
cc_library(
    name = "cudart",
    hdrs = glob(["include/**"]),
    includes = ["include"],
    linkopts = ["-L{root}/lib64", "-Wl,-rpath,{root}/lib64", "-lcudart"],
)
cc_library(
    name = "cublas",
    linkopts = ["-L{root}/lib64", "-lcublas", "-lcublasLt"],
    deps = [":cudart"],
)
cc_library(
    name = "nccl",
    linkopts = ["-L{root}/lib64", "-lnccl"],
    deps = [":cudart"],
)
""".format(root = root))

_cuda = repository_rule(
    implementation = _cuda_impl,
    local = True,
    environ = ["CUDA_PATH"],
)

def _rules_cc_impl(rctx):
    # Debian's bazel-rules-cc needs a newer Bazel; Bazel 4's native rules are enough.
    rctx.file("WORKSPACE", 'workspace(name = "rules_cc")\n')
    rctx.file("BUILD", "")
    rctx.file("cc/BUILD", "")
    rctx.file("cc/defs.bzl", "\n".join([
        "cc_binary = native.cc_binary",
        "cc_import = native.cc_import",
        "cc_library = native.cc_library",
        "cc_proto_library = native.cc_proto_library",
        "cc_test = native.cc_test",
        "cc_toolchain = native.cc_toolchain",
        "cc_toolchain_suite = native.cc_toolchain_suite",
        "",
    ]))

def _mpi_impl(rctx):
    """OpenMPI through pkg-config when it is installed (setup.sh installs it); without
    it, an empty target and HAS_MPI = False, so that a build without MPI still works
    (distributed/ then runs as one process)."""
    rctx.file("WORKSPACE", 'workspace(name = "%s")\n' % rctx.name)
    found = rctx.which("pkg-config") and rctx.execute(["pkg-config", "--exists", "ompi-c"]).return_code == 0
    rctx.file("defs.bzl", "HAS_MPI = %s\n" % ("True" if found else "False"))
    if not found:
        rctx.file("BUILD", 'package(default_visibility = ["//visibility:public"])\ncc_library(name = "mpi")\n')
        return
    includes = []
    for flag in _pkg_config(rctx, "--cflags-only-I", ["ompi-c"]):
        path = flag[len("-I"):]
        name = "include_%d" % len(includes)
        rctx.symlink(path, name)
        includes.append(name)
    rctx.file("BUILD", """package(default_visibility = ["//visibility:public"])
cc_library(
    name = "mpi",
    hdrs = glob([{globs}]),
    includes = {includes},
    defines = ["OMPI_SKIP_MPICXX"],  # MPI's C API only: its C++ one was removed in MPI-3
    linkopts = {linkopts},
)
""".format(
        globs = ", ".join(['"%s/**"' % i for i in includes]),
        includes = repr(includes),
        linkopts = repr(_pkg_config(rctx, "--libs", ["ompi-c"])),
    ))

_mpi = repository_rule(
    implementation = _mpi_impl,
    local = True,
    environ = ["PKG_CONFIG_PATH"],
)

_rules_cc = repository_rule(implementation = _rules_cc_impl)

def _coverage_tools_impl(rctx):
    # Every cc_test names these two tools; coverage itself needs a download.
    rctx.file("WORKSPACE", 'workspace(name = "remote_coverage_tools")\n')
    rctx.file("unavailable.sh", "echo 'coverage is not available offline' >&2\nexit 1\n", executable = True)
    rctx.file("BUILD", """package(default_visibility = ["//visibility:public"])
sh_binary(name = "coverage_report_generator", srcs = ["unavailable.sh"])
sh_binary(name = "lcov_merger", srcs = ["unavailable.sh"])
""")

_coverage_tools = repository_rule(implementation = _coverage_tools_impl)

def ember_dependencies():
    """Declares every repository ember's targets need. Call once from WORKSPACE."""
    _rules_cc(name = "rules_cc")
    native.local_repository(name = "rules_java", path = "/usr/share/bazel/rules/java")
    _coverage_tools(name = "remote_coverage_tools")
    _system_libs(name = "ember_system_libs")
    _mpi(name = "ember_mpi")
    _cuda(name = "ember_cuda")
