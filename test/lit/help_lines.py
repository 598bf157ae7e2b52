"""Reads a tool's --help on stdin; fails when it has more than MAX lines or mentions LLVM's own
options (AMDGPU, Polly, debugify), which every tool hides."""
import sys

limit = int(sys.argv[1])
text = sys.stdin.read()
lines = text.splitlines()
for foreign in ("amdgpu", "polly", "debugify"):
    if foreign in text.lower():
        sys.exit(f"--help shows LLVM's own options ({foreign})")
if len(lines) > limit:
    sys.exit(f"--help has {len(lines)} lines, more than {limit}")
print(f"{len(lines)} lines")
