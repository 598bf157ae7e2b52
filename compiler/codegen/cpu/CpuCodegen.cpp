#include "CpuCodegen.h"

#include <filesystem>
#include <optional>

#include "ForeignInstructions.h"
#include "HalideKernels.h"
#include "Schedule.h"
#include "cache/ContentHash.h"
#include "kime/format.h"
#include "support/Diagnostic.h"
#include "support/JsonFields.h"
#include "support/Process.h"

namespace kime::cpu {

// The runtime calls kernels through kime_kernel_buffer, which must be halide_buffer_t exactly.
static_assert(sizeof(kime_kernel_buffer) == sizeof(halide_buffer_t), "buffer ABI drift");
static_assert(offsetof(kime_kernel_buffer, host) == offsetof(halide_buffer_t, host), "buffer ABI drift");
static_assert(offsetof(kime_kernel_buffer, type) == offsetof(halide_buffer_t, type), "buffer ABI drift");
static_assert(offsetof(kime_kernel_buffer, dimensions) == offsetof(halide_buffer_t, dimensions), "buffer ABI drift");
static_assert(offsetof(kime_kernel_buffer, dim) == offsetof(halide_buffer_t, dim), "buffer ABI drift");
static_assert(sizeof(kime_kernel_dimension) == sizeof(halide_dimension_t), "buffer ABI drift");

namespace fs = std::filesystem;

std::string halideTarget(const std::string& target) {
  switch (parseTarget(target)) {
    case KIME_CPU_X86_64_AVX2:
      return "x86-64-linux-avx-avx2-f16c-fma-sse41";
    case KIME_CPU_X86_64_AVX512:
      return "x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake";
    case KIME_CPU_ARM_64:
      return "arm-64-linux";
    case KIME_CPU_ARM_64_DOTPROD:
      return "arm-64-linux-arm_dot_prod";
    // Halide 14 has AVX512-BF16 (vdpbf16ps) and VNNI (vpdpbusd) under its Sapphire Rapids
    // feature only, and uses VNNI only with its plain AVX-512 feature set too.
    case KIME_CPU_X86_64_AVX512BF16:
    case KIME_CPU_X86_64_AVX512VNNI:
      return "x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake-avx512_cannonlake-avx512_sapphirerapids";
    default:
      break;
  }
  throw CompileError("internal: no Halide target for \"" + target + "\"");
}

// The C library the kernels link against, so that their calls bind to its current symbol
// versions: unversioned references to pthread_cond_wait bind to glibc's 2.2.5 compatibility
// version, which allocates on every wait of a fresh condition variable (the thread pool parks
// threads on such), and a warm run would no longer be allocation-free.
static std::string libcFor(const std::string& target) {
  // Where each glibc is: CMake's KIME_X86_64_LIBC and KIME_AARCH64_LIBC (Debian's by default).
  const bool arm = isaOf(target).isa == Isa::Neon;
  const std::string libc = arm ? KIME_AARCH64_LIBC : KIME_X86_64_LIBC;
  if (fs::exists(libc)) return libc;
  throw CompileError("linking the " + target + " kernels needs that target's glibc at " + libc +
                     (arm ? " (Debian package libc6-arm64-cross; CMake's KIME_AARCH64_LIBC says where)"
                          : " (CMake's KIME_X86_64_LIBC says where)"));
}

// Whether a target's kernels are compiled under Halide's Sapphire Rapids feature.
static bool sapphireRapids(const std::string& target) {
  const kime_cpu_target t = parseTarget(target);
  return t == KIME_CPU_X86_64_AVX512BF16 || t == KIME_CPU_X86_64_AVX512VNNI;
}

// The Halide target of one kernel (null: the Halide runtime) of a target. Of the Sapphire Rapids
// targets' kernels only the linears of bf16 or int8 (VNNI) weights need that feature; the others
// and the runtime are compiled for AVX-512 with IFMA and VBMI (Cannonlake's set, which those
// targets' CPUs have), so that LLVM gives them none of Sapphire Rapids' own extensions
// (ForeignInstructions.h).
static std::string kernelHalideTarget(const std::string& target, const KernelSpec* spec) {
  const LinearSpec* l = spec ? spec->maybe<LinearSpec>() : nullptr;
  if (sapphireRapids(target) && !(l && (l->bf16() || l->int8())))
    return halideTarget(kime_cpu_target_names[KIME_CPU_X86_64_AVX512]) + "-avx512_cannonlake";
  return halideTarget(target);
}

static Halide::Target kernelTarget(const std::string& target, const KernelSpec& spec) {
  // Kernels carry no runtime of their own: the shared object gets exactly one.
  return Halide::Target(kernelHalideTarget(target, &spec)).with_feature(Halide::Target::NoRuntime);
}

namespace {

// One object of a shared object: a kernel, or (spec null) the Halide runtime.
struct ObjectJob {
  const KernelSpec* spec;
  std::string target, symbol, key, path;
};

std::string objectKey(const ObjectJob& j) {
  ContentHash h;
  h.add("cpu object").add(compilerIdentity()).add(kernelHalideTarget(j.target, j.spec)).add(j.symbol);
  return h.add(j.spec ? j.spec->key() : std::string("halide runtime")).hex();
}

// In a child process of its own (forEachInChild).
void compileObject(const ObjectJob& j) {
  if (!j.spec) return Halide::compile_standalone_runtime(j.path, Halide::Target(kernelHalideTarget(j.target, nullptr)));
  HalideKernel k = buildKernel(*j.spec, isaOf(j.target));
  k.pipeline.compile_to({{Halide::OutputFileType::object, j.path}}, k.args, j.symbol, kernelTarget(j.target, *j.spec));
}

// A Sapphire Rapids target's shared object holds no instruction that other CPUs running the
// target may lack; CompileError naming the kernel and the instruction otherwise.
void checkInstructions(const std::string& so, const std::string& target) {
  std::string disassembly;
  if (runProgram({KIME_OBJDUMP, "-d", "--no-show-raw-insn", so}, disassembly) != 0)
    throw CompileError("disassembling the " + target + " kernels failed: " + disassembly);
  if (std::optional<ForeignInstruction> f = findForeignInstruction(disassembly))
    throw CompileError("internal: " + f->function + " for " + target + " has " + f->instruction + " (" + f->extension +
                       "), which CPUs that run " + target + " may lack (AMD Zen 4 has no " + f->extension + ")");
}

std::string linkSharedObject(const std::vector<ObjectJob>& objects, const std::vector<std::string>& names,
                             const std::string& target, const fs::path& dir) {
  const std::string so = (dir / ("kernels." + target + ".so")).string();
  std::vector<std::string> argv = {KIME_LLD, "-shared", "--build-id=none", "--strip-all", "--hash-style=both",
                                   "-o",     so};
  for (size_t i = 0; i < names.size(); ++i)  // the entry under the artifact's name too
    argv.push_back("--defsym=" + names[i] + KIME_KERNEL_ENTRY_SUFFIX + "=" + objects[i].symbol +
                   KIME_KERNEL_ENTRY_SUFFIX);
  for (const ObjectJob& o : objects) argv.push_back(o.path);
  argv.push_back(libcFor(target));
  std::string log;
  if (runProgram(argv, log) != 0) throw CompileError("linking the " + target + " kernels failed: " + log);
  if (sapphireRapids(target)) checkInstructions(so, target);
  return json::readFile(so);
}

}  // namespace

SharedObjects compileSharedObjects(const std::vector<KernelSpec>& specs, const std::vector<std::string>& names,
                                   const std::vector<std::string>& targets, int jobs, KernelCache* cache) {
  TempDir dir;
  const std::vector<std::string> symbols = kernelSymbols(specs);
  std::vector<std::vector<ObjectJob>> perTarget;  // the kernels in order, then the runtime
  std::vector<ObjectJob*> missing;
  SharedObjects out;
  for (const std::string& t : targets) {
    std::vector<ObjectJob>& objects = perTarget.emplace_back();
    for (size_t i = 0; i <= specs.size(); ++i) {
      const bool runtime = i == specs.size();
      objects.push_back({runtime ? nullptr : &specs[i], t, runtime ? "halide_runtime" : symbols[i], "",
                         (dir.path() / (t + "." + (runtime ? "halide_runtime" : symbols[i]) + ".o")).string()});
      objects.back().key = objectKey(objects.back());
    }
  }
  for (auto& objects : perTarget)
    for (ObjectJob& o : objects) {
      std::optional<std::string> bytes = cache ? cache->get(o.key) : std::nullopt;
      if (bytes) {
        json::writeFileAtomic(o.path, *bytes);
        ++out.cached;
      } else {
        missing.push_back(&o);
      }
    }
  std::string error;
  forEachInChild(
      missing.size(), jobs, [&](size_t i) { compileObject(*missing[i]); },
      [&](size_t i, const std::string& e) {
        const ObjectJob& o = *missing[i];
        if (!e.empty() && error.empty())
          error = (o.spec ? "kernel " + o.symbol : std::string("the Halide runtime")) + " for " + o.target + ": " + e;
        if (e.empty() && cache) cache->put(o.key, json::readFile(o.path));
      });
  if (!error.empty()) throw CompileError(error);
  out.compiled = missing.size();
  for (size_t t = 0; t < targets.size(); ++t)
    out.bytes.push_back(linkSharedObject(perTarget[t], names, targets[t], dir.path()));
  return out;
}

std::string compileSharedObject(const std::vector<KernelSpec>& specs, const std::vector<std::string>& names,
                                const std::string& target, int jobs) {
  return compileSharedObjects(specs, names, {target}, jobs, nullptr).bytes.front();
}

// One kernel compiled to one text output (Halide's statement or assembly).
static std::string kernelText(const KernelSpec& spec, const std::string& name, const std::string& target,
                              Halide::OutputFileType type, const char* ext) {
  TempDir dir;
  HalideKernel k = buildKernel(spec, isaOf(target));
  fs::path file = dir.path() / (name + ext);
  k.pipeline.compile_to({{type, file.string()}}, k.args, name, kernelTarget(target, spec));
  return json::readFile(file.string());
}

std::string loweredKernel(const KernelSpec& spec, const std::string& name, const std::string& target) {
  return kernelText(spec, name, target, Halide::OutputFileType::stmt, ".stmt");
}

std::string kernelAssembly(const KernelSpec& spec, const std::string& name, const std::string& target) {
  return kernelText(spec, name, target, Halide::OutputFileType::assembly, ".s");
}

}  // namespace kime::cpu
