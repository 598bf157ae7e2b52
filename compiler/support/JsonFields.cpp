#include "support/JsonFields.h"

#include <unistd.h>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kime/tooling/JsonText.h"

namespace kime::json {

Json parse(const std::string& text, const std::string& source) {
  try {
    return tooling::parseJson(text, source);
  } catch (const std::runtime_error& e) {
    throw CompileError(e.what());
  }
}

// A regular file is read in one go into storage of its size (an artifact is tens of MB: a
// growing buffer would copy it several times); a pipe or device, as a stream.
std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CompileError(path + ": cannot open: " + std::strerror(errno));
  std::error_code ec;
  const bool regular = std::filesystem::is_regular_file(path, ec);
  const uintmax_t size = regular ? std::filesystem::file_size(path, ec) : 0;
  if (regular && !ec) {
    std::string data(size, '\0');
    in.read(data.data(), std::streamsize(size));
    if (in.bad() || size_t(in.gcount()) != size)
      throw CompileError(path + ": cannot read: " + (in.bad() ? std::strerror(errno) : "it shrank while read"));
    return data;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw CompileError(path + ": cannot read: " + std::strerror(errno));
  return ss.str();
}

void writeFileAtomic(const std::string& path, const std::string& data) {
  writeFileAtomic(path, std::vector<std::string_view>{data});
}

void writeFileAtomic(const std::string& path, const std::vector<std::string_view>& pieces) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw CompileError(path + ": cannot write: " + std::strerror(errno));
  bool ok = true;
  for (std::string_view p : pieces) ok = ok && std::fwrite(p.data(), 1, p.size(), f) == p.size();
  ok = (std::fflush(f) == 0) && ok;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    throw CompileError(path + ": cannot write: " + std::strerror(err));
  }
}

void requireObject(const Json& j, const std::string& where) {
  if (!j.is_object()) throw CompileError(where + ": must be a JSON object, not " + j.type_name());
}

void onlyKeys(const Json& j, const std::set<std::string>& known, const std::string& where) {
  for (const auto& [k, v] : j.items())
    if (!known.count(k)) throw CompileError(where + ": unknown field \"" + k + "\"");
}

const Json& field(const Json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end()) throw CompileError(where + ": field \"" + key + "\" is missing");
  return *it;
}

std::string stringField(const Json& j, const char* key, const std::string& where) {
  const Json& v = field(j, key, where);
  if (!v.is_string()) throw CompileError(where + ": field \"" + key + "\" must be a string, not " + v.type_name());
  return v.get<std::string>();
}

int64_t asInt(const Json& v, const std::string& what) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == std::floor(d) && std::fabs(d) < 9e15) return static_cast<int64_t>(d);
  }
  throw CompileError(what + " must be an integer, not " + v.dump());
}

int64_t intField(const Json& j, const char* key, const std::string& where) {
  return asInt(field(j, key, where), where + ": field \"" + key + "\"");
}

double numberField(const Json& j, const char* key, const std::string& where) {
  const Json& v = field(j, key, where);
  if (!v.is_number()) throw CompileError(where + ": field \"" + key + "\" must be a number, not " + v.dump());
  return v.get<double>();
}

}  // namespace kime::json
