#include "TestArtifact.h"

#include "kime/format.h"

#include <sys/stat.h>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace kime::test {

const std::string& testArtifact() {
  static const std::string path = [] {
    const char* p = std::getenv("KIME_TEST_ARTIFACT");
    struct stat st{};
    if (!p || !*p || stat(p, &st) != 0)
      throw std::runtime_error(std::string("KIME_TEST_ARTIFACT names no artifact (") + (p ? p : "unset") +
                               "): ctest's make-test-artifact writes build/test-artifacts/runtime/small.kime");
    return std::string(p);
  }();
  return path;
}

std::string besideTestArtifact(const std::string& name) {
  const std::string& a = testArtifact();
  return a.substr(0, a.find_last_of('/') + 1) + name;
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read (ctest's make-test-artifact writes it)");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int rewriteSections(std::string& bytes, const std::string& prefix,
                    const std::function<void(char* payload, uint64_t size)>& change) {
  kime_file_header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  int changed = 0;
  for (uint32_t i = 0; i < h.section_count; ++i) {
    char* entryAt = bytes.data() + h.section_table_offset + i * sizeof(kime_section_entry);
    kime_section_entry e;
    std::memcpy(&e, entryAt, sizeof e);
    if (std::strncmp(e.name, prefix.c_str(), prefix.size()) != 0) continue;
    change(bytes.data() + e.offset, e.size);
    e.checksum = kime_checksum(bytes.data() + e.offset, e.size);
    std::memcpy(entryAt, &e, sizeof e);
    ++changed;
  }
  return changed;
}

std::shared_ptr<Model> testModel() {
  static std::shared_ptr<Model> model;
  if (!model) {
    auto m = Model::open(testArtifact());
    if (!m) throw std::runtime_error(m.error().text());
    model = *m;
  }
  return model;
}

Outputs runServe(std::shared_ptr<Model> model, const Batch& b) {
  auto e = Executor::create(model, "serve", {2});
  if (!e) throw std::runtime_error(e.error().text());
  Outputs out;
  if (auto err = (*e)->run(b, out)) throw std::runtime_error(err->text());
  return out;
}

}  // namespace kime::test
