// The C API over the C++ runtime: handles, status codes, no exceptions across the boundary.
#include <cstddef>
#include <cstring>
#include <new>

#include "kime/kime.h"
#include "kime/runtime.h"
#include "kime/signature.h"

struct kime_model {
  std::shared_ptr<kime::Model> model;
};

struct kime_executor {
  std::unique_ptr<kime::Executor> exec;
  std::shared_ptr<kime::Model> model;
  kime::Outputs out;  // reused across runs: after the first, no allocation
  bool ran = false;   // whether `out` holds the latest run's outputs
};

namespace {

kime_status fail(kime_error* e, kime_status s, const char* msg) {
  if (e) {
    e->status = s;
    std::strncpy(e->message, msg, sizeof e->message - 1);
    e->message[sizeof e->message - 1] = '\0';
  }
  return s;
}

kime_status fail(kime_error* e, const kime::Error& err) {
  kime_status s = KIME_UNSUPPORTED;
  switch (err.kind) {
    case kime::ErrorKind::Batch:
      s = KIME_BAD_BATCH;
      break;
    case kime::ErrorKind::NoBucket:
      s = KIME_NO_BUCKET;
      break;
    case kime::ErrorKind::Unsupported:
      s = KIME_UNSUPPORTED;
      break;
    case kime::ErrorKind::Device:
      s = KIME_DEVICE;
      break;
  }
  return fail(e, s, err.text().c_str());
}

kime_status ok(kime_error* e) {
  if (e) e->status = KIME_OK, e->message[0] = '\0';
  return KIME_OK;
}

// The C options as C++ ones; the problem when they were not made by kime_model_options_init (of
// this release, or of one before trusted keys, which is shorter) or name a key that is none.
std::optional<std::string> modelOptions(const kime_model_options* options, kime::ModelOptions& o) {
  if (!options) return std::nullopt;
  constexpr size_t firstSize = offsetof(kime_model_options, trusted_keys);
  if (options->struct_size != sizeof *options && options->struct_size != firstSize)
    return std::string("options were not made by kime_model_options_init");
  if (options->cpu_target) o.cpuTarget = options->cpu_target;
  if (options->source_name) o.sourceName = options->source_name;
  if (options->struct_size == firstSize || !options->trusted_key_count) return std::nullopt;
  if (!options->trusted_keys) return std::string("trusted_key_count is not 0 but trusted_keys is NULL");
  for (size_t i = 0; i < options->trusted_key_count; ++i) {
    const char* text = options->trusted_keys[i];
    kime::PublicKey key;
    if (!text) return "trusted key " + std::to_string(i + 1) + " is NULL";
    if (auto why = kime::parsePublicKey(text, key)) return "trusted key " + std::to_string(i + 1) + ": " + *why;
    o.trustedKeys.push_back(text);
  }
  return std::nullopt;
}

// The C executor options as C++ ones (NULL: the defaults); false when they were not made by
// kime_executor_options_init.
bool executorOptions(const kime_executor_options* options, kime::ExecutorOptions& o) {
  if (!options) return true;
  if (options->struct_size != sizeof *options) return false;
  o.threads = options->threads;
  if (options->device) o.device = options->device;
  if (options->cuda_math) o.cudaMath = options->cuda_math;
  return true;
}

// Runs `open` (Model::open or openMemory) and hands its model out as a handle.
template <typename Open>
kime_status opened(Open open, kime_model** out_model, kime_error* error) {
  try {
    auto m = open();
    if (!m) return fail(error, m.error());
    *out_model = new kime_model{*m};
    return ok(error);
  } catch (const std::exception& e) {
    return fail(error, KIME_UNSUPPORTED, e.what());
  }
}

}  // namespace

