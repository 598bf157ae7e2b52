#!/usr/bin/env bash
# The GPU check: kime's CUDA backend against the reference on every bucket, then timed beside
# PyTorch (CUDA graphs) on the same model and batches. Two halves, because the GPU machine has
# CUDA and PyTorch but not MLIR or Halide:
#
#   scripts/gpu-check.sh prepare [BUNDLE]   here (the build host): builds kime, compiles the small
#                                           model for the GPU buckets (x86-64 code + sm_80/sm_90
#                                           PTX), writes batches and their f64 reference outputs
#                                           and checks them on the CPU runtime first
#   scripts/gpu-check.sh run [BUNDLE]       on the GPU machine: builds the runtime and kime-run,
#                                           runs every batch on the GPU against the reference,
#                                           checks warm runs allocate nothing, then benchmarks
#                                           kime and PyTorch; prints one table
#
# BUNDLE defaults to gpu-bundle/ (ignored by git; about 45 MB, carried to the GPU machine).
# The PyTorch peer (kept outside this repository) comes from KIME_PEERS_SRC=DIR: `prepare` copies
# DIR/kime_padded.py (the model in PyTorch on padded batches) and DIR/safetensors_io.py into the
# bundle; without it the check runs kime alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-}
bundle=$(realpath -m "${2:-$root/gpu-bundle}")

case "$what" in
  prepare)
    "$root/scripts/build.sh" > /dev/null
    mkdir -p "$bundle/peer" "$bundle/nlohmann/include" "$bundle/nlohmann/share/cmake"
    if [ -n "${KIME_PEERS_SRC:-}" ]; then
      cp "$KIME_PEERS_SRC/kime_padded.py" "$KIME_PEERS_SRC/safetensors_io.py" "$bundle/peer/"
    else
      echo "gpu-check: no KIME_PEERS_SRC: kime is checked and timed without the PyTorch peer"
    fi
    # nlohmann/json (header-only) for the runtime build there, with its CMake package.
    cp -r /usr/include/nlohmann "$bundle/nlohmann/include/"
    cp -r /usr/share/cmake/nlohmann_json "$bundle/nlohmann/share/cmake/"
    python3 "$root/scripts/gpu_check.py" prepare "$bundle" "$root"
    ;;
  run)
    [ -f "$bundle/cases.json" ] || { echo "gpu-check: no bundle at $bundle (run 'prepare' on the build host)"; exit 2; }
    command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    echo "== building the runtime and kime-run"
    cmake -G Ninja -S "$root" -B "$root/build-gpu" -DKIME_BUILD_COMPILER=OFF -DKIME_BUILD_TESTS=OFF \
      -DCMAKE_BUILD_TYPE=Release -Dnlohmann_json_DIR="$bundle/nlohmann/share/cmake/nlohmann_json" > /dev/null
    cmake --build "$root/build-gpu" -j"$(nproc)" > /dev/null
    python3 "$root/scripts/gpu_check.py" run "$bundle" "$root/build-gpu/bin/kime-run"
    ;;
  *)
    sed -n '2,16p' "$0"
    exit 2
    ;;
esac
