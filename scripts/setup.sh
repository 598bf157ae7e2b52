#!/usr/bin/env bash
# Installs every Debian package the build and the tests need. Idempotent: packages already
# present are skipped, so re-running it costs a few dpkg queries.
set -euo pipefail
PKGS=(cmake ninja-build g++ python3 lld-19
      llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
      libhalide14-0-dev nlohmann-json3-dev libgtest-dev libgmock-dev
      g++-aarch64-linux-gnu libc6-arm64-cross qemu-user
      clang-19 clang-format-19 libfuzzer-19-dev libclang-rt-19-dev pkg-config
      pybind11-dev python3-dev python3-numpy python3-pytest
      libonnx-dev libprotobuf-dev protobuf-compiler python3-torch python3-onnx
      flatbuffers-compiler libflatbuffers-dev python3-distributed python3-dask python3-tqdm
      libsodium-dev libsodium-dev:arm64)
# libonnx-dev, libprotobuf-dev: kime-import reads ONNX; python3-torch, python3-onnx: the tests export
# PyTorch models to import (test/onnx). flatbuffers-compiler, libflatbuffers-dev: the artifact's
# sections are written and read through their schemas (runtime/schema). python3-distributed,
# python3-dask, python3-tqdm: kime.dask and kime-score (a dask.distributed cluster).
# libsodium-dev:arm64 (the AArch64 runtime's libsodium.a) is Debian's arm64 package: multiarch.
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "setup: adding the arm64 architecture (for libsodium-dev:arm64)"
  $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
# CUDA 13 (NVRTC, ptxas) is not a Debian package: where it is installed the compiler also makes PTX.
if command -v ptxas > /dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then
  echo "setup: CUDA Toolkit found: the compiler will make PTX too"
else
  echo "setup: no CUDA Toolkit (ptxas) found: the compiler will make CPU code only (KIME_WITH_CUDA=AUTO)"
fi
