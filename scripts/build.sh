#!/usr/bin/env bash
# Configures and builds kime (Release, Ninja) into build/. Installs nothing: scripts/setup.sh
# does (the README's two commands run it first). Extra arguments go to CMake's configure, e.g.
# -DKIME_WITH_CUDA=OFF or -DKIME_WERROR=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build -j"$(nproc)"
