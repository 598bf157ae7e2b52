// Signed artifacts: libsodium's Ed25519 and BLAKE2b, nothing written by hand.
#include "kime/signature.h"

#include <sodium.h>

#include <cstddef>
#include <cstring>

#include "kime/format.h"
#include "kime/plan.h"

namespace kime {

namespace {

bool sodiumReady() {
  static const bool ready = sodium_init() >= 0;  // thread-safe, idempotent
  return ready;
}

const SectionInfo* signatureSection(const std::vector<SectionInfo>& sections) {
  for (const SectionInfo& s : sections)
    if (s.name == KIME_SECTION_SIGNATURE) return &s;
  return nullptr;
}

// The signature section's header and entries, checked against the section table: one entry per
// other section, in table order.
std::optional<std::string> readSignature(const uint8_t* data, const std::vector<SectionInfo>& sections,
                                         const SectionInfo& sig, kime_signature_header& h,
                                         std::vector<kime_signed_section>& entries) {
  if (sig.size < sizeof h) return "its signature section has " + std::to_string(sig.size) + " bytes, too few";
  std::memcpy(&h, data + sig.offset, sizeof h);
  if (std::memcmp(h.magic, KIME_SIGNATURE_MAGIC, KIME_MAGIC_SIZE) != 0) return "its signature section has a bad magic";
  if (h.algorithm != KIME_SIGNATURE_ED25519)
    return "its signature uses algorithm " + std::to_string(h.algorithm) + ", which this runtime does not know";
  if (h.section_count != sections.size() - 1 || sig.size != sizeof h + h.section_count * sizeof(kime_signed_section))
    return "its signature section lists " + std::to_string(h.section_count) + " sections, and the artifact has " +
           std::to_string(sections.size() - 1) + " others";
  entries.resize(h.section_count);
  std::memcpy(entries.data(), data + sig.offset + sizeof h, entries.size() * sizeof(kime_signed_section));
  size_t e = 0;
  for (const SectionInfo& s : sections) {
    if (&s == &sig) continue;
    const kime_signed_section& entry = entries[e++];
    if (std::strncmp(entry.name, s.name.c_str(), KIME_SECTION_NAME_SIZE) != 0)
      return "its signature section does not list section \"" + s.name + "\" in its place";
  }
  return std::nullopt;
}

std::string trustedList(const std::vector<PublicKey>& trusted) {
  std::string s;
  for (const PublicKey& k : trusted) s += (s.empty() ? "" : ", ") + keyId(k);
  return s;
}

}  // namespace

std::optional<std::string> parsePublicKey(const std::string& text, PublicKey& key) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  const size_t last = text.find_last_not_of(" \t\r\n");
  const std::string line = first == std::string::npos ? "" : text.substr(first, last - first + 1);
  const std::string prefix = kPublicKeyPrefix;
  if (line.compare(0, prefix.size(), prefix) != 0)
    return "not a kime public key (it does not start with \"" + prefix + "\"; kime-keygen writes them)";
  const std::string b64 = line.substr(prefix.size());
  size_t n = 0;
  if (!sodiumReady() ||
      sodium_base642bin(key.data(), key.size(), b64.c_str(), b64.size(), nullptr, &n, nullptr,
                        sodium_base64_VARIANT_ORIGINAL) != 0 ||
      n != key.size())
    return "the key after \"" + prefix + "\" is not 32 bytes of base64";
  return std::nullopt;
}

std::string publicKeyText(const PublicKey& key) {
  char b64[sodium_base64_ENCODED_LEN(32, sodium_base64_VARIANT_ORIGINAL)];
  sodium_bin2base64(b64, sizeof b64, key.data(), key.size(), sodium_base64_VARIANT_ORIGINAL);
  return kPublicKeyPrefix + std::string(b64);
}

std::string keyId(const PublicKey& key) {
  uint8_t h[8];
  crypto_generichash(h, sizeof h, key.data(), key.size(), nullptr, 0);
  char hex[2 * sizeof h + 1];
  sodium_bin2hex(hex, sizeof hex, h, sizeof h);
  return hex;
}

SectionHash sectionHash(const uint8_t* data, uint64_t size) {
  SectionHash h;
  sodiumReady();
  crypto_generichash(h.data(), h.size(), data, size, nullptr, 0);
  return h;
}

std::string signedMessage(const uint8_t* data, const std::vector<SectionInfo>& sections, const SectionInfo& signature) {
  kime_file_header h;
  std::memcpy(&h, data, sizeof h);
  std::string m(KIME_SIGNATURE_DOMAIN, sizeof KIME_SIGNATURE_DOMAIN);  // with its NUL
  m.append(reinterpret_cast<const char*>(data), sizeof h);
  const size_t tableAt = m.size();
  m.append(reinterpret_cast<const char*>(data + h.section_table_offset), sections.size() * sizeof(kime_section_entry));
  for (size_t i = 0; i < sections.size(); ++i)
    std::memset(&m[tableAt + i * sizeof(kime_section_entry) + offsetof(kime_section_entry, checksum)], 0,
                sizeof(uint64_t));
  const size_t payloadAt = m.size();
  m.append(reinterpret_cast<const char*>(data + signature.offset), signature.size);
  if (signature.size >= sizeof(kime_signature_header))
    std::memset(&m[payloadAt + offsetof(kime_signature_header, signature)], 0,
                sizeof(kime_signature_header::signature));
  return m;
}

std::optional<PublicKey> signerOf(const uint8_t* data, const std::vector<SectionInfo>& sections) {
  const SectionInfo* sig = signatureSection(sections);
  kime_signature_header h;
  std::vector<kime_signed_section> entries;
  if (!sig || readSignature(data, sections, *sig, h, entries)) return std::nullopt;
  PublicKey k;
  std::memcpy(k.data(), h.public_key, k.size());
  return k;
}

std::optional<std::string> checkSignature(const uint8_t* data, const std::vector<SectionInfo>& sections,
                                          const std::vector<PublicKey>& trusted) {
  if (!sodiumReady()) return std::string("cannot check its signature: libsodium did not start");
  const SectionInfo* sig = signatureSection(sections);
  if (!sig)
    return "is not signed, and only artifacts signed by key" + std::string(trusted.size() > 1 ? "s " : " ") +
           trustedList(trusted) + " are trusted (kime-sign signs it)";
  kime_signature_header h;
  std::vector<kime_signed_section> entries;
  if (auto why = readSignature(data, sections, *sig, h, entries)) return why;
  PublicKey signer;
  std::memcpy(signer.data(), h.public_key, signer.size());
  bool known = false;
  for (const PublicKey& k : trusted) known = known || k == signer;
  if (!known)
    return "is signed by key " + keyId(signer) + ", which is not trusted (trusted: " + trustedList(trusted) + ")";
  const std::string m = signedMessage(data, sections, *sig);
  if (crypto_sign_verify_detached(h.signature, reinterpret_cast<const uint8_t*>(m.data()), m.size(), h.public_key) != 0)
    return "its signature by key " + keyId(signer) +
           " does not match its header, section table or signature section (changed after signing)";
  size_t e = 0;
  for (const SectionInfo& s : sections) {
    if (&s == sig) continue;
    const SectionHash got = sectionHash(data + s.offset, s.size);
    if (std::memcmp(got.data(), entries[e++].hash, got.size()) != 0)
      return "section \"" + s.name + "\" differs from what key " + keyId(signer) + " signed (changed after signing)";
  }
  return std::nullopt;
}

}  // namespace kime
