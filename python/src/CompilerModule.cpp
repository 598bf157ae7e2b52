// kime._compiler: the compiler and the f64 reference evaluator in-process (kime/compiler.py
// re-exports it). Built only where the compiler is.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <sstream>

#include "Arrays.h"
#include "Errors.h"
#include "checkpoint/Safetensors.h"
#include "graph/Graph.h"
#include "pipeline/Compile.h"
#include "pipeline/OnnxInput.h"
#include "pipeline/Precision.h"
#include "reference/Reference.h"
#include "support/JsonFields.h"
#include "support/Process.h"

namespace py = pybind11;

namespace kime::python {

namespace {

// Runs `work` with the GIL released; its progress lines go to sys.stderr afterwards, and a
// failure is raised as kime.CompileError with the compiler's message.
template <typename F>
void compileStep(F work) {
  std::ostringstream log;
  std::string failure;
  {
    py::gil_scoped_release released;
    try {
      work(log);
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  py::module_::import("sys").attr("stderr").attr("write")(log.str());
  if (!failure.empty()) raise("CompileError", failure);
}

py::object compile(const std::string& graph, std::optional<std::string> weights, const std::string& buckets,
                   std::optional<std::string> output, std::vector<std::string> targets,
                   std::optional<std::vector<std::string>> cudaArchs, std::vector<std::string> cudaMath,
                   const std::string& cpuPrecision, size_t selftest, bool verify, int jobs, bool fusion,
                   const std::string& signKey, bool cache, const std::string& cacheDir,
                   const std::string& selftestFrom) {
  CompileOptions o;
  o.cache = cache, o.cacheDir = cacheDir;
  o.signKey = signKey;
  std::unique_ptr<ImportedOnnx> onnx;
  if (isOnnxPath(graph) != !weights)
    raise("CompileError", isOnnxPath(graph) ? "an ONNX model holds its weights: give weights=None"
                                            : "a Graph needs its checkpoint (weights)");
  if (isOnnxPath(graph))
    compileStep([&](std::ostream&) { onnx = std::make_unique<ImportedOnnx>(graph, OnnxImportOptions{}); });
  o.graph = onnx ? onnx->graph() : graph, o.weights = onnx ? onnx->weights() : *weights, o.buckets = buckets;
  o.targets = targets;
  o.cudaArchs = cudaArchs.value_or(std::vector<std::string>{});
  if (!cudaMath.empty()) o.cudaMath = cudaMath;
  compileStep([&](std::ostream&) { o.cpuPrecision = parseCpuPrecision(cpuPrecision); });
  o.selftest = selftest, o.verify = verify, o.jobs = jobs, o.fusion = fusion;
  o.selftestFrom = selftestFrom;
  applyDefaultTargets(o, !cudaArchs);
  std::unique_ptr<TempDir> dir;
  if (output) {
    o.output = *output;
  } else {
    dir = std::make_unique<TempDir>();
    o.output = (dir->path() / "model.kime").string();
  }
  compileStep([&](std::ostream& log) {
    std::ostringstream text;
    compileModel(o, text, log);
  });
  if (output) return py::str(*output);
  return py::bytes(json::readFile(o.output));
}

py::dict importOnnx(const std::string& model, const std::string& graph, const std::string& weights,
                    const std::string& logits, const std::string& act, const std::vector<std::string>& outputs) {
  Graph g;
  compileStep([&](std::ostream&) {
    OnnxImportOptions o;
    o.logits = logits, o.act = act, o.outputs = outputs;
    const OnnxImport imported = importOnnxFile(model, o);
    writeImport(imported, graph, weights);
    g = imported.graph;
  });
  py::dict out;
  out["nodes"] = g.nodes.size(), out["weights"] = g.weights.size(), out["vocab"] = g.vocab, out["types"] = g.types;
  return out;
}

py::object reference(const std::string& graph, const std::string& weights, py::handle ids, py::handle cu,
                     py::handle markers, py::handle mcu, py::handle qtype) {
  BatchInputs in = batchInputs(ids, cu, markers, mcu, qtype);
  RefOutputs out;
  std::vector<OutputDesc> descs;
  std::optional<Error> err;
  compileStep([&](std::ostream&) {
    const Graph g = readGraphFile(graph);
    descs = outputDescs(g);
    auto ck = Checkpoint::open(weights);
    err = RefSession(g, *ck).evaluate(in.batch(), out);
  });
  if (err) raise(*err);
  return outputArrays(descs, out);
}

}  // namespace

}  // namespace kime::python

PYBIND11_MODULE(_compiler, m) {
  namespace kp = kime::python;
  m.doc() = "kime's compiler and f64 reference evaluator, in-process";
  m.def("compile", &kp::compile, py::arg("graph"), py::arg("weights"), py::arg("buckets"),
        py::arg("output") = py::none(), py::arg("targets") = std::vector<std::string>{},
        py::arg("cuda_archs") = py::none(), py::arg("cuda_math") = std::vector<std::string>{},
        py::arg("cpu_precision") = "f32", py::arg("selftest") = 0, py::arg("verify") = false, py::arg("jobs") = 1,
        py::arg("fusion") = true, py::arg("sign_key") = "", py::arg("cache") = true, py::arg("cache_dir") = "",
        py::arg("selftest_from") = "",
        "Compiles a Graph, its checkpoint and bucket file (or an ONNX model, weights=None) into an artifact, as "
        "kime-compile does: written to "
        "`output` (its path returned), or returned as bytes; signed by the secret key file `sign_key` where given. "
        "Kernels come from the kernel cache (`cache_dir`, default $KIME_CACHE_DIR or ~/.cache/kime) unless `cache` "
        "is False; the bytes are the same either way. `selftest_from` makes a framework's outputs "
        "(kime.onnx.expected_outputs) the self-test. Progress lines go to sys.stderr.");
  m.def("import_onnx", &kp::importOnnx, py::arg("model"), py::arg("graph"), py::arg("weights"), py::arg("logits") = "",
        py::arg("act") = "", py::arg("outputs") = std::vector<std::string>{},
        "Imports an ONNX model (an encoder exported from PyTorch; docs/onnx.md) as kime-import does: its Graph "
        "written to `graph` and its checkpoint to `weights`, with the model's outputs by name (`outputs`: only "
        "those). `logits` and `act` instead make the seed's two outputs of the ONNX outputs they name. Returns the "
        "Graph's size: nodes, weights, vocab, types. A refused model raises kime.CompileError "
        "naming the ONNX node, and nothing is written.");
  m.def("reference", &kp::reference, py::arg("graph"), py::arg("weights"), py::arg("ids"), py::arg("cu"),
        py::arg("markers"), py::arg("mcu"), py::arg("qtype"),
        "The f64 reference evaluator's outputs for one batch: a dict of arrays by output name, or the pair "
        "(logits [M], act [S, 2]) for a Graph whose outputs are exactly those.");
}
