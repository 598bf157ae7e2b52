// kime._runtime: the runtime library for Python (kime/__init__.py re-exports it). Models from a
// file or bytes, executors that run numpy batches with the GIL released, the self-test.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <mutex>

#include "Arrays.h"
#include "Errors.h"
#include "kime/runtime.h"

namespace py = pybind11;

namespace kime::python {

namespace {

template <typename T>
T unwrap(Expected<T> e) {
  if (!e) raise(e.error());
  return std::move(*e);
}

py::tuple bucketTuple(const Bucket& b) { return py::make_tuple(b.tokens, b.seqs, b.markers); }

py::list outputList(const std::vector<OutputDesc>& outputs) {
  py::list out;
  for (const OutputDesc& o : outputs) out.append(py::make_tuple(o.name, outputKindName(o.kind), o.width));
  return out;
}

// A model and, for one opened from bytes, the aligned copy it reads (kept alive with it).
struct PyModel {
  std::shared_ptr<Model> model;

  static ModelOptions options(const std::string& cpuTarget, const std::string& sourceName,
                              const std::vector<std::string>& trustedKeys) {
    ModelOptions o;
    o.cpuTarget = cpuTarget;
    o.sourceName = sourceName;
    o.trustedKeys = trustedKeys;
    return o;
  }

  static PyModel open(const std::string& path, const std::string& cpuTarget,
                      const std::vector<std::string>& trustedKeys) {
    return {unwrap(Model::open(path, options(cpuTarget, "", trustedKeys)))};
  }
  static PyModel fromBytes(const py::bytes& data, const std::string& cpuTarget,
                           const std::vector<std::string>& trustedKeys) {
    std::string_view view = data;
    // openMemory reads the buffer in place and wants it KIME_MEMORY_ALIGN aligned.
    auto buffer = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(std::aligned_alloc(64, (view.size() + 63) / 64 * 64)),
                                           std::free);
    if (!buffer) throw std::bad_alloc();
    std::memcpy(buffer.get(), view.data(), view.size());
    auto model =
        unwrap(Model::openMemory(buffer.get(), view.size(), options(cpuTarget, "artifact from bytes", trustedKeys)));
    struct Holder {
      std::shared_ptr<uint8_t> buffer;
      std::shared_ptr<Model> model;
    };
    auto holder = std::make_shared<Holder>(Holder{buffer, model});
    return {std::shared_ptr<Model>(holder, holder->model.get())};
  }
};

// An executor, serialized: Python threads that share it take turns (kime's executors are not
// thread-safe), each batch run with the GIL released.
struct PyExecutor {
  std::shared_ptr<Model> model;
  std::unique_ptr<Executor> exec;
  std::mutex mutex;

  py::object run(py::handle ids, py::handle cu, py::handle markers, py::handle mcu, py::handle qtype,
                 py::handle tokenTypes) {
    BatchInputs in = batchInputs(ids, cu, markers, mcu, qtype, tokenTypes);
    Outputs out;
    std::optional<Error> err;
    {
      py::gil_scoped_release released;
      std::lock_guard<std::mutex> lock(mutex);
      err = exec->run(in.batch(), out);
    }
    if (err) raise(*err);
    return outputArrays(model->outputs(), out);
  }

