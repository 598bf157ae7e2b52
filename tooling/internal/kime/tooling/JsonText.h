// JSON text parsed with messages that name the source (and, for a value the parser cannot hold,
// the field): shared by the batch files and the compiler's readers.
#ifndef KIME_TOOLING_JSONTEXT_H
#define KIME_TOOLING_JSONTEXT_H

#include <nlohmann/json.hpp>
#include <string>

namespace kime::tooling {

// Parses `text`; malformed text, or a number past a double's range, throws std::runtime_error
// "SOURCE: bad JSON: ..." (with `field "NAME": ` before an out-of-range value).
nlohmann::json parseJson(const std::string& text, const std::string& source);

}  // namespace kime::tooling

#endif  // KIME_TOOLING_JSONTEXT_H
