#!/usr/bin/env bash
# Set-up, build (warnings are errors), every fuzz target for a short budget (FUZZ_SECONDS, default 30 each; 0 leaves
# them out), every test (gtest and lit, through ctest), then the runtime's tests and the lit suite
# under ASan + UBSan and the runtime's tests under TSan (scripts/sanitize.sh; SANITIZE=0 leaves
# them out). What CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh -DKIME_WERROR=ON
seconds=${FUZZ_SECONDS:-30}
# A fixed seed: the same sequence of mutations every run (how far it gets in the time depends on
# the machine), so that CI does not pass or fail by the luck of a random seed.
if [ "$seconds" != 0 ]; then FUZZ_SEED=${FUZZ_SEED:-1} scripts/fuzz.sh "$seconds"; fi
# The tests' compiles share a kernel cache in the build tree, not the user's (~/.cache/kime).
export KIME_CACHE_DIR=${KIME_CACHE_DIR:-$PWD/build/test-cache}
ctest --test-dir build --output-on-failure -j"$(nproc)"
if [ "${SANITIZE:-1}" != 0 ]; then scripts/sanitize.sh; fi
