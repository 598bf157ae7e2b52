#include "TestArtifact.h"

#include <sys/stat.h>
#include <cstdlib>
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
