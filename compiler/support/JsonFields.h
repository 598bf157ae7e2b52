// Small helpers for reading JSON objects field by field, with messages that say where.
#ifndef KIME_SUPPORT_JSONFIELDS_H
#define KIME_SUPPORT_JSONFIELDS_H

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "support/Diagnostic.h"

namespace kime::json {

using Json = nlohmann::json;

// Parses `text`; a syntax error becomes "SOURCE: bad JSON: ..." with nlohmann's line/column.
Json parse(const std::string& text, const std::string& source);

// Reads a whole file; a missing or unreadable one becomes a CompileError naming it.
std::string readFile(const std::string& path);

// Writes `data` to `path` through a temporary file and a rename, so an error never leaves a
// half-written file and an existing file is only replaced by a complete one.
void writeFileAtomic(const std::string& path, const std::string& data);
// The same for a file made of `pieces`, written one after the other.
void writeFileAtomic(const std::string& path, const std::vector<std::string_view>& pieces);

// `where` names the object in messages, e.g. "graph.json: node 3 (linear \"q\")".
void requireObject(const Json& j, const std::string& where);
// Refuses any key of `j` not in `known`.
void onlyKeys(const Json& j, const std::set<std::string>& known, const std::string& where);
const Json& field(const Json& j, const char* key, const std::string& where);
std::string stringField(const Json& j, const char* key, const std::string& where);
int64_t intField(const Json& j, const char* key, const std::string& where);
double numberField(const Json& j, const char* key, const std::string& where);
int64_t asInt(const Json& v, const std::string& what);

}  // namespace kime::json

#endif  // KIME_SUPPORT_JSONFIELDS_H
