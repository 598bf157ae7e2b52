#!/usr/bin/env bash
# Set-up, build (warnings are errors), every fuzz target for a short budget (FUZZ_SECONDS, default 20 each; 0 leaves
# them out), every test (gtest and lit, through ctest), then the runtime's tests and the lit suite
# under ASan + UBSan and the runtime's tests under TSan (scripts/sanitize.sh; SANITIZE=0 leaves
# them out). What CI runs.
#   scripts/test-all.sh --quick   set-up, build and the quick tier only (ctest -L quick: the unit
#                                 tests, lit, format, layering): the edit-compile-test loop
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[ "${1:-}" = --quick ] && quick=1
# Each step's time, for CI's log (the full run must stay within 25 minutes on two cores).
step() { echo "test-all: $1 done at $((SECONDS / 60)) min $((SECONDS % 60)) s"; }
scripts/setup.sh
scripts/build.sh -DKIME_WERROR=ON
step build
# The tests' compiles share a kernel cache in the build tree, not the user's (~/.cache/kime).
export KIME_CACHE_DIR=${KIME_CACHE_DIR:-$PWD/build/test-cache}
if [ $quick = 1 ]; then
  ctest --test-dir build --output-on-failure -j"$(nproc)" -L quick
  step "ctest -L quick"
  exit 0
fi
seconds=${FUZZ_SECONDS:-20}
# A fixed seed: the same sequence of mutations every run (how far it gets in the time depends on
# the machine), so that CI does not pass or fail by the luck of a random seed.
if [ "$seconds" != 0 ]; then FUZZ_SEED=${FUZZ_SEED:-1} scripts/fuzz.sh "$seconds"; step fuzz; fi
ctest --test-dir build --output-on-failure -j"$(nproc)"
step ctest
if [ "${SANITIZE:-1}" != 0 ]; then scripts/sanitize.sh; step sanitizers; fi
