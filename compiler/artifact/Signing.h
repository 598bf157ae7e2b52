// Signing artifacts (runtime/include/kime/signature.h says what is signed and how it is checked):
// key pairs, secret key files, and the signature section. libsodium's Ed25519.
#ifndef KIME_ARTIFACT_SIGNING_H
#define KIME_ARTIFACT_SIGNING_H

#include <array>
#include <string>
#include <vector>

#include "ArtifactWriter.h"
#include "kime/signature.h"

namespace kime {

struct SecretKey {
  std::array<uint8_t, 64> bytes;  // libsodium's: the seed, then the public key
  PublicKey publicKey;
};

// The key in a secret key file (kime-keygen's). Throws CompileError naming the file and what is
// wrong with it (not a key, damaged: its two halves do not belong together).
SecretKey readSecretKey(const std::string& path);

// A new key pair: `stem`.key (the secret key, readable by its owner only) and `stem`.pub. Refuses
// (CompileError) when either file exists: a key is never overwritten. Returns the public key.
PublicKey writeKeyPair(const std::string& stem);

// Replaces the signature section of `sections` (adds one where there is none, last) with `key`'s
// signature over the artifact those sections make (buildArtifact).
void signSections(std::vector<Section>& sections, const SecretKey& key);

}  // namespace kime

#endif  // KIME_ARTIFACT_SIGNING_H
