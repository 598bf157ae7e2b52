#include "artifact/Signing.h"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "kime/format.h"
#include "kime/plan.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"

namespace kime {

namespace {

void startSodium() {
  if (sodium_init() < 0) throw CompileError("libsodium did not start");
}

std::string base64(const uint8_t* data, size_t size) {
  std::string out(sodium_base64_ENCODED_LEN(size, sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), data, size, sodium_base64_VARIANT_ORIGINAL);
  out.resize(std::strlen(out.c_str()));
  return out;
}

// Writes `text` to a new file `path` with `mode`; never replaces one.
void writeNewFile(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    throw CompileError(path + ": " +
                       (errno == EEXIST ? std::string("exists already (a key is never overwritten)")
                                        : std::string("cannot create: ") + std::strerror(errno)));
  const bool written = ::write(fd, text.data(), text.size()) == ssize_t(text.size());
  if (::close(fd) != 0 || !written) {
    ::unlink(path.c_str());
    throw CompileError(path + ": cannot write");
  }
}

}  // namespace

SecretKey readSecretKey(const std::string& path) {
  startSodium();
  std::string text = json::readFile(path);
  while (!text.empty() && std::strchr(" \t\r\n", text.back())) text.pop_back();
  const std::string prefix = kSecretKeyPrefix;
  if (text.compare(0, prefix.size(), prefix) != 0)
    throw CompileError(path + ": not a kime secret key (it does not start with \"" + prefix +
                       "\"; kime-keygen writes them)");
  SecretKey k;
  size_t n = 0;
  const std::string b64 = text.substr(prefix.size());
  if (sodium_base642bin(k.bytes.data(), k.bytes.size(), b64.c_str(), b64.size(), nullptr, &n, nullptr,
                        sodium_base64_VARIANT_ORIGINAL) != 0 ||
      n != k.bytes.size())
    throw CompileError(path + ": the key after \"" + prefix + "\" is not 64 bytes of base64");
  // The second half is the public key; derive it again from the first (the seed) to catch damage.
  std::array<uint8_t, 64> again;
  crypto_sign_seed_keypair(k.publicKey.data(), again.data(), k.bytes.data());
  if (again != k.bytes) throw CompileError(path + ": damaged (its public half does not belong to its secret half)");
  sodium_memzero(again.data(), again.size());
  return k;
}

PublicKey writeKeyPair(const std::string& stem) {
  startSodium();
  SecretKey k;
  crypto_sign_keypair(k.publicKey.data(), k.bytes.data());
  const std::string secretPath = stem + ".key", publicPath = stem + ".pub";
  for (const std::string& p : {secretPath, publicPath})
    if (::access(p.c_str(), F_OK) == 0) throw CompileError(p + ": exists already (a key is never overwritten)");
  std::string secret = kSecretKeyPrefix + base64(k.bytes.data(), k.bytes.size()) + "\n";
  writeNewFile(secretPath, secret, 0600);
  sodium_memzero(secret.data(), secret.size());
  sodium_memzero(k.bytes.data(), k.bytes.size());
  writeNewFile(publicPath, publicKeyText(k.publicKey) + "\n", 0644);
  return k.publicKey;
}

void signSections(std::vector<Section>& sections, const SecretKey& key) {
  startSodium();
  sections.erase(std::remove_if(sections.begin(), sections.end(),
                                [](const Section& s) { return s.name == KIME_SECTION_SIGNATURE; }),
                 sections.end());
  kime_signature_header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, KIME_SIGNATURE_MAGIC, KIME_MAGIC_SIZE);
  h.algorithm = KIME_SIGNATURE_ED25519;
  h.section_count = uint32_t(sections.size());
  std::memcpy(h.public_key, key.publicKey.data(), sizeof h.public_key);
  std::string payload(reinterpret_cast<const char*>(&h), sizeof h);
  for (const Section& s : sections) {
    kime_signed_section e;
    std::memset(&e, 0, sizeof e);
    std::memcpy(e.name, s.name.data(), std::min(s.name.size(), size_t(KIME_SECTION_NAME_SIZE - 1)));
    const SectionHash hash = sectionHash(reinterpret_cast<const uint8_t*>(s.bytes.data()), s.bytes.size());
    std::memcpy(e.hash, hash.data(), hash.size());
    payload.append(reinterpret_cast<const char*>(&e), sizeof e);
  }
  sections.push_back({KIME_SECTION_SIGNATURE, payload});

  // The signature does not change the layout (its size is fixed): sign the bytes as laid out.
  const std::string bytes = buildArtifact(sections);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  std::vector<SectionInfo> table;
  if (auto why = readContainer(data, bytes.size(), table)) throw CompileError("signing: " + *why);
  const std::string m = signedMessage(data, table, table.back());
  crypto_sign_detached(h.signature, nullptr, reinterpret_cast<const uint8_t*>(m.data()), m.size(), key.bytes.data());
  std::memcpy(sections.back().bytes.data() + offsetof(kime_signature_header, signature), h.signature,
              sizeof h.signature);
}

}  // namespace kime
