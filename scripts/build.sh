#!/usr/bin/env bash
# Configures and builds kime (Release, Ninja) into build/ after installing what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
