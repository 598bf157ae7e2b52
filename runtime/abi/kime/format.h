/* kime artifact format (its version, KIME_FORMAT_VERSION, and the section names are plan.h's):
 * the one header both the writer (compiler/artifact) and the reader (runtime) include, so the two
 * cannot drift. C-compatible, no dependencies.
 *
 * Layout of a `.kime` file (all integers little endian):
 *
 *   [kime_file_header]                          at offset 0
 *   [kime_section_entry x section_count]        at header.section_table_offset
 *   [section payloads]                          each at a multiple of KIME_SECTION_ALIGN
 *
 * Sections, by name:
 *   "manifest"              JSON: graph signature, stages, buckets, per-bucket plans (UTF-8)
 *   "weights.cpu"           pre-packed weights in the layouts the CPU kernels read: f32, and
 *                           with --cpu-precision bf16 the linears' in bf16, with int8 the
 *                           linears' and the token table's in i8 beside their f32 scales (the
 *                           manifest's "dtype" of each weight; f32 where it has none)
 *   "code.cpu.<target>"     an ELF shared object of the kernels for one CPU target, with one
 *                           Halide runtime inside: x86-64-avx2, x86-64-avx512, arm-64,
 *                           arm-64-dotprod, x86-64-avx512bf16, x86-64-avx512vnni
 *   "signature"             optional: an Ed25519 signature over all the rest (below)
 *
 * A reader refuses a wrong magic, a newer version, a section outside the file, or a checksum that
 * does not match (kime_checksum over the payload); given trusted keys, also an artifact whose
 * signature section is missing, by another key, or does not match (docs/signing.md).
 *
 * Kernels are called through their `<name>_argv(void** args)` entry: one pointer per argument, in
 * plan order, each to a kime_kernel_buffer. kime_kernel_buffer mirrors Halide's halide_buffer_t
 * byte for byte (the compiler checks this with static_asserts against Halide's own header), so
 * the runtime needs no Halide header to call the kernels. */
#ifndef KIME_FORMAT_H
#define KIME_FORMAT_H

#include <stdint.h>

#include "kime/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KIME_MAGIC "KIMEART1"
#define KIME_MAGIC_SIZE 8
#define KIME_SECTION_ALIGN 4096u
#define KIME_SECTION_NAME_SIZE 48

typedef struct kime_file_header {
  char magic[KIME_MAGIC_SIZE]; /* KIME_MAGIC, not NUL terminated */
  uint32_t version;            /* KIME_FORMAT_VERSION of the writer */
  uint32_t section_count;
  uint64_t section_table_offset; /* bytes from the start of the file */
  uint64_t file_size;            /* the whole file, to catch truncation */
  uint64_t reserved[4];          /* zero */
} kime_file_header;

typedef struct kime_section_entry {
  char name[KIME_SECTION_NAME_SIZE]; /* NUL terminated, NUL padded */
  uint64_t offset;                   /* bytes from the start of the file; KIME_SECTION_ALIGN aligned */
  uint64_t size;                     /* payload bytes */
  uint64_t checksum;                 /* kime_checksum(payload, size) */
} kime_section_entry;

/* A 64-bit checksum of `size` bytes: FNV-1a over 8-byte little-endian words, then the tail byte
 * by byte. Fast enough to check weights at load; not cryptographic. */
static inline uint64_t kime_checksum(const void* data, uint64_t size) {
  const uint8_t* p = (const uint8_t*)data;
  uint64_t h = 1469598103934665603ull;
  uint64_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w = 0;
    for (int b = 7; b >= 0; --b) w = (w << 8) | p[i + (uint64_t)b];
    h = (h ^ w) * 1099511628211ull;
  }
  for (; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* The signature section (KIME_SECTION_SIGNATURE): a kime_signature_header, then one
 * kime_signed_section per other section of the artifact, in section-table order, each with the
 * BLAKE2b-256 hash of its payload. The signature is Ed25519 (RFC 8032) over the signed message:
 *   KIME_SIGNATURE_DOMAIN (with its NUL)
 *   the file header (64 bytes, as in the file)
 *   the section table, with every checksum zeroed (each is a function of its payload, which the
 *   hashes cover; the signature section's depends on the signature)
 *   the signature section's payload, with its `signature` zeroed
 * Every byte of the file is in that message or hashed by it (the container check makes all padding
 * zero), so a signed artifact changed anywhere no longer verifies. kime_checksum is no part of it:
 * it is not collision resistant. */
#define KIME_SIGNATURE_MAGIC "KIMESIG1"
#define KIME_SIGNATURE_DOMAIN "kime artifact signature 1"
#define KIME_SIGNATURE_ED25519 1u /* the only algorithm: Ed25519, BLAKE2b-256 section hashes */

typedef struct kime_signature_header {
  char magic[KIME_MAGIC_SIZE]; /* KIME_SIGNATURE_MAGIC, not NUL terminated */
  uint32_t algorithm;          /* KIME_SIGNATURE_ED25519 */
  uint32_t section_count;      /* the kime_signed_section entries that follow */
  uint8_t public_key[32];      /* the signer's Ed25519 public key */
  uint8_t signature[64];
} kime_signature_header;

typedef struct kime_signed_section {
  char name[KIME_SECTION_NAME_SIZE]; /* as in the section table */
  uint8_t hash[32];                  /* BLAKE2b-256 of the payload */
} kime_signed_section;

/* The kernel ABI: Halide's buffer, spelled out. */
typedef struct kime_kernel_dimension {
  int32_t min, extent, stride;
  uint32_t flags;
} kime_kernel_dimension;

typedef struct kime_kernel_type {
  uint8_t code; /* 0 int, 1 uint, 2 float */
  uint8_t bits;
  uint16_t lanes;
} kime_kernel_type;

typedef struct kime_kernel_buffer {
  uint64_t device;
  const void* device_interface;
  uint8_t* host;
  uint64_t flags;
  kime_kernel_type type;
  int32_t dimensions;
  kime_kernel_dimension* dim;
  void* padding;
} kime_kernel_buffer;

typedef int (*kime_kernel_argv_fn)(void** args);

#ifdef __cplusplus
}
#endif

#endif /* KIME_FORMAT_H */
