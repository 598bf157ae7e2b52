// The keys of an artifact's JSON sections: the manifest (KIME_SECTION_MANIFEST) and the self-test
// (KIME_SECTION_SELFTEST), spelled once for their writer (kime-compile) and their readers (the
// runtime). Values that are names (kernel classes, plan inputs, row counts, dtypes, CUDA maths,
// CPU targets) are plan.h's. C++ only: both sides read and write the JSON in C++.
#ifndef KIME_MANIFEST_KEYS_H
#define KIME_MANIFEST_KEYS_H

namespace kime::key {

// The manifest's top level.
inline constexpr const char format[] = "format";          // KIME_FORMAT_VERSION
inline constexpr const char model[] = "model";            // the Graph's name
inline constexpr const char vocab[] = "vocab";            // rows of the token table
inline constexpr const char types[] = "types";            // rows of the type table (0: none)
inline constexpr const char maxSeqLen[] = "max_seq_len";  // rows of the learned positions (0: none)
inline constexpr const char gatherLimits[] = "gather_limits";
inline constexpr const char signature[] = "signature";  // {inputs, outputs}: for people
inline constexpr const char inputs[] = "inputs";
inline constexpr const char outputs[] = "outputs";
inline constexpr const char weights[] = "weights";
inline constexpr const char kernels[] = "kernels";
inline constexpr const char code[] = "code";  // {cpu, ptx, cuda_math}: for people
inline constexpr const char cpu[] = "cpu";
inline constexpr const char ptx[] = "ptx";
inline constexpr const char cudaMath[] = "cuda_math";
inline constexpr const char buckets[] = "buckets";
inline constexpr const char stages[] = "stages";

// A gather limit: an index input whose values must stay below `rows`, for `node`'s `table`.
inline constexpr const char index[] = "index";
inline constexpr const char rows[] = "rows";
inline constexpr const char node[] = "node";
inline constexpr const char table[] = "table";

// A weight, a kernel, a stage (each also has `name`).
inline constexpr const char name[] = "name";
inline constexpr const char layout[] = "layout";
inline constexpr const char shape[] = "shape";
inline constexpr const char offset[] = "offset";
inline constexpr const char dtype[] = "dtype";
inline constexpr const char kind[] = "kind";    // the kernel's class
inline constexpr const char slots[] = "slots";  // the kernel's arguments, by slot name
inline constexpr const char spec[] = "spec";    // the kernel's spec, for people

// A bucket: its bounds, arena bytes, steps and where its outputs lie.
inline constexpr const char tokens[] = "tokens";
inline constexpr const char seqs[] = "seqs";
inline constexpr const char markers[] = "markers";
inline constexpr const char arena[] = "arena";
inline constexpr const char steps[] = "steps";
inline constexpr const char logits[] = "logits";
inline constexpr const char act[] = "act";

// A step: a kernel call (also `name` and `node`) and, per CUDA math, its launch.
inline constexpr const char kernel[] = "kernel";
inline constexpr const char flops[] = "flops";
inline constexpr const char args[] = "args";
inline constexpr const char cuda[] = "cuda";
inline constexpr const char grid[] = "grid";
inline constexpr const char block[] = "block";

// An argument: its source and, by source, which weight, arena offset or input (`name`), then its
// row count (`rows`, a plan.h row symbol), the bucket's bound of it, its columns and `dtype`.
inline constexpr const char src[] = "src";
inline constexpr const char srcWeight[] = "weight";
inline constexpr const char srcArena[] = "arena";
inline constexpr const char srcInput[] = "input";
inline constexpr const char id[] = "id";
inline constexpr const char bound[] = "bound";
inline constexpr const char cols[] = "cols";

// The self-test section: the tolerance per arithmetic (kime_arith_names), and its cases, each
// with `stage`, `bucket`, `name`, `batch` (by plan.h's input names), `logits` and `act`.
inline constexpr const char tolerance[] = "tolerance";
inline constexpr const char cases[] = "cases";
inline constexpr const char stage[] = "stage";
inline constexpr const char bucket[] = "bucket";
inline constexpr const char batch[] = "batch";

// The source section (KIME_SECTION_SOURCE): `compiler` (its version), `compiler_build` (a hash of
// the compiler's program and libraries: kime-compile --update refits only what this build made),
// `graph` (the Graph's JSON), `buckets` (the bucket file's JSON) and `options`, each option by
// kime-compile's name for it.
inline constexpr const char compiler[] = "compiler";
inline constexpr const char compilerBuild[] = "compiler_build";
inline constexpr const char graph[] = "graph";
inline constexpr const char options[] = "options";
inline constexpr const char targets[] = "targets";
inline constexpr const char cudaArchs[] = "cuda_archs";
inline constexpr const char cpuPrecision[] = "cpu_precision";
inline constexpr const char pruneRows[] = "prune_rows";
inline constexpr const char fusion[] = "fusion";
inline constexpr const char selftest[] = "selftest";

}  // namespace kime::key

#endif  // KIME_MANIFEST_KEYS_H
