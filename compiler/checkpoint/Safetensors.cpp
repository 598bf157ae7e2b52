#include "Safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "support/JsonFields.h"
#include "support/MappedFile.h"

namespace kime {

const char* safetensorsDType(shapes::DType t) {
  switch (t) {
    case shapes::DType::F32:
      return "F32";
    case shapes::DType::F16:
      return "F16";
    case shapes::DType::BF16:
      return "BF16";
    case shapes::DType::U32:
      return "U32";
    case shapes::DType::U8:
      return "U8";
  }
  return "?";
}

size_t dtypeSize(shapes::DType t) {
  switch (t) {
    case shapes::DType::F32:
    case shapes::DType::U32:
      return 4;
    case shapes::DType::F16:
    case shapes::DType::BF16:
      return 2;
    case shapes::DType::U8:
      return 1;
  }
  return 0;
}

size_t TensorView::count() const {
  size_t n = 1;
  for (int64_t d : shape) n *= size_t(d);
  return n;
}

namespace {

// The dtype's branch taken once per tensor, not per element.
template <typename T>
void widenElements(const TensorView& t, T* out) {
  const size_t n = t.count();
  switch (t.dtype) {
    case shapes::DType::F32:
      for (size_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, t.data + 4 * i, 4);
        out[i] = T(f);
      }
      return;
    case shapes::DType::BF16:
      for (size_t i = 0; i < n; ++i) {
        const uint32_t b = uint32_t(t.data[2 * i]) << 16 | uint32_t(t.data[2 * i + 1]) << 24;
        float f;
        std::memcpy(&f, &b, 4);
        out[i] = T(f);
      }
      return;
    case shapes::DType::F16:
      for (size_t i = 0; i < n; ++i) {
        _Float16 h;
        std::memcpy(&h, t.data + 2 * i, 2);
        out[i] = T(static_cast<float>(h));
      }
      return;
    case shapes::DType::U32:
    case shapes::DType::U8:
      break;
  }
  throw CompileError("internal: widening tensor \"" + t.name + "\" of dtype " + safetensorsDType(t.dtype));
}

}  // namespace

void TensorView::widen(float* out) const { widenElements(*this, out); }
void TensorView::widen(double* out) const { widenElements(*this, out); }

std::vector<float> TensorView::toFloat() const {
  std::vector<float> out(count());
  widen(out.data());
  return out;
}

std::vector<double> TensorView::toDouble() const {
  std::vector<double> out(count());
  widen(out.data());
  return out;
}

std::unique_ptr<Checkpoint> Checkpoint::open(const std::string& path) {
  std::unique_ptr<Checkpoint> c(new Checkpoint());
  c->source_ = path;
  c->file_ = std::make_unique<MappedFile>(path);
  c->bytes_ = c->file_->bytes();
  c->parse(reinterpret_cast<const uint8_t*>(c->bytes_.data()), c->bytes_.size());
  return c;
}

std::unique_ptr<Checkpoint> Checkpoint::fromBytes(const uint8_t* data, size_t size, const std::string& source) {
  std::unique_ptr<Checkpoint> c(new Checkpoint());
  c->source_ = source;
  c->bytes_ = {reinterpret_cast<const char*>(data), size};
  c->parse(data, size);
  return c;
}

Checkpoint::~Checkpoint() = default;

