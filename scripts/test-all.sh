#!/usr/bin/env bash
# Set-up, build, every fuzz target for a short budget (FUZZ_SECONDS, default 30 each; 0 leaves
# them out), then every test (gtest and lit, through ctest, whose summary closes the output).
# What CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
seconds=${FUZZ_SECONDS:-30}
if [ "$seconds" != 0 ]; then scripts/fuzz.sh "$seconds"; fi
ctest --test-dir build --output-on-failure -j"$(nproc)"
