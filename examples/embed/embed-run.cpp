// embed-run BATCH.json [--stage S] [--trust KEY.pub]: runs a batch file (kime-run's format) on the
// model linked into this program and prints the outputs as kime-run does. No .kime file is read at
// run time. --trust: only if the linked-in artifact is signed by that key.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "example_model.h"
#include "kime/tooling/BatchFile.h"

namespace {

// The handles, released on every way out.
struct Handles {
  kime_model* model = nullptr;
  kime_executor* exec = nullptr;
  ~Handles() {
    kime_executor_release(exec);
    kime_model_release(model);
  }
};

int fail(const std::string& what) {
  std::fprintf(stderr, "embed-run: %s\n", what.c_str());
  return 1;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error(path + ": cannot read");
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string batchFile, stage, trustFile;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--stage" || a == "--trust") && i + 1 < argc)
      (a == "--stage" ? stage : trustFile) = argv[++i];
    else if (batchFile.empty() && a[0] != '-')
      batchFile = a;
    else
      return fail("usage: embed-run BATCH.json [--stage S] [--trust KEY.pub]");
  }
  if (batchFile.empty()) return fail("usage: embed-run BATCH.json [--stage S] [--trust KEY.pub]");
  kime::tooling::OwnedBatch b;
  std::string trustedKey;
  try {
    b = kime::tooling::readBatchFile(batchFile);
    if (!trustFile.empty()) trustedKey = readFile(trustFile);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  Handles h;
  kime_error err;
  // --trust: the linked-in artifact must be signed by that key (kime_add_model's SIGN).
  kime_model_options mo;
  kime_model_options_init(&mo);
  const char* keys[] = {trustedKey.c_str()};
  mo.trusted_keys = keys;
  mo.trusted_key_count = trustFile.empty() ? 0 : 1;
  if (kime_model_open_example_model(&mo, &h.model, &err) != KIME_OK) return fail(err.message);
  kime_executor_options o;
  kime_executor_options_init(&o);
  o.stage = stage.empty() ? nullptr : stage.c_str();  // NULL: "serve", as kime-run
  if (kime_executor_create(h.model, &o, &h.exec, &err) != KIME_OK) return fail(err.message);

  const kime_batch batch = {b.ids.data(),     b.ids.size(), b.cu.data(),  b.cu.size(),    b.markers.data(),
                            b.markers.size(), b.mcu.data(), b.mcu.size(), b.qtype.data(), b.qtype.size()};
  // Each output by its description: rows (the batch's markers or sequences) times its width.
  std::vector<kime::OutputDesc> descs;
  kime::Outputs out;
  std::vector<float*> arrays;
  std::vector<size_t> caps;
  const size_t seqs = b.cu.empty() ? 0 : b.cu.size() - 1;
  for (size_t i = 0; i < kime_model_output_count(h.model); ++i) {
    kime_output_info info;
    if (kime_model_output(h.model, i, &info, &err) != KIME_OK) return fail(err.message);
    descs.push_back({info.name, kime::OutputKind(info.kind), info.width});
    out.values.emplace_back(descs.back().rows(seqs, b.markers.size()) * info.width);
  }
  for (std::vector<float>& v : out.values) arrays.push_back(v.data()), caps.push_back(v.size());
  kime_bucket used;
  if (kime_executor_run_outputs(h.exec, &batch, arrays.data(), caps.data(), arrays.size(), &used, &err) != KIME_OK)
    return fail(batchFile + ": " + err.message);
  std::printf("%s\n", kime::tooling::runJson({used.tokens, used.seqs, used.markers}, descs, out).c_str());
  return 0;
}
