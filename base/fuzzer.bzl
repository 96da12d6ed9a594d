"""ember_fuzzer: a libFuzzer target and the test that runs it over its seed corpus."""

def ember_fuzzer(name, srcs, deps = [], data = []):
    """Declares NAME, a libFuzzer binary built only under --config=fuzz (see .bazelrc), and
    NAME_seeds_test, which runs the same LLVMFuzzerTestOneInput over every file of the seed
    corpus testdata/fuzz/NAME/ in every build (and so under ASan and UBSan in CI).

        bazel run --config=fuzz //PKG:NAME -- -max_total_time=600 $PWD/PKG/testdata/fuzz/NAME
    """
    corpus = native.glob(["testdata/fuzz/%s/*" % name])
    if not corpus:
        fail("%s: no seed corpus in testdata/fuzz/%s/" % (name, name))
    native.cc_binary(
        name = name,
        testonly = True,
        srcs = srcs,
        data = data + corpus,
        linkopts = ["-fsanitize=fuzzer"],  # libFuzzer's main; the objects are instrumented by --config=fuzz
        target_compatible_with = select({
            "//third_party:fuzz_enabled": [],
            "//conditions:default": ["//third_party:fuzz_requested"],
        }),
        deps = deps,
    )
    native.cc_test(
        name = name + "_seeds_test",
        srcs = srcs,
        args = ["%s/testdata/fuzz/%s" % (native.package_name(), name)],
        data = data + corpus,
        deps = deps + ["//base:fuzz_seeds_main"],
    )
