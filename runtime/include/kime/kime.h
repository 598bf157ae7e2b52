/* kime runtime, C API.
 *
 * Load a compiled artifact (`.kime`), create an executor for one of its stages, run batches.
 *
 * Ownership rules:
 *   - Every object made by a kime_*_create/open call is released by its kime_*_release call;
 *     releasing NULL is a no-op.
 *   - An executor holds a reference to its model: the model may be released first; its memory
 *     goes when the last executor using it is released.
 *   - Input arrays (the batch) are borrowed for the duration of one call. Output arrays are the
 *     caller's: kime writes into them, never keeps them.
 *   - out_ parameters are set to NULL/zero on entry, and filled only on success.
 *   - Errors: every call returns a kime_status (0 = KIME_OK). When `error` is not NULL it gets
 *     the status and a NUL-terminated message; nothing is allocated to report an error.
 *   - No C++ exception crosses this API.
 *   - An executor is not thread-safe: use one per thread (they may share a model).
 */
#ifndef KIME_KIME_H
#define KIME_KIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KIME_MUST_USE __attribute__((warn_unused_result))
#else
#define KIME_MUST_USE
#endif

typedef enum kime_status {
  KIME_OK = 0,
  KIME_BAD_BATCH = 1,        /* the batch is inconsistent (checkBatch's rules) */
  KIME_NO_BUCKET = 2,        /* no bucket of the stage holds the batch */
  KIME_UNSUPPORTED = 3,      /* not a usable artifact, no such stage, no code for this CPU */
  KIME_DEVICE = 4,           /* a kernel or the device failed */
  KIME_INVALID_ARGUMENT = 5, /* a NULL handle, an output array too small, ... */
} kime_status;

typedef struct kime_error {
  kime_status status;
  char message[500];
} kime_error;

/* Returns `error->status` after writing `status`/`message`; a RETURN_IF_ERROR helper:
 *   KIME_RETURN_IF_ERROR(kime_executor_run(...));  */
#define KIME_RETURN_IF_ERROR(expr)          \
  do {                                      \
    kime_status kime_s_ = (expr);           \
    if (kime_s_ != KIME_OK) return kime_s_; \
  } while (0)

typedef struct kime_model kime_model;
typedef struct kime_executor kime_executor;

typedef struct kime_bucket {
  uint32_t tokens, seqs, markers;
} kime_bucket;

/* A packed batch (docs/batch.md): sequence s is tokens cu[s]..cu[s+1] of ids and
 * markers mcu[s]..mcu[s+1] of markers; markers are positions within their own sequence. */
typedef struct kime_batch {
  const uint32_t* ids;
  size_t ids_len;
  const uint32_t* cu;
  size_t cu_len;
  const uint32_t* markers;
  size_t markers_len;
  const uint32_t* mcu;
  size_t mcu_len;
  const uint8_t* qtype;
  size_t qtype_len;
} kime_batch;

typedef struct kime_executor_options {
  uint32_t struct_size;  /* sizeof(kime_executor_options), set by kime_executor_options_init */
  uint32_t threads;      /* 0: the machine's hardware threads */
  const char* stage;     /* NULL: "serve" if the model has it, else its first stage */
  const char* device;    /* NULL or "cpu"; "cuda": the first GPU (KIME_DEVICE error without one) */
  const char* cuda_math; /* NULL or "tf32" (tensor cores); "f32" (exact FMA) */
} kime_executor_options;

void kime_executor_options_init(kime_executor_options* options);

