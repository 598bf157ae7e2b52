#!/usr/bin/env bash
# The runtime under sanitizers, as CI runs it:
#   scripts/sanitize.sh [SANITIZERS...]     default: address,undefined thread
# For each: a runtime-only build (-DKIME_BUILD_COMPILER=OFF -DKIME_SANITIZE=...) in
# build-san-<name>/, then
#   - the runtime's gtests (batch checks, the ELF loader, the pool, staging) and the artifact tests
#     (executors on four threads at once and one handed between threads, 3200 batches bit-identical
#     to one thread; both kernel loaders; artifacts opened from memory), on the example model
#     compiled by the normal build;
#   - with address: the whole lit suite with that sanitized kime-run in place of the normal one
#     (every kime-run call: batch files, bad inputs, --inspect, --bench, --cpu-target, the golden
#     cases), beside the normal build's compiler (and its kime-run --reference, which a runtime-only
#     build lacks). Three lit tests check allocation counts, which a sanitizer's malloc hides: they
#     say UNSUPPORTED: sanitized.
# Halide's kernels are machine code made by the compiler and are not instrumented; every call into
# them goes through the instrumented runtime, which checks each buffer it passes (its extent
# within the arena or the weights) before the call.
# `KIME_SANITIZE_FULL=1 scripts/sanitize.sh address,undefined` builds everything (compiler too)
# sanitized in build-san-full/ and runs all of ctest but the ZeroAlloc gtests and
# embed-from-install (not in CI: it takes longer than CI's budget on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizers=("$@")
[ ${#sanitizers[@]} -gt 0 ] || sanitizers=(address,undefined thread)
scripts/build.sh > /dev/null
(cd build && ctest -R '^make-test-artifact$' --output-on-failure > /dev/null)
export KIME_TEST_ARTIFACT=$PWD/build/test-artifacts/runtime/small.kime
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

for san in "${sanitizers[@]}"; do
  dir=build-san-${san//,/-}
  if [ "${KIME_SANITIZE_FULL:-0}" = 1 ]; then
    dir=build-san-full
    echo "== $san: everything in $dir, then ctest"
    cmake -G Ninja -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKIME_SANITIZE="$san" > /dev/null
    cmake --build "$dir" -j"$(nproc)" > "$dir/build.log" 2>&1 || { tail -40 "$dir/build.log"; exit 1; }
    # embed-from-install links the sanitized libkime into an example built without the sanitizer.
    ctest --test-dir "$dir" --output-on-failure -j"$(nproc)" -E 'ZeroAlloc|embed-from-install'
    continue
  fi
  echo "== $san: runtime-only build in $dir"
  cmake -G Ninja -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKIME_BUILD_COMPILER=OFF \
    -DKIME_SANITIZE="$san" > /dev/null
  cmake --build "$dir" -j"$(nproc)" --target kime-run kime-runtime-tests kime-artifact-tests > "$dir/build.log" 2>&1 ||
    { tail -40 "$dir/build.log"; exit 1; }
  "$dir/bin/kime-runtime-tests" --gtest_brief=1
  "$dir/bin/kime-artifact-tests" --gtest_brief=1
  if [[ $san == *address* ]]; then
    echo "== $san: the lit suite through $dir/bin/kime-run"
    tools=$dir/lit-tools
    rm -rf "$tools" && mkdir -p "$tools"
    for t in build/bin/*; do ln -s "$PWD/$t" "$tools/"; done
    # A runtime-only kime-run has no reference evaluator: --reference goes to the normal build's.
    rm "$tools/kime-run"
    printf '#!/bin/sh\ncase " $* " in *" --reference "*) exec "%s" "$@";; esac\nexec "%s" "$@"\n' \
      "$PWD/build/bin/kime-run" "$PWD/$dir/bin/kime-run" > "$tools/kime-run"
    chmod +x "$tools/kime-run"
    lit=$(sed -n 's/^KIME_LIT:FILEPATH=//p' build/CMakeCache.txt)
    python3 "$lit" -s build/test/lit --param kime_tools_dir="$PWD/$tools" \
      --param sanitized=1
  fi
done
echo "sanitizers: ${sanitizers[*]}: all passed"