  py::dict stats() {
    std::lock_guard<std::mutex> lock(mutex);
    const kime_stats s = exec->stats();
    py::list misses, buckets;
    for (uint32_t i = 0; i < s.no_bucket_kept; ++i)
      misses.append(
          py::make_tuple(s.no_bucket_sizes[i].tokens, s.no_bucket_sizes[i].seqs, s.no_bucket_sizes[i].markers));
    for (size_t i = 0;; ++i) {
      auto b = exec->bucketStats(i);
      if (!b) break;
      py::dict d;
      d["bucket"] = py::make_tuple(b->bucket.tokens, b->bucket.seqs, b->bucket.markers);
      d["batches"] = b->batches;
      buckets.append(d);
    }
    py::dict d;
    d["batches"] = s.batches, d["bad_batches"] = s.bad_batches, d["no_bucket"] = s.no_bucket;
    d["no_bucket_sizes"] = misses, d["buckets"] = buckets;
    return d;
  }
};

py::dict selftest(const PyModel& m, const std::string& device, size_t threads) {
  SelftestReport r;
  std::optional<Error> err;
  {
    py::gil_scoped_release released;
    auto report = runSelftest(m.model, {threads, device, "tf32"});
    if (report)
      r = std::move(*report);
    else
      err = report.error();
  }
  if (err) raise(*err);
  py::list buckets;
  for (const SelftestBucket& b : r.buckets) {
    py::dict d;
    d["stage"] = b.stage, d["bucket"] = bucketTuple(b.bucket), d["batches"] = b.batches;
    d["max_diff"] = b.maxDiff, d["abs"] = b.abs, d["rel"] = b.rel, d["failure"] = b.failure;
    buckets.append(d);
  }
  py::dict d;
  d["passed"] = r.passed(), d["device"] = r.device, d["text"] = r.text(), d["buckets"] = buckets;
  return d;
}

void defineModel(py::module_& m) {
  py::class_<PyModel>(m, "Model", "A compiled artifact, loaded (mapped, checked, its CPU code loaded).")
      .def(py::init(&PyModel::open), py::arg("path"), py::arg("cpu_target") = "",
           py::arg("trusted_keys") = std::vector<std::string>{},
           "Opens the artifact at `path`; `cpu_target` forces one of its CPU code sections (e.g. x86-64-avx2); "
           "with `trusted_keys` (the texts of .pub files) it must be signed by one of them (else BadArtifact).")
      .def_static("from_bytes", &PyModel::fromBytes, py::arg("data"), py::arg("cpu_target") = "",
                  py::arg("trusted_keys") = std::vector<std::string>{},
                  "The artifact held in `data` (copied once, aligned, and read in place).")
      .def_property_readonly("name", [](const PyModel& p) { return p.model->name(); })
      .def_property_readonly("vocab", [](const PyModel& p) { return p.model->vocab(); })
      .def_property_readonly("types", [](const PyModel& p) { return p.model->types(); })
      .def_property_readonly("stages", [](const PyModel& p) { return p.model->stages(); })
      .def_property_readonly(
          "padding_id", [](const PyModel& p) { return p.model->paddingId(); },
          "A token id no batch may hold (an imported model's padding id); -1: none.")
      .def_property_readonly(
          "outputs", [](const PyModel& p) { return outputList(p.model->outputs()); },
          "The outputs as (name, \"per-marker\" or \"per-sequence\", width), in order.")
      .def_property_readonly("default_stage", [](const PyModel& p) { return p.model->defaultStage(); })
      .def_property_readonly(
          "cpu_target", [](const PyModel& p) { return p.model->cpuTarget(); }, "The CPU code section that was loaded.")
      .def(
          "buckets",
          [](const PyModel& p, const std::string& stage) {
            py::list out;
            for (const Bucket& b : p.model->buckets(stage)) out.append(bucketTuple(b));
            return out;
          },
          py::arg("stage"), "The stage's buckets as (tokens, seqs, markers), in the order they are tried.")
      .def(
          "inspect", [](const PyModel& p) { return p.model->inspect(); },
          "Stages, buckets and their arenas, kernels, sections and sizes, as kime-run --inspect prints them.")
      .def(
          "executor",
          [](const PyModel& p, std::optional<std::string> stage, size_t threads, const std::string& device,
             const std::string& cudaMath) {
            auto e = std::make_unique<PyExecutor>();
            e->model = p.model;
            e->exec =
                unwrap(Executor::create(p.model, stage.value_or(p.model->defaultStage()), {threads, device, cudaMath}));
            return e;
          },
          py::arg("stage") = py::none(), py::arg("threads") = 0, py::arg("device") = "cpu",
          py::arg("cuda_math") = "tf32", "An executor of one stage (default: the model's default stage).")
      .def("selftest", &selftest, py::arg("device") = "cpu", py::arg("threads") = 0,
           "Runs the artifact's self-test section; a dict with passed, device, text and per-bucket results.");
}

void defineExecutor(py::module_& m) {
  py::class_<PyExecutor>(m, "Executor", "Runs batches of one stage, each in the smallest bucket that holds it.")
      .def("run", &PyExecutor::run, py::arg("ids"), py::arg("cu"), py::arg("markers") = py::none(),
           py::arg("mcu") = py::none(), py::arg("qtype") = py::none(), py::arg("token_types") = py::none(),
           "Runs one batch; returns a dict of float32 arrays by output name ([M] or [M, K] per marker, [S] or "
           "[S, K] per sequence), or the pair (logits [M], act [S, 2]) for a model whose outputs are exactly those. "
           "Arrays of any integer dtype are taken (each value checked to fit); uint32 (qtype: uint8) contiguous "
           "ones are read without a copy. markers=None and mcu=None: a marker at every token (a tagger); "
           "qtype=None: type 0 for every sequence; token_types: a type per token (sentence pairs), read by a "
           "model's token_types instead of each sequence's qtype.")
      .def_property_readonly(
          "outputs", [](PyExecutor& e) { return outputList(e.model->outputs()); },
          "The model's outputs as (name, \"per-marker\" or \"per-sequence\", width), in order.")
      .def(
          "prepare",
          [](PyExecutor& e, size_t index) {
            std::lock_guard<std::mutex> lock(e.mutex);
            if (auto err = e.exec->prepare(index)) raise(*err);
          },
          py::arg("index"), "Builds bucket `index`'s plan now rather than on first use.")
      .def("warm",
           [](PyExecutor& e) {
             std::lock_guard<std::mutex> lock(e.mutex);
             py::list out;
             for (const Bucket& b : e.exec->warm()) out.append(bucketTuple(b));
             return out;
           })
      .def("stats", &PyExecutor::stats, "Batches run and refused, and each bucket's batches.")
      .def_property_readonly("stage", [](PyExecutor& e) { return e.exec->stage(); })
      .def_property_readonly("device", [](PyExecutor& e) { return e.exec->deviceDescription(); })
      .def("caps", [](PyExecutor& e) {
        const Caps c = e.exec->caps();
        py::dict d;
        d["name"] = c.name, d["threads"] = c.threads, d["graphs"] = c.graphs, d["unified_memory"] = c.unifiedMemory;
        return d;
      });
}

}  // namespace

}  // namespace kime::python

using namespace kime::python;

PYBIND11_MODULE(_runtime, m) {
  m.doc() = "kime's runtime: compiled artifacts loaded and run on numpy batches";
  defineModel(m);
  defineExecutor(m);
  // For the tests: the address run() would read `array` at, i.e. whether it is borrowed as it is.
  m.def("_input_address",
        [](py::handle array) { return reinterpret_cast<uintptr_t>(input<uint32_t>(array, "array").span.data); });
}
