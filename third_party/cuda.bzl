"""cuda_library: CUDA sources compiled by nvcc into a cc_library.

There are no CUDA rules for Bazel 4 offline; this rule runs the local toolkit's nvcc
(found by @ember_cuda, see repositories.bzl) with the include paths and defines of
its C++ deps, and a cc_library links the objects with cudart. The targets exist only
under --config=cuda; otherwise they are incompatible and //... skips them.
"""

load("@ember_cuda//:defs.bzl", "NVCC")

# Hopper (H100/H200) and Ampere (A100) machine code, plus Hopper PTX for newer GPUs.
_GENCODE = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
]

CUDA_ONLY = select({
    str(Label("//third_party:cuda_enabled")): [],
    "//conditions:default": [str(Label("//third_party:cuda_requested"))],
})

def _nvcc_objects_impl(ctx):
    contexts = [dep[CcInfo].compilation_context for dep in ctx.attr.deps]
    # Relaxed constexpr: device code may call std::numeric_limits and the like.
    flags = ["-std=c++17", "-O3", "-Xcompiler", "-fPIC", "--expt-relaxed-constexpr"] + _GENCODE
    include_dirs = [".", ctx.bin_dir.path]
    for c in contexts:
        include_dirs += c.quote_includes.to_list() + c.includes.to_list() + c.system_includes.to_list()
        flags += ["-D" + d for d in c.defines.to_list()]
    for d in include_dirs:
        flag = "-I" + d
        if flag not in flags:
            flags.append(flag)
    headers = depset(ctx.files.hdrs, transitive = [c.headers for c in contexts])
    objects = []
    for src in ctx.files.srcs:
        obj = ctx.actions.declare_file("_nvcc/%s/%s.o" % (ctx.label.name, src.basename))
        # nvcc names its temporary files in $TMPDIR by its pid, and each sandbox has its
        # own pid namespace: two nvcc run side by side as the same pid would share (and
        # delete) each other's files in a shared /tmp, so each action gets its own.
        ctx.actions.run_shell(
            command = 'tmp="$1.tmp" && rm -rf "$tmp" && mkdir -p "$tmp" && ' +
                      'TMPDIR="$tmp" "$2" "${@:3}"; rc=$?; rm -rf "$tmp"; exit $rc',
            arguments = [obj.path, ctx.attr.nvcc] + flags + ["-c", src.path, "-o", obj.path],
            inputs = depset([src], transitive = [headers]),
            outputs = [obj],
            mnemonic = "Nvcc",
            progress_message = "Compiling %s with nvcc" % src.short_path,
            use_default_shell_env = True,
        )
        objects.append(obj)
    return [DefaultInfo(files = depset(objects))]

_nvcc_objects = rule(
    implementation = _nvcc_objects_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cu"]),
        "hdrs": attr.label_list(allow_files = True),
        "deps": attr.label_list(providers = [CcInfo]),
        "nvcc": attr.string(mandatory = True),
    },
)

def cuda_library(name, srcs, hdrs = [], deps = [], **kwargs):
    """A cc_library whose .cu srcs nvcc compiles. kwargs go to the cc_library."""
    cuda_deps = deps + [Label("//third_party:cudart")]
    _nvcc_objects(
        name = name + "_nvcc",
        srcs = srcs,
        hdrs = hdrs,
        deps = cuda_deps,
        nvcc = NVCC,
        target_compatible_with = CUDA_ONLY,
    )
    native.cc_library(
        name = name,
        srcs = [":" + name + "_nvcc"],
        hdrs = hdrs,
        deps = cuda_deps,
        target_compatible_with = CUDA_ONLY,
        **kwargs
    )
