#!/usr/bin/env bash
# Proves on the built runtime library that it holds no LLVM, MLIR or Halide code and needs
# nothing of theirs at load time, and prints its size (stripped and as built).
# Usage: check-runtime-library.sh LIBRARY [NM] [STRIP]
set -euo pipefail
lib=$1 nm=${2:-nm} strip=${3:-strip}
bad=$("$nm" -C "$lib" | grep -E 'llvm::|mlir::|Halide::|halide_|LLVM' || true)
if [ -n "$bad" ]; then
  echo "FAIL: $lib holds compiler symbols:"; echo "$bad" | head -20; exit 1
fi
needed=$(readelf -d "$lib" | grep NEEDED || true)
if echo "$needed" | grep -qiE 'llvm|mlir|halide|cuda'; then
  echo "FAIL: $lib needs a compiler library:"; echo "$needed"; exit 1
fi
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
"$strip" -o "$tmp" "$lib"
echo "$lib: no LLVM/MLIR/Halide symbols; needs: $(echo "$needed" | sed -E 's/.*\[(.*)\]/\1/' | tr '\n' ' ')"
echo "size: $(stat -c %s "$lib") bytes as built, $(stat -c %s "$tmp") bytes stripped"