extern "C" {

void kime_executor_options_init(kime_executor_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
}

void kime_model_options_init(kime_model_options* o) {
  if (!o) return;
  std::memset(o, 0, sizeof *o);
  o->struct_size = sizeof *o;
}

kime_status kime_model_open(const char* path, kime_model** out_model, kime_error* error) {
  return kime_model_open_with_options(path, nullptr, out_model, error);
}

kime_status kime_model_open_with_options(const char* path, const kime_model_options* options, kime_model** out_model,
                                         kime_error* error) {
  if (out_model) *out_model = nullptr;
  if (!path || !out_model)
    return fail(error, KIME_INVALID_ARGUMENT, "kime_model_open: path and out_model are required");
  kime::ModelOptions o;
  if (auto why = modelOptions(options, o))
    return fail(error, KIME_INVALID_ARGUMENT, ("kime_model_open: " + *why).c_str());
  return opened([&] { return kime::Model::open(path, o); }, out_model, error);
}

kime_status kime_model_open_memory(const void* data, size_t size, const kime_model_options* options,
                                   kime_model** out_model, kime_error* error) {
  if (out_model) *out_model = nullptr;
  if (!out_model) return fail(error, KIME_INVALID_ARGUMENT, "kime_model_open_memory: out_model is required");
  kime::ModelOptions o;
  if (auto why = modelOptions(options, o))
    return fail(error, KIME_INVALID_ARGUMENT, ("kime_model_open_memory: " + *why).c_str());
  return opened([&] { return kime::Model::openMemory(data, size, o); }, out_model, error);
}

void kime_model_release(kime_model* model) { delete model; }

kime_status kime_executor_create(kime_model* model, const kime_executor_options* options, kime_executor** out_executor,
                                 kime_error* error) {
  if (out_executor) *out_executor = nullptr;
  if (!model || !out_executor)
    return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_create: model and out_executor are required");
  kime::ExecutorOptions o;
  if (!executorOptions(options, o))
    return fail(error, KIME_INVALID_ARGUMENT,
                "kime_executor_create: options were not made by kime_executor_options_init");
  try {
    std::string stage;
    if (options && options->stage) stage = options->stage;
    if (stage.empty()) stage = model->model->defaultStage();
    auto e = kime::Executor::create(model->model, stage, o);
    if (!e) return fail(error, e.error());
    *out_executor = new kime_executor{std::move(*e), model->model, {}, false};
    return ok(error);
  } catch (const std::exception& e) {
    return fail(error, KIME_DEVICE, e.what());
  }
}

kime_status kime_model_selftest(kime_model* model, const kime_executor_options* options, char* report,
                                size_t report_cap, kime_error* error) {
  if (report && report_cap) report[0] = '\0';
  if (!model) return fail(error, KIME_INVALID_ARGUMENT, "kime_model_selftest: model is required");
  kime::ExecutorOptions o;
  if (!executorOptions(options, o))
    return fail(error, KIME_INVALID_ARGUMENT,
                "kime_model_selftest: options were not made by kime_executor_options_init");
  try {
    auto r = kime::runSelftest(model->model, o);
    if (!r) return fail(error, r.error());
    const std::string text = r->text();
    if (report && report_cap) {
      std::strncpy(report, text.c_str(), report_cap - 1);
      report[report_cap - 1] = '\0';
    }
    if (r->passed()) return ok(error);
    for (const kime::SelftestBucket& b : r->buckets)
      if (!b.failure.empty())
        return fail(
            error, KIME_DEVICE,
            ("selftest failed: stage " + b.stage + " bucket " + kime::describe(b.bucket) + ": " + b.failure).c_str());
    return fail(error, KIME_DEVICE, "selftest failed: no batch ran");
  } catch (const std::exception& e) {
    return fail(error, KIME_DEVICE, e.what());
  }
}

void kime_executor_release(kime_executor* executor) { delete executor; }

size_t kime_executor_bucket_count(const kime_executor* executor) {
  return executor ? executor->model->buckets(executor->exec->stage()).size() : 0;
}

kime_status kime_executor_bucket(const kime_executor* executor, size_t index, kime_bucket* out_bucket,
                                 kime_error* error) {
  if (out_bucket) *out_bucket = {0, 0, 0};
  if (!executor || !out_bucket)
    return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_bucket: executor and out_bucket are required");
  std::vector<kime::Bucket> b = executor->model->buckets(executor->exec->stage());
  if (index >= b.size())
    return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_bucket: index past the stage's buckets");
  *out_bucket = {b[index].tokens, b[index].seqs, b[index].markers};
  return ok(error);
}

kime_status kime_executor_stats(const kime_executor* executor, kime_stats* out_stats, kime_error* error) {
  if (out_stats) std::memset(out_stats, 0, sizeof *out_stats);
  if (!executor || !out_stats)
    return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_stats: executor and out_stats are required");
  *out_stats = executor->exec->stats();
  return ok(error);
}

kime_status kime_executor_bucket_stats(const kime_executor* executor, size_t index, kime_bucket_stats* out_stats,
                                       kime_error* error) {
  if (out_stats) std::memset(out_stats, 0, sizeof *out_stats);
  if (!executor || !out_stats)
    return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_bucket_stats: executor and out_stats are required");
  std::optional<kime_bucket_stats> b = executor->exec->bucketStats(index);
  if (!b) return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_bucket_stats: index past the stage's buckets");
  *out_stats = *b;
  return ok(error);
}

kime_status kime_executor_prepare(kime_executor* executor, size_t index, kime_error* error) {
  if (!executor) return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_prepare: executor is required");
  try {
    if (auto err = executor->exec->prepare(index)) return fail(error, *err);
    return ok(error);
  } catch (const std::exception& e) {
    return fail(error, KIME_DEVICE, e.what());
  }
}

size_t kime_model_output_count(const kime_model* model) { return model ? model->model->outputs().size() : 0; }

kime_status kime_model_output(const kime_model* model, size_t index, kime_output_info* out_info, kime_error* error) {
  if (out_info) *out_info = {nullptr, KIME_OUTPUT_PER_MARKER, 0};
  if (!model || !out_info)
    return fail(error, KIME_INVALID_ARGUMENT, "kime_model_output: model and out_info are required");
  const std::vector<kime::OutputDesc>& outs = model->model->outputs();
  if (index >= outs.size()) return fail(error, KIME_INVALID_ARGUMENT, "kime_model_output: index past the outputs");
  *out_info = {outs[index].name.c_str(), kime_output_kind(outs[index].kind), outs[index].width};
  return ok(error);
}

long kime_model_output_index(const kime_model* model, const char* name) {
  return model && name ? long(kime::outputIndex(model->model->outputs(), name)) : -1;
}

namespace {

kime::Batch batchOf(const kime_batch& b) {
  return {{b.ids, b.ids_len}, {b.cu, b.cu_len}, {b.markers, b.markers_len}, {b.mcu, b.mcu_len}, {b.qtype, b.qtype_len}};
}

// Whether output i of `b` fits where the caller put it; the message names the first that does not.
const char* checkOutputArrays(const std::vector<kime::OutputDesc>& outs, const kime::Batch& b, float* const* outputs,
                              const size_t* caps) {
  if (!outputs) return nullptr;
  if (!caps) return "kime_executor_run_outputs: caps is required with outputs";
  for (size_t i = 0; i < outs.size(); ++i) {
    const size_t n = outs[i].rows(b.seqs(), b.markerCount()) * outs[i].width;
    if (outputs[i] && caps[i] < n)
      return "kime_executor_run_outputs: an output array is smaller than its rows times its width";
  }
  return nullptr;
}

}  // namespace

kime_status kime_executor_run_outputs(kime_executor* executor, const kime_batch* batch, float* const* outputs,
                                      const size_t* caps, size_t count, kime_bucket* out_bucket, kime_error* error) {
  return kime_executor_run_typed(executor, batch, nullptr, outputs, caps, count, out_bucket, error);
}

kime_status kime_executor_run_typed(kime_executor* executor, const kime_batch* batch, const uint8_t* token_types,
                                    float* const* outputs, const size_t* caps, size_t count, kime_bucket* out_bucket,
                                    kime_error* error) {
  if (out_bucket) *out_bucket = {0, 0, 0};
  if (!executor || !batch)
    return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_run_outputs: executor and batch are required");
  const std::vector<kime::OutputDesc>& outs = executor->model->outputs();
  if (outputs && count != outs.size())
    return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_run_outputs: count is not the model's output count");
  kime::Batch b = batchOf(*batch);
  if (token_types) b.ttype = {token_types, batch->ids_len};
  if (const char* bad = checkOutputArrays(outs, b, outputs, caps)) return fail(error, KIME_INVALID_ARGUMENT, bad);
  try {
    kime::Bucket used;
    executor->ran = false;
    if (auto err = executor->exec->run(b, executor->out, &used)) return fail(error, *err);
    executor->ran = true;
    for (size_t i = 0; outputs && i < outs.size(); ++i)
      if (outputs[i] && !executor->out.values[i].empty())
        std::memcpy(outputs[i], executor->out.values[i].data(), executor->out.values[i].size() * sizeof(float));
    if (out_bucket) *out_bucket = {used.tokens, used.seqs, used.markers};
    return ok(error);
  } catch (const std::exception& e) {
    return fail(error, KIME_DEVICE, e.what());
  }
}

kime_status kime_executor_output(const kime_executor* executor, size_t index, const float** out_data, size_t* out_rows,
                                 kime_error* error) {
  if (out_data) *out_data = nullptr;
  if (out_rows) *out_rows = 0;
  if (!executor || !out_data || !out_rows)
    return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_output: executor, out_data and out_rows are required");
  const std::vector<kime::OutputDesc>& outs = executor->model->outputs();
  if (index >= outs.size()) return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_output: index past the outputs");
  if (!executor->ran) return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_output: no batch has run");
  *out_data = executor->out.values[index].data();
  *out_rows = executor->out.values[index].size() / outs[index].width;
  return ok(error);
}

kime_status kime_executor_run(kime_executor* executor, const kime_batch* batch, float* logits, size_t logits_cap,
                              float* act, size_t act_cap, kime_bucket* out_bucket, kime_error* error) {
  if (out_bucket) *out_bucket = {0, 0, 0};
  if (!executor || !batch)
    return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_run: executor and batch are required");
  if (!kime::isSeedContract(executor->model->outputs()))
    return fail(error, KIME_UNSUPPORTED,
                "kime_executor_run: the model's outputs are not logits and act; use kime_executor_run_outputs");
  const kime::Batch b = batchOf(*batch);
  if (logits_cap < b.markerCount() || act_cap < 2 * b.seqs())
    return fail(error, KIME_INVALID_ARGUMENT,
                "kime_executor_run: the output arrays are smaller than the batch's markers and sequences");
  if ((b.markerCount() && !logits) || (b.seqs() && !act))
    return fail(error, KIME_INVALID_ARGUMENT, "kime_executor_run: output arrays are required");
  float* const outputs[2] = {logits, act};
  const size_t caps[2] = {logits_cap, act_cap};
  return kime_executor_run_outputs(executor, batch, outputs, caps, 2, out_bucket, error);
}

}  // extern "C"
