// embed-run BATCH.json [--stage S]: runs a batch file (kime-run's format) on the model linked into this
// program and prints the outputs as kime-run does. No .kime file is read at run time.
#include <cstdio>
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

}  // namespace

int main(int argc, char** argv) {
  const bool staged = argc == 4 && std::string(argv[2]) == "--stage";
  if (argc != 2 && !staged) return fail("usage: embed-run BATCH.json [--stage S]");
  kime::tooling::OwnedBatch b;
  try {
    b = kime::tooling::readBatchFile(argv[1]);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  Handles h;
  kime_error err;
  if (kime_model_open_example_model(nullptr, &h.model, &err) != KIME_OK) return fail(err.message);
  kime_executor_options o;
  kime_executor_options_init(&o);
  o.stage = staged ? argv[3] : nullptr;  // NULL: "serve", as kime-run
  if (kime_executor_create(h.model, &o, &h.exec, &err) != KIME_OK) return fail(err.message);

  const kime_batch batch = {b.ids.data(),     b.ids.size(), b.cu.data(),  b.cu.size(),    b.markers.data(),
                            b.markers.size(), b.mcu.data(), b.mcu.size(), b.qtype.data(), b.qtype.size()};
  kime::Outputs out;
  out.logits.resize(b.markers.size());
  out.act.resize(b.cu.empty() ? 0 : b.cu.size() - 1);
  kime_bucket used;
  float* act = out.act.empty() ? nullptr : out.act[0].data();
  if (kime_executor_run(h.exec, &batch, out.logits.data(), out.logits.size(), act, 2 * out.act.size(), &used, &err) !=
      KIME_OK)
    return fail(std::string(argv[1]) + ": " + err.message);
  std::printf("%s\n", kime::tooling::runJson({used.tokens, used.seqs, used.markers}, out).c_str());
  return 0;
}
