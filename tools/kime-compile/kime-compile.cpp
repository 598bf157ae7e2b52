// kime-compile: Graph + checkpoint + buckets -> one .kime artifact.
#include <filesystem>
#include <iostream>
#include <sstream>

#include "artifact/EmbedSources.h"
#include "buckets/Buckets.h"
#include "codegen/cpu/CpuCodegen.h"
#include "codegen/cuda/CudaKernels.h"
#include "common/ToolOptions.h"
#include "llvm/Support/CommandLine.h"
#include "pipeline/Compile.h"
#include "pipeline/OnnxInput.h"
#include "pipeline/Precision.h"
#include "support/JsonFields.h"

namespace cl = llvm::cl;

static cl::opt<std::string> graphPath(cl::cat(kime::tools::toolOptions()), cl::Positional,
                                      cl::desc("<graph.json | model.onnx>"));
static cl::opt<std::string> weightsPath(
    cl::cat(kime::tools::toolOptions()), "weights",
    cl::desc("the checkpoint (safetensors) of a Graph (an ONNX model holds its own)"),
    cl::value_desc("model.safetensors"));
static cl::opt<std::string> logitsName(cl::cat(kime::tools::toolOptions()), "logits",
                                       cl::desc("an ONNX model's output that is the logits (where several fit)"),
                                       cl::value_desc("NAME"));
static cl::opt<std::string> actName(cl::cat(kime::tools::toolOptions()), "act",
                                    cl::desc("an ONNX model's output that is act (where several fit)"),
                                    cl::value_desc("NAME"));
static cl::list<std::string> outputNames(cl::cat(kime::tools::toolOptions()), "output",
                                         cl::desc("an ONNX model's output to keep (repeatable; default: every one)"),
                                         cl::value_desc("NAME"));
static cl::opt<std::string> bucketsPath(cl::cat(kime::tools::toolOptions()), "buckets",
                                        cl::desc("the bucket file (stages of buckets)"),
                                        cl::value_desc("buckets.json"));
static cl::opt<std::string> refitPath(
    cl::cat(kime::tools::toolOptions()), "refit",
    cl::desc("new weights for this artifact: its Graph, buckets, targets and options, and its code byte for byte, "
             "with the checkpoint of --weights packed as a full compile packs it (give no graph, --buckets or "
             "targets)"),
    cl::value_desc("OLD.kime"));
static cl::opt<bool> dropSelftest(cl::cat(kime::tools::toolOptions()), "drop-selftest",
                                  cl::desc("with --refit: leave the self-test section out (with a warning) instead of "
                                           "computing the reference's outputs for the new weights"));
static cl::opt<bool> update(
    cl::cat(kime::tools::toolOptions()), "update",
    cl::desc("where -o names an artifact this build of kime-compile made from the same graph, buckets and options, "
             "refit it with --weights (the same bytes as a full compile, in a fraction of the time); else compile in "
             "full"));
static cl::list<std::string> targets(cl::cat(kime::tools::toolOptions()), "target",
                                     cl::desc("CPU targets: x86-64-avx2, x86-64-avx512, arm-64, x86-64-avx512bf16 "
                                              "(--cpu-precision bf16 only), x86-64-avx512vnni (--cpu-precision int8 "
                                              "or int8pairs only); comma separated or repeated"),
                                     cl::CommaSeparated, cl::value_desc("target"));
static cl::opt<std::string> outPath(cl::cat(kime::tools::toolOptions()), "o",
                                    cl::desc("the artifact to write (with --emit: the file to print to)"),
                                    cl::value_desc("model.kime"));
static cl::opt<std::string> emit(
    cl::cat(kime::tools::toolOptions()), "emit",
    cl::desc(
        "print a stage of the pipeline instead: graph (an ONNX model's Graph: -o GRAPH.json, and its checkpoint "
        "beside it as GRAPH.safetensors), mlir (planned IR per bucket), plan (the plans as text), manifest (the "
        "artifact's manifest as JSON), schedule (each kernel's CPU schedule per target), halide (lowered kernels), "
        "asm (their assembly for the first target), cuda (the generated CUDA C++)"),
    cl::value_desc("graph|mlir|plan|schedule|halide|asm|cuda"));
static cl::list<std::string> cudaMath(cl::cat(kime::tools::toolOptions()), "cuda-math",
                                      cl::desc("PTX for these linear-layer arithmetics: tf32 (tensor cores), f32 "
                                               "(exact FMA); default both, --emit=cuda shows the first"),
                                      cl::CommaSeparated, cl::value_desc("tf32|f32"));
