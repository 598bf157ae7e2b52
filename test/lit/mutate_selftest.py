"""Changes one reference output in an artifact's self-test section, in place, and fixes up the
section's checksum (format.h's kime_checksum), so that the artifact still opens and only the
self-test can tell. Changes the first digit of the first logit of the first case with logits,
by 5 (0.0123 -> 5.0123), keeping the section's length, and prints that case's stage and bucket;
with --rename-cases, renames the section's "cases" key to "casez" (a malformed section).
Usage: mutate_selftest.py ARTIFACT [--rename-cases]"""
import json
import re
import struct
import sys

MASK = (1 << 64) - 1


def checksum(data):
    h = 1469598103934665603
    full = len(data) // 8 * 8
    for (w,) in struct.iter_unpack("<Q", data[:full]):
        h = ((h ^ w) * 1099511628211) & MASK
    for b in data[full:]:
        h = ((h ^ b) * 1099511628211) & MASK
    return h


def find_section(art, wanted):
    """The section table entry, offset and size of section `wanted` (bytes) of artifact `art`."""
    _, _, count, table, _ = struct.unpack_from("<8sIIQQ", art, 0)
    for i in range(count):
        entry = table + i * 72
        name, offset, size, _ = struct.unpack_from("<48sQQQ", art, entry)
        if name.rstrip(b"\0") == wanted:
            return entry, offset, size
    sys.exit("no " + wanted.decode() + " section")


def replace_section(path, art, entry, offset, section):
    """Writes `section` (of the same length) in place of the old one, with its checksum."""
    art[offset:offset + len(section)] = section
    struct.pack_into("<Q", art, entry + 64, checksum(bytes(section)))
    open(path, "wb").write(art)


def main():
    path = sys.argv[1]
    art = bytearray(open(path, "rb").read())
    entry, offset, size = find_section(art, b"selftest")
    section = art[offset:offset + size]
    cases = json.loads(section)["cases"]
    if "--rename-cases" in sys.argv:
        at = section.index(b'"cases"')
        section[at:at + 7] = b'"casez"'
    else:
        k = next(i for i, c in enumerate(cases) if c["logits"])
        at = [m.end() for m in re.finditer(rb'"logits":\[-?', section)][k]
        section[at] = ord("0") + (section[at] - ord("0") + 5) % 10
    replace_section(path, art, entry, offset, section)
    print("renamed: cases" if "--rename-cases" in sys.argv else f"mutated: stage {cases[k]['stage']} bucket {cases[k]['bucket']}")


if __name__ == "__main__":
    main()
