#!/usr/bin/env bash
# Proves on the built runtime library that it holds no LLVM, MLIR or Halide code and needs
# nothing of theirs at load time, that it links no JSON library and no FlatBuffers parser (its
# sections are read through their schemas' generated code), and that it is at most 600 KB
# stripped; prints its size (stripped and as built).
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
unused=$("$nm" -C "$lib" | grep -E 'nlohmann|flatbuffers::Parser' || true)
if [ -n "$unused" ]; then
  echo "FAIL: $lib links a JSON library or a schema parser:"; echo "$unused" | head -20; exit 1
fi
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT
"$strip" -o "$tmp" "$lib"
limit=$((600 * 1024))
if [ "$(stat -c %s "$tmp")" -gt "$limit" ]; then
  echo "FAIL: $lib is $(stat -c %s "$tmp") bytes stripped, past $limit"; exit 1
fi
echo "$lib: no LLVM/MLIR/Halide symbols; needs: $(echo "$needed" | sed -E 's/.*\[(.*)\]/\1/' | tr '\n' ' ')"
echo "size: $(stat -c %s "$lib") bytes as built, $(stat -c %s "$tmp") bytes stripped"
