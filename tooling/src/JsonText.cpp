#include "kime/tooling/JsonText.h"

#include <stdexcept>

namespace kime::tooling {

using Json = nlohmann::json;

Json parseJson(const std::string& text, const std::string& source) {
  // The last key seen, to name the field of a value the parser cannot hold (nlohmann's
  // out_of_range 406: a number past a double's range).
  std::string key;
  auto track = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key && parsed.is_string()) key = parsed.get<std::string>();
    return true;
  };
  try {
    return Json::parse(text, track);
  } catch (const Json::exception& e) {
    // nlohmann's text starts with "[json.exception.parse_error.101] "; keep what follows.
    std::string m = e.what();
    if (auto p = m.find("] "); p != std::string::npos) m = m.substr(p + 2);
    if (e.id == 406 && !key.empty()) m = "field \"" + key + "\": " + m;
    throw std::runtime_error(source + ": bad JSON: " + m);
  }
}

}  // namespace kime::tooling