static cl::list<std::string> cudaArchs(
    cl::cat(kime::tools::toolOptions()), "cuda-arch",
    cl::desc("PTX for these CUDA archs, each checked by ptxas (default sm_80,sm_90 where this build has NVRTC, none "
             "with --cpu-precision bf16; \"none\" for no CUDA code)"),
    cl::CommaSeparated, cl::value_desc("sm_NN"));
static cl::opt<bool> verify(
    cl::cat(kime::tools::toolOptions()), "verify",
    cl::desc("run every compiled bucket against the reference evaluator on generated batches; fail on a mismatch"));
static cl::opt<bool> noFusion(
    cl::cat(kime::tools::toolOptions()), "no-fusion",
    cl::desc("no fused kernels: each linear without its epilogue and every other op a generic kernel of "
             "its own (to measure what fusion saves; the outputs are the same)"));
static cl::opt<bool> noPruneRows(
    cl::cat(kime::tools::toolOptions()), "no-prune-rows",
    cl::desc("compute the last layer for every token, not only for the rows the heads read (kime-prune-rows off)"));
static cl::opt<std::string> cpuPrecision(
    cl::cat(kime::tools::toolOptions()), "cpu-precision",
    cl::desc("the CPU linears' arithmetic: f32 (default), or bf16 (opt-in: weights in bf16 and inputs rounded to bf16 "
             "for AVX512-BF16 dot products, f32 sums; target x86-64-avx512bf16, no CUDA code), or int8 (opt-in: "
             "weights in int8 per output channel, each row of inputs quantized at run time, int32 sums for VNNI; "
             "target x86-64-avx512vnni, no CUDA code), or int8pairs (int8 with each pair of a channel's weights "
             "bounded, |w[2p]| + |w[2p+1]| <= 128, so that AVX2 multiplies u8 by s8 (vpmaddubsw) without "
             "saturating: faster on AVX2, coarser weights)"),
    cl::value_desc("f32|bf16|int8|int8pairs"), cl::init("f32"));
static cl::opt<int> jobs(cl::cat(kime::tools::toolOptions()), "j", cl::desc("kernels compiled at once"), cl::init(1));
static cl::opt<unsigned> selftest(
    cl::cat(kime::tools::toolOptions()), "selftest",
    cl::desc("store N batches drawn across every bucket (edge cases first) and the f64 reference's outputs in the "
             "artifact, for kime-run --selftest on the device"),
    cl::value_desc("N"), cl::init(0));
static cl::opt<std::string> selftestFrom(
    cl::cat(kime::tools::toolOptions()), "selftest-from",
    cl::desc("the self-test of a framework's outputs on sample batches (kime.onnx.expected_outputs writes them; "
             "docs/onnx.md), checked against the reference first"),
    cl::value_desc("EXPECTED.json"));
static cl::opt<std::string> signKey(
    cl::cat(kime::tools::toolOptions()), "sign",
    cl::desc("sign the artifact with this secret key (kime-keygen's): a runtime given the public key then loads "
             "it, and refuses it once changed"),
    cl::value_desc("KEY.key"));
static cl::opt<bool> noCache(cl::cat(kime::tools::toolOptions()), "no-cache",
                             cl::desc("compile every kernel, neither looking in the kernel cache nor filling it"));
static cl::opt<std::string> cacheDir(
    cl::cat(kime::tools::toolOptions()), "cache-dir",
    cl::desc("the kernel cache's directory (default $KIME_CACHE_DIR, else $XDG_CACHE_HOME/kime or ~/.cache/kime; "
             "bounded by $KIME_CACHE_MAX_MB, default 2048)"),
    cl::value_desc("DIR"));
static cl::opt<std::string> embed(
    cl::cat(kime::tools::toolOptions()), "embed",
    cl::desc("also write NAME.h and NAME.c beside the artifact: C sources that link it into a program "
             "(kime_model_open_NAME, constants for its stages and buckets)"),
    cl::value_desc("NAME"));

// --embed: the C sources beside the artifact just written.
static void writeEmbed(const kime::CompileOptions& o) {
  namespace fs = std::filesystem;
  const fs::path artifact = fs::absolute(o.output);
  kime::writeEmbedSources(artifact.parent_path().string(), embed,
                          kime::embedSources(embed, artifact.string(), kime::readBucketsFile(o.buckets)));
}

