#!/usr/bin/env bash
# Set-up, build and every test (gtest and lit, through ctest). What CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)"
