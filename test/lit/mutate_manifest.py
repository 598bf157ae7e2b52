"""Damages an artifact's plan in its manifest, in place, keeping the section's length, and fixes up
the section's checksum (format.h's kime_checksum) so that only the plan checks can tell:
  --slot   renames the first kernel's second slot ("tokseq" -> "tokseX"),
  --dtype  makes the first u32 argument of a step i32,
  --kernel points the first step at kernel 1 (another class, other slots).
Usage: mutate_manifest.py ARTIFACT --slot|--dtype|--kernel"""
import re
import sys

from mutate_selftest import find_section, replace_section

path, mode = sys.argv[1], sys.argv[2]
art = bytearray(open(path, "rb").read())
entry, offset, size = find_section(art, b"manifest")
section = bytes(art[offset:offset + size])
if mode == "--slot":
    section = section.replace(b'"tokseq"', b'"tokseX"', 1)
elif mode == "--dtype":
    steps = section.index(b'"steps"')
    section = section[:steps] + re.sub(rb'("dtype":\s*)"u32"', rb'\1"i32"', section[steps:], count=1)
elif mode == "--kernel":
    section = re.sub(rb'("kernel":\s*)0([,}])', rb'\g<1>1\2', section, count=1)
else:
    sys.exit("unknown mode " + mode)
assert len(section) == size
replace_section(path, art, entry, offset, section)
print("damaged: " + mode[2:])