// What --refit takes from the artifact may not be given too; without --refit, a graph and buckets must be.
static void checkInputs() {
  const bool refit = !refitPath.empty();
  if (dropSelftest && !refit) throw std::runtime_error("--drop-selftest goes with --refit");
  if (update && refit) throw std::runtime_error("--update refits -o itself: give it without --refit");
  const bool onnx = kime::isOnnxPath(graphPath);
  if (emit == "graph") {
    if (!onnx || outPath.empty())
      throw std::runtime_error("--emit=graph writes an ONNX model's Graph: give MODEL.onnx and -o");
    return;
  }
  if (!refit && (graphPath.empty() || bucketsPath.empty()))
    throw std::runtime_error("give a graph and --buckets (or --refit OLD.kime)");
  if (onnx && !weightsPath.empty()) throw std::runtime_error("an ONNX model holds its weights: give no --weights");
  if (!onnx && weightsPath.empty()) throw std::runtime_error("give the Graph's checkpoint (--weights)");
  if (!onnx && (!logitsName.empty() || !actName.empty() || !outputNames.empty()))
    throw std::runtime_error("--logits, --act and --output name an ONNX model's outputs");
  if (refit &&
      (!graphPath.empty() || !bucketsPath.empty() || !targets.empty() || !cudaArchs.empty() || !cudaMath.empty() ||
       cpuPrecision.getNumOccurrences() || noFusion || noPruneRows || selftest.getNumOccurrences() || !embed.empty()))
    throw std::runtime_error("--refit takes the graph, buckets, targets and options from " + refitPath +
                             ": give only --weights, -o, --verify, -j, --sign and --drop-selftest");
}

// The command line's options (but --cpu-precision, parsed with the inputs' checks) into `o`;
// an ONNX model's Graph and checkpoint where one was imported.
static void setOptions(kime::CompileOptions& o, const kime::ImportedOnnx* onnx) {
  o.refit = refitPath;
  o.dropSelftest = dropSelftest;
  o.update = update;
  o.graph = onnx ? onnx->graph() : graphPath;
  o.weights = onnx ? onnx->weights() : weightsPath;
  o.buckets = bucketsPath;
  o.output = outPath;
  o.targets.assign(targets.begin(), targets.end());
  o.cudaArchs.assign(cudaArchs.begin(), cudaArchs.end());
  kime::applyDefaultTargets(o, cudaArchs.empty());
  if (o.cudaArchs == std::vector<std::string>{"none"}) o.cudaArchs.clear();
  o.signKey = signKey;
  if (!cudaMath.empty()) o.cudaMath.assign(cudaMath.begin(), cudaMath.end());
  o.verify = verify;
  o.pruneRows = !noPruneRows;
  o.fusion = !noFusion;
  o.jobs = jobs;
  o.selftest = selftest;
  o.selftestFrom = selftestFrom;
  o.cache = !noCache;
  o.cacheDir = cacheDir;
}

int main(int argc, char** argv) {
  kime::tools::parseToolOptions(argc, argv, "kime ahead-of-time graph compiler\n");
  kime::CompileOptions o;
  try {
    checkInputs();
    o.cpuPrecision = kime::parseCpuPrecision(cpuPrecision);
  } catch (const std::exception& e) {
    std::cerr << "kime-compile: error: " << e.what() << "\n";
    return 2;
  }
  std::unique_ptr<kime::ImportedOnnx> onnx;
  if (kime::isOnnxPath(graphPath)) try {
      kime::OnnxImportOptions options;
      options.logits = logitsName, options.act = actName;
      options.seedOutputs = logitsName.getNumOccurrences() || actName.getNumOccurrences();
      options.outputs.assign(outputNames.begin(), outputNames.end());
      onnx = std::make_unique<kime::ImportedOnnx>(graphPath, options);
      if (emit == "graph") {
        const std::string stem = outPath.substr(0, outPath.rfind('.'));
        kime::writeImport(onnx->model(), outPath, stem + ".safetensors");
        return 0;
      }
    } catch (const std::exception& e) {
      std::cerr << "kime-compile: error: " << e.what() << "\n";
      return 1;
    }
  setOptions(o, onnx.get());
  try {
    o.emit = kime::parseEmit(emit);
    if (!embed.empty() && o.emit != kime::Emit::None)
      throw std::runtime_error("--embed writes C sources for an artifact, not with --emit");
    if (o.emit != kime::Emit::None && !o.output.empty()) {
      // --emit with -o: the text goes to that file, written whole or not at all.
      std::ostringstream text;
      kime::compileModel(o, text, std::cerr);
      kime::json::writeFileAtomic(o.output, text.str());
      return 0;
    }
    if (!embed.empty()) {
      kime::checkEmbedName(embed);
      if (o.output.empty()) throw std::runtime_error("--embed needs -o (the sources are written beside the artifact)");
    }
    kime::compileModel(o, std::cout, std::cerr);
    if (!embed.empty()) writeEmbed(o);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kime-compile: error: " << e.what() << "\n";
    return 1;
  }
}
