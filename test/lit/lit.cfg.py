# lit configuration of kime's FileCheck tests.
import os
import sys

import lit.formats

config.name = "kime"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "compare.py", "golden.py", "help_lines.py", "tamper.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kime_obj_root, "test", "lit")

# Built tools first, then FileCheck and not from LLVM 19.
config.environment["PATH"] = os.pathsep.join(
    [config.kime_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
# The kernel cache of kime-compile: the one the test run names (scripts/test-all.sh: the build
# tree's), else one in the build tree, never the user's.
config.environment["KIME_CACHE_DIR"] = os.environ.get("KIME_CACHE_DIR") or os.path.join(config.kime_obj_root, "kime-cache")
config.environment["FILECHECK_OPTS"] = "--enable-var-scope --dump-input=fail"
config.substitutions.append(("%data", config.kime_test_data))
config.substitutions.append(("%src", config.kime_src_root))
config.substitutions.append(("%python", sys.executable))

# --param sanitized=1: kime-run is built with sanitizers, which own malloc, so it cannot count
# allocations; the tests that check warm runs allocate nothing say UNSUPPORTED: sanitized.
if lit_config.params.get("sanitized"):
    config.available_features.add("sanitized")

# This build makes PTX (configured with a CUDA Toolkit); tests of PTX say REQUIRES: nvrtc.
if config.kime_has_nvrtc:
    config.available_features.add("nvrtc")
    config.substitutions.append(("%ptxas", config.kime_ptxas))

# Tests of the bf16 kernels (kime-compile --cpu-precision bf16) run where the CPU has AVX512-BF16;
# tests that run AVX-512 code only, where it has AVX-512; int8's VNNI code, where the runtime
# takes it.
try:
    with open("/proc/cpuinfo") as f:
        flags = next((l.split() for l in f if l.startswith("flags")), [])
    if "avx512_bf16" in flags:
        config.available_features.add("avx512bf16")
    if "avx512f" in flags:
        config.available_features.add("avx512")
    # The runtime's rule for the Sapphire Rapids targets (x86-64-avx512vnni, x86-64-avx512bf16).
    if {"avx512_bf16", "avx512_vnni", "avx512vbmi", "avx512ifma"} <= set(flags):
        config.available_features.add("avx512vnni")
except OSError:
    pass
