#!/usr/bin/env bash
# Formats every C and C++ file git tracks with clang-format 19 and the tree's .clang-format.
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   change nothing; list each file that is not formatted, exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=${CLANG_FORMAT:-clang-format-19}
command -v "$fmt" > /dev/null || { echo "format: $fmt not found (Debian package clang-format-19; scripts/setup.sh installs it)" >&2; exit 2; }
# Tracked files and new ones git does not ignore (so a file is checked before its first commit).
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cpp')
if [ "${1:-}" = --check ]; then
  bad=0
  for f in "${files[@]}"; do
    "$fmt" --style=file --dry-run --Werror "$f" > /dev/null 2>&1 || { echo "not formatted: $f"; bad=1; }
  done
  exit $bad
fi
"$fmt" --style=file -i "${files[@]}"
