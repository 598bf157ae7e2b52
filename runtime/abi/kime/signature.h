// Signed artifacts (format.h's signature section): public keys as text, the signed message, and
// the check the runtime makes when it is given trusted keys. The signer (kime-compile --sign,
// kime-sign) builds its message with the same signedMessage, so the two cannot drift.
#ifndef KIME_SIGNATURE_H
#define KIME_SIGNATURE_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kime/container.h"

namespace kime {

using PublicKey = std::array<uint8_t, 32>;
using SectionHash = std::array<uint8_t, 32>;

// Key files are one line of text: this prefix, then the key in base64 (kime-keygen writes them).
constexpr const char* kPublicKeyPrefix = "kime-ed25519-public ";
constexpr const char* kSecretKeyPrefix = "kime-ed25519-secret ";

// The key in `text` (a .pub file's contents; surrounding white space is ignored), or why it is
// none ("not a kime public key (it does not start with ...)", "... is not 32 bytes of base64").
std::optional<std::string> parsePublicKey(const std::string& text, PublicKey& key);
// The key as a .pub file's line (without a newline).
std::string publicKeyText(const PublicKey& key);
// A short name for people: 16 hex digits of the key's BLAKE2b hash.
std::string keyId(const PublicKey& key);

// BLAKE2b-256 of a section's payload.
SectionHash sectionHash(const uint8_t* data, uint64_t size);

// The message an artifact's signature signs (format.h), for the artifact of `size` bytes at `data`
// whose container readContainer checked into `sections`; `signature` is one of them.
std::string signedMessage(const uint8_t* data, const std::vector<SectionInfo>& sections, const SectionInfo& signature);

// Who signed the artifact: its key, or why it cannot be said (unsigned, a malformed signature
// section). Checks nothing against the content: for --inspect.
std::optional<PublicKey> signerOf(const uint8_t* data, const std::vector<SectionInfo>& sections);

// With `trusted` keys: nothing when the artifact is signed by one of them and every signed byte is
// as signed; else why not, worded after "PATH: " ("is not signed, and ...", "is signed by key X,
// which is not trusted ...", "section "code.cpu.x86-64-avx2" differs from what key X signed").
// Call it after readContainer and before anything of the artifact is read or loaded.
std::optional<std::string> checkSignature(const uint8_t* data, const std::vector<SectionInfo>& sections,
                                          const std::vector<PublicKey>& trusted);

}  // namespace kime

#endif  // KIME_SIGNATURE_H