const TensorView* Checkpoint::find(const std::string& name) const {
  for (const TensorView& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

[[noreturn]] void failAt(const std::string& source, const std::string& m) { throw CompileError(source + ": " + m); }

// One header entry: its dtype, shape and data bytes, checked against the `dataBytes` at `base`.
TensorView readEntry(const std::string& source, const std::string& name, const json::Json& e, const uint8_t* base,
                     size_t dataBytes) {
  auto fail = [&](const std::string& m) { failAt(source, m); };
  const std::string where = "tensor \"" + name + "\"";
  if (!e.is_object()) fail(where + ": must be an object");
  json::onlyKeys(e, {"dtype", "shape", "data_offsets"}, source + ": " + where);
  std::string dt = json::stringField(e, "dtype", source + ": " + where);
  TensorView t{name, shapes::DType::F32, {}, nullptr, 0};
  if (dt == "F32")
    t.dtype = shapes::DType::F32;
  else if (dt == "F16")
    t.dtype = shapes::DType::F16;
  else if (dt == "BF16")
    t.dtype = shapes::DType::BF16;
  else
    fail(where + ": unknown dtype \"" + dt + "\" (kime reads F32, F16 and BF16)");
  const json::Json& shape = json::field(e, "shape", source + ": " + where);
  if (!shape.is_array()) fail(where + ": shape must be an array");
  size_t count = 1;
  for (const json::Json& d : shape) {
    if (!d.is_number_unsigned()) fail(where + ": shape " + shape.dump() + " must hold sizes");
    uint64_t v = d.get<uint64_t>();
    if (v > (uint64_t(1) << 40) || (v && count > (uint64_t(1) << 40) / v))
      fail(where + ": shape " + shape.dump() + " is too large");
    count *= size_t(v);
    t.shape.push_back(int64_t(v));
  }
  const json::Json& off = json::field(e, "data_offsets", source + ": " + where);
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    fail(where + ": data_offsets must be two byte offsets, not " + off.dump());
  uint64_t b = off[0].get<uint64_t>(), en = off[1].get<uint64_t>();
  if (en < b) fail(where + ": data_offsets " + off.dump() + " end before they start");
  if (en > dataBytes)
    fail(where + ": data_offsets " + off.dump() + " end past the " + std::to_string(dataBytes) +
         " data bytes of the file");
  size_t want = count * dtypeSize(t.dtype);
  if (en - b != want)
    fail(where + ": shape " + shape.dump() + " " + dt + " needs " + std::to_string(want) + " bytes but data_offsets " +
         off.dump() + " span " + std::to_string(en - b));
  t.data = base + b;
  t.bytes = size_t(en - b);
  return t;
}

// No two tensors share a byte. Sorted by start, a range overlaps an earlier one exactly when it
// starts before the furthest end seen so far. Empty ranges hold no bytes and overlap nothing.
void checkDisjoint(const std::string& source, const std::vector<TensorView>& tensors, const uint8_t* base) {
  struct Range {
    size_t begin, end;
    const std::string* name;
  };
  std::vector<Range> ranges;
  for (const TensorView& t : tensors)
    ranges.push_back({size_t(t.data - base), size_t(t.data - base) + t.bytes, &t.name});
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  const Range* furthest = nullptr;
  for (const Range& r : ranges) {
    if (r.begin == r.end) continue;
    if (furthest && r.begin < furthest->end)
      failAt(source, "tensors \"" + *furthest->name + "\" and \"" + *r.name + "\" overlap (bytes " +
                         std::to_string(furthest->begin) + ".." + std::to_string(furthest->end) + " and " +
                         std::to_string(r.begin) + ".." + std::to_string(r.end) + ")");
    if (!furthest || r.end > furthest->end) furthest = &r;
  }
}

}  // namespace

void Checkpoint::parse(const uint8_t* data, size_t size) {
  auto fail = [&](const std::string& m) { failAt(source_, m); };
  if (size < 8) fail("file of " + std::to_string(size) + " bytes is too short for a safetensors header");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | data[i];
  if (n > size - 8)
    fail("header of " + std::to_string(n) + " bytes is past the end of the file (" + std::to_string(size) + " bytes)");
  const std::string header(reinterpret_cast<const char*>(data + 8), size_t(n));
  json::Json j = json::parse(header, source_ + ": header");
  if (!j.is_object()) fail("header must be a JSON object");
  const uint8_t* base = data + 8 + n;
  const size_t dataBytes = size - 8 - size_t(n);
  for (const auto& [name, e] : j.items()) {
    if (name != "__metadata__") {
      tensors_.push_back(readEntry(source_, name, e, base, dataBytes));
      continue;
    }
    if (!e.is_object()) fail("__metadata__ must be an object");
    for (const auto& [k, v] : e.items()) {
      if (!v.is_string()) fail("__metadata__ \"" + k + "\" must be a string");
      metadata_[k] = v.get<std::string>();
    }
  }
  checkDisjoint(source_, tensors_, base);
}

static std::string shapeText(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

void Checkpoint::checkAgainst(const Graph& g) const {
  for (const WeightDecl& w : g.weights) {
    const TensorView* t = find(w.name);
    if (!t) throw CompileError(source_ + ": weight \"" + w.name + "\" of the graph is missing");
    if (t->shape != w.shape)
      throw CompileError(source_ + ": weight \"" + w.name + "\" is " + shapeText(t->shape) +
                         " but the graph declares " + shapeText(w.shape));
    if (t->dtype != w.dtype)
      throw CompileError(source_ + ": weight \"" + w.name + "\" is " + shapes::str(t->dtype) +
                         " but the graph declares " + shapes::str(w.dtype));
  }
}

void writeSafetensors(const std::string& path, const std::vector<TensorData>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json h = nlohmann::ordered_json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  size_t offset = 0;
  for (const TensorData& t : tensors) {
    size_t bytes = t.values.size() * dtypeSize(t.dtype);
    h[t.name] = {{"dtype", safetensorsDType(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string header = h.dump();
  header.append((8 - header.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = char((uint64_t(header.size()) >> (8 * i)) & 0xff);
  out += header;
  out.reserve(out.size() + offset);
  for (const TensorData& t : tensors) {
    for (float v : t.values) {
      // Rounded once, the value is exact in the dtype: its bits are the top half of the f32
      // (bf16) or the f16 conversion.
      float r = shapes::roundTo(t.dtype, v);
      uint32_t b;
      std::memcpy(&b, &r, 4);
      if (t.dtype == shapes::DType::F32) {
        out.append(reinterpret_cast<const char*>(&b), 4);
      } else if (t.dtype == shapes::DType::BF16) {
        uint16_t h = uint16_t(b >> 16);
        out.append(reinterpret_cast<const char*>(&h), 2);
      } else {
        _Float16 h = static_cast<_Float16>(r);
        out.append(reinterpret_cast<const char*>(&h), 2);
      }
    }
  }
  json::writeFileAtomic(path, out);
}

}  // namespace kime
