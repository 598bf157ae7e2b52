// The C API: handles, status codes and messages, zeroed out-parameters, and a real run.
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "CompiledModel.h"
#include "kime/kime.h"

namespace kime {
namespace {

TEST(CApi, OpensRunsAndReleases) {
  kime_error err;
  kime_model* model = reinterpret_cast<kime_model*>(1);
  ASSERT_EQ(kime_model_open(test::smallModel().artifact.c_str(), &model, &err), KIME_OK) << err.message;
  kime_executor_options o;
  kime_executor_options_init(&o);
  o.threads = 2;
  kime_executor* exec = nullptr;
  ASSERT_EQ(kime_executor_create(model, &o, &exec, &err), KIME_OK) << err.message;
  kime_model_release(model);  // the executor keeps it alive
  EXPECT_EQ(kime_executor_bucket_count(exec), 2u);
  kime_bucket b;
  ASSERT_EQ(kime_executor_bucket(exec, 1, &b, &err), KIME_OK);
  EXPECT_EQ(b.tokens, 512u);
  ASSERT_EQ(kime_executor_prepare(exec, 0, &err), KIME_OK);

  uint32_t ids[] = {5, 6, 7, 8, 9}, cu[] = {0, 3, 5}, markers[] = {0, 2, 1}, mcu[] = {0, 2, 3};
  uint8_t qtype[] = {1, 3};
  kime_batch batch = {ids, 5, cu, 3, markers, 3, mcu, 3, qtype, 2};
  float logits[3], act[4];
  ASSERT_EQ(kime_executor_run(exec, &batch, logits, 3, act, 4, &b, &err), KIME_OK) << err.message;
  EXPECT_EQ(b.tokens, 128u);

  // The same batch through the C++ API gives the same bits.
  auto cpp = Executor::create(test::smallModel().model, "serve", {2});
  Outputs out;
  ASSERT_FALSE((*cpp)->run(Batch{{ids, 5}, {cu, 3}, {markers, 3}, {mcu, 3}, {qtype, 2}}, out));
  EXPECT_EQ(0, std::memcmp(logits, out[0].data(), sizeof logits));
  EXPECT_EQ(0, std::memcmp(act, out[1].data(), sizeof act));

  EXPECT_EQ(kime_executor_run(exec, &batch, logits, 2, act, 4, nullptr, &err), KIME_INVALID_ARGUMENT);
  ids[0] = 99999;
  EXPECT_EQ(kime_executor_run(exec, &batch, logits, 3, act, 4, nullptr, &err), KIME_BAD_BATCH);
  EXPECT_STREQ(err.message, "bad batch: token id 99999 is past the vocabulary of 4096");
  kime_executor_release(exec);
}

// The outputs described by name, kind and width; run into the caller's arrays or read from the
// executor's.
TEST(CApi, OutputsAreDescribedAndRunByName) {
  kime_error err;
  kime_model* model = nullptr;
  ASSERT_EQ(kime_model_open(test::smallModel().artifact.c_str(), &model, &err), KIME_OK) << err.message;
  ASSERT_EQ(kime_model_output_count(model), 2u);
  kime_output_info info;
  ASSERT_EQ(kime_model_output(model, 1, &info, &err), KIME_OK);
  EXPECT_STREQ(info.name, "act");
  EXPECT_EQ(info.kind, KIME_OUTPUT_PER_SEQUENCE);
  EXPECT_EQ(info.width, 2u);
  ASSERT_EQ(kime_model_output(model, 0, &info, &err), KIME_OK);
  EXPECT_STREQ(info.name, "logits");
  EXPECT_EQ(info.kind, KIME_OUTPUT_PER_MARKER);
  EXPECT_EQ(info.width, 1u);
  EXPECT_EQ(kime_model_output(model, 2, &info, &err), KIME_INVALID_ARGUMENT);
  EXPECT_EQ(info.name, nullptr);
  EXPECT_EQ(kime_model_output_index(model, "act"), 1);
  EXPECT_EQ(kime_model_output_index(model, "nope"), -1);

  kime_executor* exec = nullptr;
  ASSERT_EQ(kime_executor_create(model, nullptr, &exec, &err), KIME_OK) << err.message;
  const float* data = nullptr;
  size_t rows = 9;
  EXPECT_EQ(kime_executor_output(exec, 0, &data, &rows, &err), KIME_INVALID_ARGUMENT);  // nothing has run
  EXPECT_STREQ(err.message, "kime_executor_output: no batch has run");
  uint32_t ids[] = {5, 6, 7, 8, 9}, cu[] = {0, 3, 5}, markers[] = {0, 2, 1}, mcu[] = {0, 2, 3};
  uint8_t qtype[] = {1, 3};
  const kime_batch batch = {ids, 5, cu, 3, markers, 3, mcu, 3, qtype, 2};
  float logits[3], act[4];
  ASSERT_EQ(kime_executor_run(exec, &batch, logits, 3, act, 4, nullptr, &err), KIME_OK) << err.message;

  float act2[4] = {};
  float* arrays[2] = {nullptr, act2};  // logits left with the executor
  size_t caps[2] = {0, 4};
  ASSERT_EQ(kime_executor_run_outputs(exec, &batch, arrays, caps, 2, nullptr, &err), KIME_OK) << err.message;
  EXPECT_EQ(0, std::memcmp(act, act2, sizeof act));
  ASSERT_EQ(kime_executor_output(exec, 0, &data, &rows, &err), KIME_OK);
  EXPECT_EQ(rows, 3u);
  EXPECT_EQ(0, std::memcmp(logits, data, sizeof logits));
  ASSERT_EQ(kime_executor_output(exec, 1, &data, &rows, &err), KIME_OK);
  EXPECT_EQ(rows, 2u);

  caps[1] = 3;  // two sequences of two
  EXPECT_EQ(kime_executor_run_outputs(exec, &batch, arrays, caps, 2, nullptr, &err), KIME_INVALID_ARGUMENT);
  EXPECT_STREQ(err.message, "kime_executor_run_outputs: an output array is smaller than its rows times its width");
  EXPECT_EQ(kime_executor_run_outputs(exec, &batch, arrays, caps, 1, nullptr, &err), KIME_INVALID_ARGUMENT);
  EXPECT_EQ(kime_executor_run_outputs(exec, &batch, nullptr, nullptr, 0, nullptr, &err), KIME_OK);

  // Token types: checked like every batch field (the small model's Graph reads qtype, not
  // token_types, so its outputs are the untyped run's).
  const uint8_t types[] = {0, 1, 1, 0, 3}, past[] = {0, 1, 9, 0, 0};
  ASSERT_EQ(kime_executor_run_typed(exec, &batch, types, arrays, caps, 2, nullptr, &err), KIME_INVALID_ARGUMENT);
  caps[1] = 4;
  ASSERT_EQ(kime_executor_run_typed(exec, &batch, types, arrays, caps, 2, nullptr, &err), KIME_OK) << err.message;
  EXPECT_EQ(0, std::memcmp(act, act2, sizeof act));
  EXPECT_EQ(kime_executor_run_typed(exec, &batch, past, arrays, caps, 2, nullptr, &err), KIME_BAD_BATCH);
  EXPECT_STREQ(err.message, "bad batch: token 2 has type 9 of 4");
  kime_executor_release(exec);
  kime_model_release(model);
}

TEST(CApi, ErrorsComeWithAStatusAndAMessage) {
  kime_error err;
  kime_model* model = reinterpret_cast<kime_model*>(1);
  EXPECT_EQ(kime_model_open("/nonexistent.kime", &model, &err), KIME_UNSUPPORTED);
  EXPECT_EQ(model, nullptr);  // out-parameters are cleared on entry
  EXPECT_EQ(err.status, KIME_UNSUPPORTED);
  EXPECT_STREQ(err.message, "unsupported: /nonexistent.kime: cannot open: No such file or directory");
  EXPECT_EQ(kime_model_open(nullptr, &model, nullptr), KIME_INVALID_ARGUMENT);
  kime_executor* exec = nullptr;
  EXPECT_EQ(kime_executor_create(nullptr, nullptr, &exec, &err), KIME_INVALID_ARGUMENT);
  kime_model_release(nullptr);
  kime_executor_release(nullptr);
}

TEST(CApi, NoBucketHasItsOwnStatus) {
  kime_error err;
  kime_model* model = nullptr;
  ASSERT_EQ(kime_model_open(test::smallModel().artifact.c_str(), &model, &err), KIME_OK);
  kime_executor_options o;
  kime_executor_options_init(&o);
  o.stage = "serve";
  kime_executor* exec = nullptr;
  ASSERT_EQ(kime_executor_create(model, &o, &exec, &err), KIME_OK);
  std::vector<uint32_t> ids(600, 1), cu = {0, 600}, mcu = {0, 0};
  uint8_t qtype[] = {0};
  kime_batch batch = {ids.data(), ids.size(), cu.data(), 2, nullptr, 0, mcu.data(), 2, qtype, 1};
  float act[2];
  EXPECT_EQ(kime_executor_run(exec, &batch, nullptr, 0, act, 2, nullptr, &err), KIME_NO_BUCKET);
  EXPECT_STREQ(err.message,
               "no serve bucket holds 600 tokens, 1 sequences and 0 markers (its largest bucket holds 512 tokens, 32 "
               "sequences and 128 markers)");
  kime_executor_release(exec);
  kime_model_release(model);
}

TEST(CApi, ModelOptionsPickACpuTargetOrRefuseItByName) {
  kime_error err;
  kime_model_options o;
  kime_model_options_init(&o);
  o.cpu_target = "x86-64-avx2";  // the shared artifact's code; every x86-64 CPU kime runs on has it
  kime_model* model = nullptr;
  ASSERT_EQ(kime_model_open_with_options(test::smallModel().artifact.c_str(), &o, &model, &err), KIME_OK)
      << err.message;
  kime_model_release(model);
  o.cpu_target = "arm-64";
  EXPECT_EQ(kime_model_open_with_options(test::smallModel().artifact.c_str(), &o, &model, &err), KIME_UNSUPPORTED);
  EXPECT_EQ(model, nullptr);
  EXPECT_THAT(err.message, ::testing::StartsWith("unsupported: CPU target arm-64 was asked for, but this CPU runs "));
  kime_model_options uninitialized = {};
  EXPECT_EQ(kime_model_open_with_options(test::smallModel().artifact.c_str(), &uninitialized, &model, &err),
            KIME_INVALID_ARGUMENT);
  // C++: the target loaded is the one asked for.
  ModelOptions avx2;
  avx2.cpuTarget = "x86-64-avx2";
  auto cpp = Model::open(test::smallModel().artifact, avx2);
  ASSERT_TRUE(cpp) << cpp.error().text();
  EXPECT_EQ((*cpp)->cpuTarget(), "x86-64-avx2");
}

}  // namespace
}  // namespace kime
