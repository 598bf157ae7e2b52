"""Changes a signed artifact as someone who wants it loaded would: one byte of a section, with the
section's checksum (format.h's kime_checksum) fixed up so that the container check passes and
only the signature can tell. In place.
  tamper.py ARTIFACT SECTION [AT]   adds 1 to byte AT (default: the middle) of SECTION's payload
  tamper.py ARTIFACT --swap         swaps the first two section-table entries (a valid table)"""
import struct
import sys

MASK = (1 << 64) - 1


def checksum(data):
    """format.h's kime_checksum."""
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


path, what = sys.argv[1], sys.argv[2]
art = bytearray(open(path, "rb").read())
if what == "--swap":
    _, _, count, table, _ = struct.unpack_from("<8sIIQQ", art, 0)
    first, second = bytes(art[table:table + 72]), bytes(art[table + 72:table + 144])
    art[table:table + 144] = second + first
    open(path, "wb").write(art)
    print("swapped the first two sections")
    sys.exit(0)
entry, offset, size = find_section(art, what.encode())
at = int(sys.argv[3]) if len(sys.argv) > 3 else size // 2
section = bytearray(art[offset:offset + size])
section[at] = (section[at] + 1) % 256
replace_section(path, art, entry, offset, bytes(section))
print("changed byte %d of %s" % (at, what))
