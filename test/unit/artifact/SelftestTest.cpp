// The artifact's self-test through the C API (kime_model_selftest) on the example model compiled
// with --selftest 3: every bucket passes, the report names each with its largest difference and
// tolerance, and is cut to the caller's buffer. (A mutated reference output failing, and an
// artifact without the section: lit Tools/kime-run-selftest.test.)
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "TestArtifact.h"
#include "kime/kime.h"

namespace kime {
namespace {

TEST(Selftest, TheExampleModelPassesOnThisCpu) {
  kime_model* model = nullptr;
  kime_error err;
  ASSERT_EQ(kime_model_open(test::testArtifact().c_str(), &model, &err), KIME_OK) << err.message;
  kime_executor_options o;
  kime_executor_options_init(&o);
  o.threads = 2;
  char report[2048];
  ASSERT_EQ(kime_model_selftest(model, &o, report, sizeof report, &err), KIME_OK) << err.message << "\n" << report;
  const std::string text = report;
  EXPECT_NE(text.find("selftest on cpu "), std::string::npos) << text;
  EXPECT_NE(text.find("stage bulk bucket {tokens 4096, seqs 128, markers 1024}: 1 batches, max |diff| "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(tolerance 0.0001 + 0.0001 |want|): ok"), std::string::npos) << text;
  EXPECT_NE(text.find("selftest: passed (3 buckets)"), std::string::npos) << text;

  char small[16];
  ASSERT_EQ(kime_model_selftest(model, nullptr, small, sizeof small, &err), KIME_OK) << err.message;
  EXPECT_EQ(std::strlen(small), sizeof small - 1);
  EXPECT_EQ(kime_model_selftest(nullptr, nullptr, nullptr, 0, &err), KIME_INVALID_ARGUMENT);
  kime_model_release(model);
}

}  // namespace
}  // namespace kime