typedef struct kime_model_options {
  uint32_t struct_size; /* sizeof(kime_model_options), set by kime_model_options_init */
  /* NULL: the best CPU code of the artifact this CPU runs. Else that code section, e.g.
   * "x86-64-avx2" on an AVX-512 machine (to run or measure each path): KIME_UNSUPPORTED, naming
   * it, where the CPU lacks it or the artifact has no code for it. */
  const char* cpu_target;
  /* kime_model_open_memory: what messages call the buffer; NULL: "artifact in memory". */
  const char* source_name;
  /* Signing keys to trust: `trusted_key_count` public keys, each the text of a .pub file that
   * kime-keygen wrote. When there are any, the artifact must be signed by one of them and unchanged
   * since, or it is KIME_UNSUPPORTED (the message says which: unsigned, another key, what changed)
   * before any of its code is loaded; a text that is no key is KIME_INVALID_ARGUMENT. 0: not
   * checked. (Added after the first release: options of the older, shorter size are still taken.) */
  const char* const* trusted_keys;
  size_t trusted_key_count;
} kime_model_options;

/* kime_model_open_memory's buffer must start at a multiple of this many bytes. */
#define KIME_MEMORY_ALIGN 64u

void kime_model_options_init(kime_model_options* options);

/* kime_model_open_with_options with the default options. */
KIME_MUST_USE kime_status kime_model_open(const char* path, kime_model** out_model, kime_error* error);
/* Maps the artifact at `path`, checks it and loads its CPU code; `options` may be NULL. */
KIME_MUST_USE kime_status kime_model_open_with_options(const char* path, const kime_model_options* options,
                                                       kime_model** out_model, kime_error* error);
/* The artifact in `size` bytes at `data` (KIME_MEMORY_ALIGN aligned), e.g. linked into the program
 * (kime_add_model's EMBED): the same checks as a file, the weights used in place, the CPU code
 * loaded from it. The caller keeps the buffer alive and unchanged until the model and all its
 * executors are released. A NULL, misaligned or short buffer is KIME_UNSUPPORTED, by name. */
KIME_MUST_USE kime_status kime_model_open_memory(const void* data, size_t size, const kime_model_options* options,
                                                 kime_model** out_model, kime_error* error);
void kime_model_release(kime_model* model);

KIME_MUST_USE kime_status kime_executor_create(kime_model* model, const kime_executor_options* options,
                                               kime_executor** out_executor, kime_error* error);
void kime_executor_release(kime_executor* executor);

/* The number of buckets of the executor's stage, and bucket `index`. */
size_t kime_executor_bucket_count(const kime_executor* executor);
KIME_MUST_USE kime_status kime_executor_bucket(const kime_executor* executor, size_t index, kime_bucket* out_bucket,
                                               kime_error* error);
/* Builds bucket `index`'s plan now (idempotent). */
KIME_MUST_USE kime_status kime_executor_prepare(kime_executor* executor, size_t index, kime_error* error);

/* Shape statistics: what an executor has run since it was made, counted in fixed arrays (a run
 * allocates nothing for them). Fill is a batch's count over its bucket's bound, per kind
 * (KIME_FILL_TOKENS, _SEQS, _MARKERS); bin i of KIME_STATS_BINS holds fills in (i/BINS, (i+1)/BINS]
 * (an empty count falls in bin 0). Feed them to kime-buckets with kime-run --stats --json. */
#define KIME_STATS_BINS 10
#define KIME_STATS_MISSES 32
enum { KIME_FILL_TOKENS = 0, KIME_FILL_SEQS = 1, KIME_FILL_MARKERS = 2 };

typedef struct kime_bucket_stats {
  kime_bucket bucket;
  uint64_t batches;                  /* run in this bucket */
  uint64_t fill[3][KIME_STATS_BINS]; /* per kind, batches by fill */
  uint64_t total[3];                 /* per kind, the counts summed (mean fill: total / batches / bound) */
} kime_bucket_stats;

typedef struct kime_stats {
  uint64_t batches;        /* run in some bucket */
  uint64_t bad_batches;    /* refused with KIME_BAD_BATCH */
  uint64_t no_bucket;      /* refused with KIME_NO_BUCKET */
  uint32_t no_bucket_kept; /* the sizes of the latest of those, oldest first, at most KIME_STATS_MISSES */
  kime_bucket no_bucket_sizes[KIME_STATS_MISSES];
} kime_stats;

