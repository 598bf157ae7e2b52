// A small command-line reader for the tools that must not link LLVM (kime-run, kime-graph):
// positional arguments and --flag / --flag=value / --flag value / -o value options.
#ifndef KIME_TOOLS_ARGS_H
#define KIME_TOOLS_ARGS_H

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kime::tools {

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;                // "--x" -> value ("" for a bare flag); the last one given
  std::map<std::string, std::vector<std::string>> repeated;  // "--x" -> every value given, in order

  // `withValue` lists the options that take a value; `flags` the bare ones. Anything else that
  // starts with "-" is refused, naming it.
  static Args parse(int argc, char** argv, const std::set<std::string>& withValue, const std::set<std::string>& flags) {
    Args a;
    for (int i = 1; i < argc; ++i) {
      std::string s = argv[i];
      std::string key = s, value;
      bool inlineValue = false;
      if (auto eq = s.find('='); eq != std::string::npos && s[0] == '-')
        key = s.substr(0, eq), value = s.substr(eq + 1), inlineValue = true;
      if (withValue.count(key)) {
        if (!inlineValue) {
          if (i + 1 >= argc) throw std::runtime_error(key + " needs a value");
          value = argv[++i];
        }
      } else if (flags.count(key) && !inlineValue) {
      } else if (s.size() > 1 && s[0] == '-') {
        throw std::runtime_error("unknown option " + s);
      } else {
        a.positional.push_back(s);
        continue;
      }
      a.options[key] = value;
      a.repeated[key].push_back(value);
    }
    return a;
  }
  bool has(const std::string& k) const { return options.count(k) > 0; }
  std::vector<std::string> all(const std::string& k) const {
    auto it = repeated.find(k);
    return it == repeated.end() ? std::vector<std::string>{} : it->second;
  }
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = options.find(k);
    return it == options.end() ? def : it->second;
  }
};

}  // namespace kime::tools

#endif  // KIME_TOOLS_ARGS_H
