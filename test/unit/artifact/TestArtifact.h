// The compiled example model these tests run, named by KIME_TEST_ARTIFACT (ctest's
// make-test-artifact writes it with the normal build's tools). The tests here need nothing but
// the runtime: a runtime-only build, sanitized (scripts/sanitize.sh), runs them too.
#ifndef KIME_TEST_TESTARTIFACT_H
#define KIME_TEST_TESTARTIFACT_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kime/runtime.h"

namespace kime::test {

// The artifact's path; throws (failing the test, naming the variable) where none is set.
const std::string& testArtifact();
// Beside it (make-test-artifact): the same artifact signed by trusted.key ("small-signed.kime"),
// and the key files trusted.pub and other.pub; the path of `name` there.
std::string besideTestArtifact(const std::string& name);
// A file's bytes.
std::string readBytes(const std::string& path);
// Calls change(payload, size) on each section of the artifact `bytes` whose name starts with
// `prefix`, then fixes that section's checksum (so that only a deeper check can notice); returns
// how many sections it changed.
int rewriteSections(std::string& bytes, const std::string& prefix,
                    const std::function<void(char* payload, uint64_t size)>& change);
// It opened once (the default loader and CPU target), shared by the tests.
std::shared_ptr<Model> testModel();
// `b` run on a fresh executor of `model`'s "serve" stage (2 threads); throws on an error.
Outputs runServe(std::shared_ptr<Model> model, const Batch& b);

}  // namespace kime::test

#endif  // KIME_TEST_TESTARTIFACT_H