/* The executor's totals, and bucket `index`'s counts (index < kime_executor_bucket_count). */
KIME_MUST_USE kime_status kime_executor_stats(const kime_executor* executor, kime_stats* out_stats, kime_error* error);
KIME_MUST_USE kime_status kime_executor_bucket_stats(const kime_executor* executor, size_t index,
                                                     kime_bucket_stats* out_stats, kime_error* error);

/* Runs the artifact's self-test (kime-compile --selftest N): its batches, each in its own stage
 * and bucket, on an executor made with `options` (may be NULL: the CPU), against the f64
 * reference's outputs stored with them. `report` (may be NULL) gets a line per bucket (largest
 * difference and tolerance) and the verdict, cut to `report_cap` bytes with a NUL. KIME_OK when
 * every bucket passed; KIME_DEVICE when one did not (the message names the first); KIME_UNSUPPORTED
 * when the artifact has no such section. */
KIME_MUST_USE kime_status kime_model_selftest(kime_model* model, const kime_executor_options* options, char* report,
                                              size_t report_cap, kime_error* error);

/* A model's outputs (the Graph's, in its order): each has a name, one row per marker or one per
 * sequence of the batch, and `width` f32 values a row. */
typedef enum kime_output_kind { KIME_OUTPUT_PER_MARKER = 0, KIME_OUTPUT_PER_SEQUENCE = 1 } kime_output_kind;

typedef struct kime_output_info {
  const char* name; /* valid while the model lives */
  kime_output_kind kind;
  size_t width;
} kime_output_info;

size_t kime_model_output_count(const kime_model* model);
/* Output `index` (< kime_model_output_count). */
KIME_MUST_USE kime_status kime_model_output(const kime_model* model, size_t index, kime_output_info* out_info,
                                            kime_error* error);
/* The index of output `name`, or -1 where the model has none. */
long kime_model_output_index(const kime_model* model, const char* name);

/* Runs a batch. `count` is the model's output count; output i is written to `outputs[i]`
 * (capacity `caps[i]` floats: at least its rows, the batch's markers or sequences, times its width),
 * row-major in batch order. An `outputs[i]` of NULL skips that copy: read it with
 * kime_executor_output instead (`outputs` and `caps` may both be NULL to skip every copy).
 * `out_bucket` (may be NULL) gets the bucket used. Once the bucket is prepared, this allocates
 * nothing. */
KIME_MUST_USE kime_status kime_executor_run_outputs(kime_executor* executor, const kime_batch* batch,
                                                    float* const* outputs, const size_t* caps, size_t count,
                                                    kime_bucket* out_bucket, kime_error* error);
/* kime_executor_run_outputs with a type per token (`token_types`, batch->ids_len of them: sentence
 * pairs, 0 for the first text and 1 for the second), which a model's token_types reads instead of
 * each sequence's qtype; NULL: none. */
KIME_MUST_USE kime_status kime_executor_run_typed(kime_executor* executor, const kime_batch* batch,
                                                  const uint8_t* token_types, float* const* outputs, const size_t* caps,
                                                  size_t count, kime_bucket* out_bucket, kime_error* error);
/* After a run that succeeded: output `index` of that batch, in memory the executor owns (valid until
 * its next run or its release), and its rows. */
KIME_MUST_USE kime_status kime_executor_output(const kime_executor* executor, size_t index, const float** out_data,
                                               size_t* out_rows, kime_error* error);

/* kime_executor_run_outputs for the seed's contract, a model whose outputs are `logits` (one value
 * per marker) and `act` (two per sequence): `logits` gets one value per marker (capacity
 * `logits_cap`), `act` two per sequence (capacity `act_cap` floats). KIME_UNSUPPORTED for a model
 * with other outputs. */
KIME_MUST_USE kime_status kime_executor_run(kime_executor* executor, const kime_batch* batch, float* logits,
                                            size_t logits_cap, float* act, size_t act_cap, kime_bucket* out_bucket,
                                            kime_error* error);

#ifdef __cplusplus
}
#endif

#endif /* KIME_KIME_H */
