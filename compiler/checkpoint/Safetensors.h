// safetensors checkpoints: a mapped, checked reader and a writer.
//
// The reader maps the file and hands out views into it (no copy). It refuses, naming the file
// and the tensor: a header length past the file, a header that is not JSON, an unknown dtype,
// a byte range that does not match shape x dtype, ranges outside the data or overlapping.
#ifndef KIME_CHECKPOINT_SAFETENSORS_H
#define KIME_CHECKPOINT_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graph/Graph.h"

namespace kime {

class MappedFile;

struct TensorView {
  std::string name;
  shapes::DType dtype;
  std::vector<int64_t> shape;
  const uint8_t* data;  // little endian, row major, inside the mapping
  size_t bytes;

  size_t count() const;
  // Each element widened to f32 (f16, bf16 exactly) or f64: into out[0, count()), or a new vector.
  // Floating-point dtypes only.
  void widen(float* out) const;
  void widen(double* out) const;
  std::vector<float> toFloat() const;
  std::vector<double> toDouble() const;
};

class Checkpoint {
 public:
  // Maps and checks `path`; throws CompileError.
  static std::unique_ptr<Checkpoint> open(const std::string& path);
  // Checks an in-memory image (for tests); `source` names it in messages. The bytes must outlive
  // the checkpoint.
  static std::unique_ptr<Checkpoint> fromBytes(const uint8_t* data, size_t size, const std::string& source);
  ~Checkpoint();
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  const std::string& source() const { return source_; }
  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The whole checkpoint as read (what a hash of its content reads).
  std::string_view bytes() const { return bytes_; }

  // Every weight the graph declares must be here with the same shape and dtype.
  void checkAgainst(const Graph& g) const;

 private:
  Checkpoint() = default;
  void parse(const uint8_t* data, size_t size);

  std::string source_;
  std::unique_ptr<MappedFile> file_;  // none for fromBytes
  std::string_view bytes_;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// One tensor to write: values in f32, stored as `dtype` (rounded to nearest even).
struct TensorData {
  std::string name;
  shapes::DType dtype;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// Writes a safetensors file atomically (a temporary file renamed into place).
void writeSafetensors(const std::string& path, const std::vector<TensorData>& tensors,
                      const std::map<std::string, std::string>& metadata);

// The safetensors spelling of a dtype ("F32", "F16", "BF16") and its element size.
const char* safetensorsDType(shapes::DType t);
size_t dtypeSize(shapes::DType t);

}  // namespace kime

#endif  // KIME_CHECKPOINT_SAFETENSORS_H
