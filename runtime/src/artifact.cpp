// Reading a `.kime` file: mapping, checks, manifest.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "kime/kime.h"
#include "kime/manifest_keys.h"
#include "model_impl.h"

namespace kime {

using Json = nlohmann::json;

namespace {

struct Fail {
  std::string message;
};

std::string hexAddress(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

// Reads the manifest; any missing or mistyped field throws nlohmann's error, reported as a
// corrupt manifest by the caller. Names are plan.h's.
template <typename Enum, int N>
Enum named(const char* const (&names)[N], const std::string& s, const char* what) {
  const int i = kime_name_index(names, N, s.c_str());
  if (i < 0) throw Fail{std::string("unknown ") + what + " \"" + s + "\""};
  return Enum(i);
}

kime_kernel_type dtype(const std::string& s) {
  const kime_dtype d = named<kime_dtype>(kime_dtype_names, s, "dtype");
  return {kime_dtype_codes[d], kime_dtype_bits[d], 1};
}

ArgInfo argOf(const Json& j, const ModelImpl& m) {
  ArgInfo a;
  std::string src = j.at(key::src).get<std::string>();
  if (src == key::srcWeight) {
    a.source = ArgInfo::Source::Weight;
    a.weight = j.at(key::id).get<int64_t>();
    if (a.weight < 0 || size_t(a.weight) >= m.weights.size()) throw Fail{"weight id out of range"};
    const WeightInfo& w = m.weights[size_t(a.weight)];
    a.rowCount = w.shape[0];
    a.cols = w.shape.size() > 1 ? w.shape[1] : 0;
    a.type = w.type;
    return a;
  }
  a.source = src == key::srcArena ? ArgInfo::Source::Arena : ArgInfo::Source::Input;
  if (src != key::srcArena && src != key::srcInput) throw Fail{"unknown argument source \"" + src + "\""};
  if (a.source == ArgInfo::Source::Arena)
    a.offset = j.at(key::offset).get<int64_t>();
  else
    a.input = named<InputId>(kime_plan_input_names, j.at(key::name).get<std::string>(), "input");
  a.rows = named<RowSym>(kime_row_symbol_names, j.at(key::rows).get<std::string>(), "row count");
  a.rowCount = j.at(key::bound).get<int64_t>();
  a.cols = j.at(key::cols).get<int64_t>();
  a.type = dtype(j.at(key::dtype).get<std::string>());
  if (a.rowCount < 0 || a.cols < 0) throw Fail{"negative size"};
  return a;
}

// A kernel's slots: names of its class's slots (plan.h), in the class's order, every required one
// present, the output last.
std::vector<const kime_arg_slot*> slotsOf(const Json& names, kime_kernel_class c, const std::string& kernel) {
  int count = 0;
  const kime_arg_slot* table = kime_class_slots(c, &count);
  std::vector<const kime_arg_slot*> out;
  int at = 0;
  for (const Json& n : names) {
    const std::string name = n.get<std::string>();
    int i = 0;
    while (i < count && name != table[i].name) ++i;
    if (i == count) i = -1;
    if (i < 0)
      throw Fail{"kernel " + kernel + ": \"" + name + "\" is no argument of the " + kime_kernel_class_names[c] +
                 " class (plan.h)"};
    if (i < at) throw Fail{"kernel " + kernel + ": argument \"" + name + "\" is out of its class's order"};
    for (int j = at; j < i; ++j)
      if (!table[j].optional)
        throw Fail{"kernel " + kernel + " has no \"" + table[j].name + "\" argument, which its class needs"};
    out.push_back(&table[i]);
    at = i + 1;
  }
  if (at != count)
    throw Fail{"kernel " + kernel + " has no \"" + table[count - 1].name + "\" argument, which its class needs"};
  return out;
}

// A step's arguments are its kernel's slots, one each, of the slot's element type (a packed
// weight may be bf16 or i8 where the slot is f32: a bf16 or int8 linear's).
void checkStepArgs(const StepInfo& si, const ModelImpl& m, const Bucket& b) {
  const std::vector<const kime_arg_slot*>& slots = m.kernelSlots[si.kernel];
  const std::string where =
      "bucket " + describe(b) + ", step \"" + si.node + "\" (kernel " + m.kernelNames[si.kernel] + ")";
  if (si.args.size() != slots.size())
    throw Fail{where + ": " + std::to_string(si.args.size()) + " arguments for its " + std::to_string(slots.size()) +
               " slots"};
  for (size_t i = 0; i < slots.size(); ++i) {
    const kime_kernel_type& t = si.args[i].type;
    const kime_dtype want = slots[i]->dtype;
    const bool same = t.code == kime_dtype_codes[want] && t.bits == kime_dtype_bits[want];
    const bool narrowWeight = si.args[i].source == ArgInfo::Source::Weight && want == KIME_DTYPE_F32 &&
                              (t.code == 4 || (t.code == 0 && t.bits == 8));
    if (!same && !narrowWeight)
      throw Fail{where + ": argument \"" + slots[i]->name + "\" is not " + kime_dtype_names[want]};
  }
}

void readManifest(const std::string& text, ModelImpl& m) {
  Json j = Json::parse(text);
  if (j.at(key::format).get<int>() != int(KIME_FORMAT_VERSION)) throw Fail{"manifest format mismatch"};
  m.name = j.at(key::model).get<std::string>();
  m.vocab = j.at(key::vocab).get<size_t>();
  m.types = j.at(key::types).get<size_t>();
  m.maxSeqLen = j.at(key::maxSeqLen).get<size_t>();
  for (const Json& g : j.at(key::gatherLimits)) {
    const InputId index = named<InputId>(kime_plan_input_names, g.at(key::index).get<std::string>(), "input");
    if (index != KIME_INPUT_IDS && index != KIME_INPUT_QTYPE && index != KIME_INPUT_TOKPOS && index != KIME_INPUT_CU &&
        index != KIME_INPUT_MCU && index != KIME_INPUT_MARKERS)
      throw Fail{"a gather limit on \"" + std::string(kime_plan_input_names[index]) + "\", which is no batch index"};
    m.gatherLimits.push_back({index, g.at(key::rows).get<size_t>(), g.at(key::node).get<std::string>(),
                              g.at(key::table).get<std::string>()});
  }
  for (const Json& w : j.at(key::weights)) {
    WeightInfo wi{w.at(key::name).get<std::string>(), w.at(key::layout).get<std::string>(),
                  w.at(key::shape).get<std::vector<int64_t>>(), w.at(key::offset).get<uint64_t>()};
    if (w.contains(key::dtype)) wi.type = dtype(w.at(key::dtype).get<std::string>());
    if (wi.type.code != 2 && wi.type.code != 4 && !(wi.type.code == 0 && wi.type.bits == 8))
      throw Fail{"weight \"" + wi.name + "\" is not f32, bf16 or i8"};
    for (int64_t d : wi.shape)
      if (d <= 0) throw Fail{"weight \"" + wi.name + "\" has a size <= 0"};
    if (wi.shape.empty() || wi.offset % 4 || wi.offset + wi.bytes() > m.weightBytes)
      throw Fail{"weight \"" + wi.name + "\" lies outside the weights section"};
    m.weights.push_back(std::move(wi));
  }
  for (const Json& k : j.at(key::kernels)) {
    m.kernelNames.push_back(k.at(key::name).get<std::string>());
    m.kernelClasses.push_back(
        named<kime_kernel_class>(kime_kernel_class_names, k.at(key::kind).get<std::string>(), "kernel class"));
    m.kernelSlots.push_back(slotsOf(k.at(key::slots), m.kernelClasses.back(), m.kernelNames.back()));
  }
  for (const Json& b : j.at(key::buckets)) {
    BucketInfo bi;
    bi.bucket = {b.at(key::tokens).get<uint32_t>(), b.at(key::seqs).get<uint32_t>(),
                 b.at(key::markers).get<uint32_t>()};
    bi.arena = b.at(key::arena).get<int64_t>();
    for (const Json& s : b.at(key::steps)) {
      StepInfo si;
      si.kernel = s.at(key::kernel).get<size_t>();
      if (si.kernel >= m.kernelNames.size()) throw Fail{"kernel index out of range"};
      si.node = s.at(key::node).get<std::string>();
      si.flops = s.at(key::flops).get<double>();
      for (const Json& a : s.at(key::args)) si.args.push_back(argOf(a, m));
      checkStepArgs(si, m, bi.bucket);
      si.flopRows = si.args.back().rows;
      for (CudaMath slot : {kTf32, kF32}) {
        const char* math = cudaMathName(slot);
        if (!s.contains(key::cuda) || !s.at(key::cuda).contains(math)) continue;
        const Json& c = s.at(key::cuda).at(math);
        StepInfo::Launch& l = si.launch[slot];
        l.gridX = c.at(key::grid).at(0).get<uint32_t>();
        l.gridY = c.at(key::grid).at(1).get<uint32_t>();
        l.block = c.at(key::block).get<uint32_t>();
        if (!l.gridX || !l.gridY || !l.block || l.block > 1024) throw Fail{"a step's CUDA launch is out of range"};
      }
      bi.steps.push_back(std::move(si));
    }
    bi.logits = argOf(b.at(key::logits), m);
    bi.act = argOf(b.at(key::act), m);
    // Every arena argument must lie inside the arena, at its bound.
    auto inside = [&](const ArgInfo& a) {
      if (a.source != ArgInfo::Source::Arena) return;
      int64_t bytes = a.rowCount * std::max<int64_t>(a.cols, 1) * 4;
      if (a.offset < 0 || a.offset % 4 || a.offset + bytes > bi.arena)
        throw Fail{"an argument lies outside its bucket's arena"};
    };
    for (const StepInfo& s : bi.steps)
      for (const ArgInfo& a : s.args) inside(a);
    inside(bi.logits);
    inside(bi.act);
    m.buckets.push_back(std::move(bi));
  }
  for (const Json& s : j.at(key::stages)) {
    StageInfo si{s.at(key::name).get<std::string>(), s.at(key::buckets).get<std::vector<size_t>>()};
    for (size_t b : si.buckets)
      if (b >= m.buckets.size()) throw Fail{"stage \"" + si.name + "\" names a bucket out of range"};
    m.stages.push_back(std::move(si));
  }
}

}  // namespace

ModelImpl::~ModelImpl() {
  if (code) {
    // The kernels' thread pool lives in their code: stop it before unloading it.
    if (auto stop = reinterpret_cast<void (*)()>(code->symbol("halide_shutdown_thread_pool"))) stop();
    code.reset();
  }
  if (map && ownsMap) munmap(const_cast<uint8_t*>(map), mapSize);
}

const SectionInfo* ModelImpl::section(const std::string& n) const {
  for (const SectionInfo& s : sections)
    if (s.name == n) return &s;
  return nullptr;
}

std::vector<std::string> ModelImpl::sectionsUnder(const std::string& prefix) const {
  std::vector<std::string> out;
  for (const SectionInfo& s : sections)
    if (s.name.compare(0, prefix.size(), prefix) == 0) out.push_back(s.name.substr(prefix.size()));
  return out;
}

namespace {

// The container (readContainer), then the manifest of the bytes at m.map.
std::optional<Error> checkArtifact(ModelImpl& m) {
  auto fail = [&](const std::string& msg) { return std::optional<Error>(Error::unsupported(m.path + ": " + msg)); };
  if (auto why = readContainer(m.map, m.mapSize, m.sections)) return fail(*why);
  if (!m.trusted.empty())
    if (auto why = checkSignature(m.map, m.sections, m.trusted)) return fail(*why);
  const SectionInfo* manifest = m.section(KIME_SECTION_MANIFEST);
  const SectionInfo* weights = m.section(KIME_SECTION_WEIGHTS_CPU);
  if (!manifest || !weights)
    return fail(std::string("a ") + KIME_SECTION_MANIFEST + " and a " + KIME_SECTION_WEIGHTS_CPU +
                " section are required");
  m.weightData = reinterpret_cast<const float*>(m.map + weights->offset);
  m.weightBytes = weights->size;
  try {
    readManifest(std::string(reinterpret_cast<const char*>(m.map + manifest->offset), manifest->size), m);
  } catch (const Fail& f) {
    return fail("bad manifest: " + f.message);
  } catch (const std::exception& e) {
    return fail(std::string("bad manifest: ") + e.what());
  }
  return std::nullopt;
}

// The `size` bytes of `fd` in anonymous memory, read-only once read (MAP_FAILED, errno set, on
// failure). A MAP_PRIVATE file mapping would show later writes to the file in the pages not yet
// touched: a signature checked on it could be undone before the code is loaded.
void* readPrivately(int fd, size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return p;
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd, static_cast<uint8_t*>(p) + got, size - got, off_t(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int why = n < 0 ? errno : EIO;  // shorter than fstat said: changed while read
      munmap(p, size);
      errno = why;
      return MAP_FAILED;
    }
    got += size_t(n);
  }
  mprotect(p, size, PROT_READ);
  return p;
}

}  // namespace

std::optional<Error> loadArtifact(const std::string& path, ModelImpl& m) {
  auto fail = [&](const std::string& msg) { return std::optional<Error>(Error::unsupported(path + ": " + msg)); };
  m.path = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st{};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  if (size_t(st.st_size) < sizeof(kime_file_header)) {
    ::close(fd);
    return fail("not a kime artifact (" + std::to_string(st.st_size) + " bytes is shorter than a header)");
  }
  void* p = m.trusted.empty() ? mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                              : readPrivately(fd, size_t(st.st_size));
  ::close(fd);
  if (p == MAP_FAILED) return fail(std::string("cannot map: ") + std::strerror(errno));
  m.map = static_cast<const uint8_t*>(p);
  m.mapSize = size_t(st.st_size);
  m.ownsMap = true;
  return checkArtifact(m);
}

std::optional<Error> loadArtifactMemory(const void* data, size_t size, const std::string& name, ModelImpl& m) {
  m.path = name;
  auto fail = [&](const std::string& msg) { return std::optional<Error>(Error::unsupported(name + ": " + msg)); };
  if (!data) return fail("no buffer (NULL)");
  if (reinterpret_cast<uintptr_t>(data) % KIME_MEMORY_ALIGN)
    return fail("the buffer at " + hexAddress(data) + " is not " + std::to_string(KIME_MEMORY_ALIGN) +
                "-byte aligned (its sections are used in place)");
  m.map = static_cast<const uint8_t*>(data);
  m.mapSize = size;
  m.ownsMap = false;  // the caller's, kept alive by the caller
  return checkArtifact(m);
}

}  // namespace kime
