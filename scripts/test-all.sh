#!/usr/bin/env bash
# Set-up, build and every test (gtest and lit, through ctest), then every fuzz target for a
# short budget (FUZZ_SECONDS, default 30 each; 0 leaves them out). What CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
seconds=${FUZZ_SECONDS:-30}
if [ "$seconds" != 0 ]; then scripts/fuzz.sh "$seconds"; fi
